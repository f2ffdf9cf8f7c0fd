"""``toolproof traces import``: production traces into a redacted replay suite."""

from __future__ import annotations

import getpass
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from toolproof.cli._trust import CONFIG, load_user_config
from toolproof.errors import UserError

if TYPE_CHECKING:
    from toolproof.traces import Selection

traces_app = typer.Typer(
    name="traces",
    help="From production: import traces as a redacted replay suite, compare a replay with "
    "production, promote reviewed cases.",
    no_args_is_help=True,
)


@traces_app.command("import")
def import_command(
    sources: list[Path] | None = typer.Argument(
        None,
        help="OTLP/JSON files or folders (.gz too; spans and logs), OTLP/protobuf bodies (.pb; "
        "spans and logs), protobuf MessageToJson or ConsoleSpanExporter output, or a Langfuse "
        "blob export (JSONL).",
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help="The folder to write."),
    langfuse: str | None = typer.Option(
        None,
        "--langfuse",
        help="Read observations from this Langfuse server's public API (keys from "
        "LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY, never written).",
    ),
    label: str | None = typer.Option(
        None, "--label", help="Production's target is prod:LABEL (default: today's date)."
    ),
    tools: Path | None = typer.Option(
        None, "--tools", help="Tool definitions for traces that carry none (a tools file)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show what would be imported and redacted; write nothing."
    ),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out folder."),
    since: str | None = typer.Option(
        None, "--since", help="Only spans starting at or after this time (ISO 8601)."
    ),
    until: str | None = typer.Option(
        None, "--until", help="Only spans starting before this time (ISO 8601)."
    ),
    only_feedback: str | None = typer.Option(
        None, "--only-feedback", help="'negative': only thumbs-down and escalated traces."
    ),
    sample: str | None = typer.Option(
        None, "--sample", help="Keep this share of replay cases, stratified by tool, e.g. 5%."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of --sample."),
    dedup: bool = typer.Option(
        False, "--dedup", help="Drop replay cases whose normalised conversation repeats."
    ),
    dedup_similar: float | None = typer.Option(
        None,
        "--dedup-similar",
        help="Also drop replay cases whose user turns mean the same as a kept case's with the "
        "same tools: sentence embeddings at least this cosine similarity, e.g. 0.95 (needs the "
        "semantic extra).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    config: Path | None = CONFIG,
) -> None:
    """Import traces: one replay case per chat span, production's calls as records."""
    from toolproof.traces import redactor_from_config

    if out is None and not dry_run:
        raise UserError("give --out DIR (or --dry-run to see what would be written)")
    name = label or datetime.now(UTC).strftime("%Y-%m-%d")
    if not all(c.isalnum() or c in "-_." for c in name):
        raise UserError(f"--label {name!r}: letters, digits, '-', '_' and '.' only")
    loaded = load_user_config(config)
    redactor = redactor_from_config(
        loaded.redact if loaded is not None else None, loaded.source if loaded else "config"
    )
    tool_list = None
    if tools is not None:
        from toolproof.suite import load_tools_file

        tool_list = load_tools_file(tools)
    selection = _selection(since, until, only_feedback, sample, seed, dedup, dedup_similar)
    if not sources and langfuse is None:
        raise UserError("give trace files or folders, or --langfuse URL")
    with tempfile.TemporaryDirectory(prefix="toolproof-langfuse-") as tmp:
        paths = list(sources or [])
        if langfuse is not None:
            from toolproof.traces._langfuse import fetch_observations

            fetched = Path(tmp) / "langfuse-observations.jsonl"
            n = fetch_observations(langfuse, fetched, from_time=since, to_time=until)
            typer.echo(f"read {n} observation(s) from the Langfuse API", err=True)
            paths.append(fetched)
        report = _run_import(
            paths, out, dry_run, name, redactor, tool_list, tools, force, selection
        )
    _print(report, redactor, as_json, dry_run)


def _run_import(
    paths: list[Path], out: Path | None, dry_run: bool, name: str, redactor: Any,
    tool_list: Any, tools: Path | None, force: bool, selection: Selection,
) -> Any:  # fmt: skip
    from toolproof.traces import import_traces

    return import_traces(
        paths,
        None if dry_run else out,
        selection=selection,
        label=name,
        redactor=redactor,
        tools_file=tool_list,
        tools_source=str(tools) if tools else None,
        force=force,
    )


def _print(report: Any, redactor: Any, as_json: bool, dry_run: bool) -> None:
    data = report.as_json(redactor)
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from toolproof.traces._render import render_import

    typer.echo(render_import(data, dry_run=dry_run))


def _when(value: str | None, flag: str) -> datetime | None:

    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(
            f"{flag} {value!r}: give an ISO 8601 time, e.g. 2026-12-01T00:00Z"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _selection(
    since: str | None, until: str | None, only_feedback: str | None, sample: str | None,
    seed: int, dedup: bool, similar: float | None = None,
) -> Selection:  # fmt: skip
    from toolproof.traces import Selection

    if only_feedback not in (None, "negative"):
        raise UserError(f"--only-feedback {only_feedback!r}: the one choice is 'negative'")
    if similar is not None and not 0 < similar <= 1:
        raise UserError(f"--dedup-similar {similar}: give a cosine similarity in (0, 1], e.g. 0.95")
    share = None
    if sample is not None:
        text = sample.strip()
        try:
            share = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            share = -1.0
        if not 0 < share <= 1:
            raise UserError(f"--sample {sample!r}: give a share such as 5% or 0.05")
    return Selection(
        since=_when(since, "--since"), until=_when(until, "--until"),
        only_negative=only_feedback == "negative", sample=share, seed=seed, dedup=dedup,
        similar=similar,
    )  # fmt: skip


@traces_app.command("promote")
def promote_command(
    folder: Path = typer.Argument(..., help="The imported folder (traces import -o DIR)."),
    into: Path = typer.Option(
        ...,
        "--into",
        help="A cases file (.jsonl) of your golden suite, or its folder, made when missing "
        "(then FOLDER/production-cases.jsonl); list it in the suite's cases_from.",
    ),
    reviewer: str = typer.Option("", "--reviewer", help="Your name, kept with each review."),
    config: Path | None = CONFIG,
) -> None:
    """Review replay cases one by one and promote the ones you mark right or correct."""

    from toolproof.cli._console import console as console_
    from toolproof.traces import promote, redactor_from_config

    if not sys.stdin.isatty():
        raise UserError("traces promote asks questions: run it in a terminal")
    loaded = load_user_config(config)
    redactor = redactor_from_config(
        loaded.redact if loaded is not None else None, loaded.source if loaded else "config"
    )
    result = promote(
        folder,
        into,
        reviewer=reviewer or getpass.getuser(),
        console=console_(highlight=False),
        redactor=redactor,
    )
    typer.echo(
        f"promoted {result.promoted} case(s) into {result.into}; {result.wrong} marked wrong, "
        f"{result.skipped} skipped, {result.left} left to review"
    )


@traces_app.command("agreement")
def agreement_command(
    folder: Path = typer.Argument(..., help="The imported folder (traces import -o DIR)."),
    run: Path = typer.Argument(..., help="A run folder (or records file) of a replay of it."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: int = typer.Option(20, "--limit", min=0, help="Differing cases shown."),
) -> None:
    """Agreement of a replay with production: decision, tool, arguments, tool changes."""
    from toolproof.traces import agreement, render_agreement

    results = agreement(folder, run)
    if as_json:
        typer.echo(json.dumps([r.as_json() for r in results], indent=2, ensure_ascii=False))
    else:
        typer.echo(render_agreement(results, limit))


_WINDOW_HELP = (
    "An import folder, a run folder, 'last-gated' (the newest stored run whose gate passed) "
    "or store:SINCE..UNTIL (stored runs started in that range)."
)


def drift_command(
    baseline: str | None = typer.Option(None, "--baseline", help=_WINDOW_HELP),
    current: str | None = typer.Option(None, "--current", help=_WINDOW_HELP),
    store: str | None = typer.Option(
        None,
        "--store",
        help="History store for last-gated and store: windows (default: $TOOLPROOF_STORE, "
        "else .toolproof/history.db).",
        show_default=False,
    ),
    suite: str | None = typer.Option(
        None, "--suite", help="last-gated / store: windows: only runs of this suite (its name)."
    ),
    target: str | None = typer.Option(
        None, "--target", help="last-gated / store: windows: only this target's attempts."
    ),
    follow_file: Path | None = typer.Option(
        None, "--follow", help="Tail this growing OTLP/JSON Lines file instead (error rate)."
    ),
    window: str = typer.Option("5m", "--window", help="--follow: the window, e.g. 5m."),
    once: bool = typer.Option(False, "--once", help="--follow: stop at the end of the file."),
    max_windows: int | None = typer.Option(
        None, "--max-windows", min=1, help="--follow: stop after this many windows."
    ),
    threshold: float = typer.Option(
        0.01, "--threshold", min=0.0, max=1.0, help="tool_call_error_rate alert threshold."
    ),
    alpha: float = typer.Option(
        0.01, "--alpha", min=0.0, max=1.0, help="Selection alert: chi-square p below this..."
    ),
    max_js: float = typer.Option(
        0.1, "--max-js", min=0.0, max=1.0, help="...and Jensen-Shannon distance at least this."
    ),
    fmt: str = typer.Option("terminal", "--format", "-f", help="terminal, markdown or json."),
) -> None:
    """Compare two windows: tool selection (no call included) and tool_call_error_rate.

    Exit 1 when an alert fires, 0 otherwise.
    """
    from toolproof.traces import drift, render_drift

    if fmt not in ("terminal", "markdown", "json"):
        raise UserError(f"--format {fmt!r}: give terminal, markdown or json")
    if follow_file is not None:
        _follow(follow_file, window, threshold, once, max_windows)
        return
    if baseline is None or current is None:
        raise UserError("give --baseline and --current (or --follow FILE)")
    windows = [_window(w, store, suite, target) for w in (baseline, current)]
    result = drift(windows[0], windows[1], threshold=threshold, alpha=alpha, max_js=max_js)
    if fmt == "json":
        typer.echo(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
    else:
        typer.echo(render_drift(result, fmt))
    if result.alerts:
        raise typer.Exit(1)


def _window(spec: str, store: str | None, suite: str | None, target: str | None) -> Any:
    from toolproof.traces import read_window
    from toolproof.traces._store_window import is_store_window, read_store_window

    if is_store_window(spec):
        return read_store_window(spec, store=store, suite=suite, target=target)
    return read_window(Path(spec))


def _follow(path: Path, window: str, threshold: float, once: bool, max_windows: int | None) -> None:
    from toolproof._shared.visible import visible
    from toolproof.traces import Redactor
    from toolproof.traces._follow import follow, parse_window
    from toolproof.traces._read import Problems

    problems = Problems()  # a long follow of a damaged file: counted, not all held
    told = 0
    redactor = Redactor()

    def tell() -> None:  # skipped input, on stderr as it is met: the first 20, then a count
        nonlocal told
        for problem in problems[told:20]:
            shown = visible(redactor.text(problem.render(), "error messages"))
            typer.echo(f"skipped: {shown}", err=True)
        told = len(problems)

    def emit(result: Any) -> None:
        tell()
        typer.echo(result.render())

    results = follow(
        path,
        parse_window(window),
        threshold=threshold,
        wait=not once,
        max_windows=max_windows,
        emit=emit,
        problems=problems,
    )
    tell()
    if problems:
        total = sum(problems.counts.values())
        typer.echo(f"skipped: {total} line(s) or span(s) in all", err=True)
    if any(r.alert for r in results):
        typer.echo(f"ALERT: tool_call_error_rate above {threshold:.1%} in at least one window")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(traces_app)
    app.command("drift")(drift_command)

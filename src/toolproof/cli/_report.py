"""report and view: look at a run as a self-contained HTML file or in the browser."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from toolproof._shared.safe_io import save_report, unless_run_file
from toolproof.cli._trust import ALLOW_CODE, CONFIG, trust_for
from toolproof.errors import UserError

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation
    from toolproof.gate import GateResult

_REPORT_HELP = """Print a run's report, or write it as one self-contained HTML file (--html).

RUN is a run folder (its manifest names the suite) or a records file (then give
--suite). The HTML file loads nothing from the network: send it to a colleague."""

_VIEW_HELP = """Browse runs in the browser: runs list, run, case, two-run diff and trends.

Serves the history store (--store, else $TOOLPROOF_STORE, else
.toolproof/history.db) on 127.0.0.1 and prints the URL; with --runs DIR, the
run folders under DIR instead. Read-only.
Binding to another address needs --host and --allow-remote, and prints a warning:
the pages show raw requests and responses."""


def report(
    run: Path = typer.Argument(..., help="Run folder or records file."),
    suite: Optional[Path] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--suite", "-s", help="Suite (default: the one the run's manifest names)."
    ),
    html: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--html", help="Write the self-contained HTML report here."
    ),
    baseline: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--baseline", "-b", help="Gate against this run too (the decision is shown)."
    ),
    k: Optional[int] = typer.Option(None, "--k", min=1, help="k of pass@k and pass^k."),  # noqa: UP045
    otlp: Optional[Path] = typer.Option(  # noqa: UP045
        None,
        "--otlp",
        help="Write the verdicts as OpenTelemetry gen_ai.evaluation.result events "
        "(OTLP/JSON), linked to the production spans of imported cases.",
    ),
    config: Optional[Path] = CONFIG,  # noqa: UP045
    allow_code: bool = ALLOW_CODE,
) -> None:
    from toolproof.cli._console import console as console_
    from toolproof.evaluate import load_run
    from toolproof.report import render_terminal

    if html is not None:
        unless_run_file(html)  # refused before any work, not after it
    trust, _ = trust_for(config, allow_code)
    ev = load_run(run, suite=suite, k=k, trust=trust)
    base = load_run(baseline, suite=suite, k=k, trust=trust) if baseline is not None else None
    from toolproof.cli._gate import check_k

    check_k(ev, k, run)
    if base is not None and baseline is not None:
        check_k(base, k, baseline)
    if otlp is not None:
        _write_otlp(otlp, ev)
        if html is None:
            return
    if html is None:
        render_terminal(ev.summaries, console_())
        return
    size = write_html(html, ev, report_gate(ev, base))
    typer.echo(f"wrote {html} ({size:,} bytes)")


def _write_otlp(path: Path, ev: Evaluation) -> None:
    from toolproof.traces import evaluation_logs, provenance_ids

    folder = Path(ev.suite.source).parent if ev.suite.source else Path()
    ids = provenance_ids(folder)
    verdicts = [v for t in ev.targets.values() for v in t.verdicts]
    data = evaluation_logs(verdicts, ids)
    save_report(path, json.dumps(data, ensure_ascii=False) + "\n")  # located refusals, no links
    linked = sum(1 for v in verdicts if v.case_id in ids)
    typer.echo(
        f"wrote {path}: {len(verdicts)} gen_ai.evaluation.result event(s), "
        f"{linked} linked to a production span"
    )


def report_gate(ev: Evaluation, base: Evaluation | None = None) -> GateResult:
    """The gate decision an HTML report shows: ``run_gate``'s, the same as ``toolproof gate``
    makes with its default options (the suite's calibration records included)."""
    from toolproof.gate import run_gate

    return run_gate(ev, base)


def write_html(path: Path, ev: object, gate: object) -> int:
    """Write the HTML report of an evaluation; the number of bytes written."""
    from toolproof.evaluate import Evaluation
    from toolproof.gate import GateResult
    from toolproof.report import html_report

    assert isinstance(ev, Evaluation) and isinstance(gate, GateResult | None)
    data = html_report(ev, gate).encode("utf-8")

    save_report(path, data)
    return len(data)


def view(
    runs: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--runs", help="View the run folders under this folder instead of the store."
    ),
    store: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--store",
        help="The history store: a file, sqlite:///PATH or postgresql://… "
        "(default: $TOOLPROOF_STORE, else .toolproof/history.db).",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port (0: any free one)."),
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Allow --host other than 127.0.0.1 (anyone who can reach it sees every raw exchange).",
    ),
    page_size: int = typer.Option(50, "--page-size", min=1, max=1000, help="Cases per page."),
    suite: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--suite", "-s", help="Suite of runs whose manifest names none, or one not found."
    ),
    config: Optional[Path] = CONFIG,  # noqa: UP045
    allow_code: bool = ALLOW_CODE,
) -> None:
    from toolproof.web import serve

    trust, _ = trust_for(config, allow_code)
    if host not in ("127.0.0.1", "localhost") and not allow_remote:
        raise UserError(f"--host {host}: binding beyond 127.0.0.1 needs --allow-remote")
    if host not in ("127.0.0.1", "localhost"):
        print(
            f"warning: serving on {host}: anyone who can reach it sees every run, "
            "with raw requests and responses; there is no login",
            file=sys.stderr,
        )
    if suite is not None and runs is None:
        raise UserError("--suite goes with --runs: the store names each run's suite")
    if runs is not None and not runs.is_dir():  # as a missing store is: nothing to serve
        what = "no such folder" if not runs.exists() else "not a folder"
        raise UserError(f"--runs {runs}: {what}; give the folder that holds the run folders")
    serve(runs, store=store, host=host, port=port, page_size=page_size, suite=suite, trust=trust)


def register(app: typer.Typer) -> None:
    app.command("report", help=_REPORT_HELP)(report)
    app.command("view", help=_VIEW_HELP)(view)

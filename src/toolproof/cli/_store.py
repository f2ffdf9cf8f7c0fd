"""history (import, list, prune) and merge; the --store/--no-store options of run, score, gate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from toolproof.cli._exit import ExitCode
from toolproof.cli._trust import ALLOW_CODE, CONFIG, trust_for
from toolproof.errors import UserError

_STORE_HELP = (
    "History store: a file, sqlite:///PATH or postgresql://… (default: $TOOLPROOF_STORE, "
    "else .toolproof/history.db; off: none)."
)
#: Shared by run, score and gate.
STORE = typer.Option(None, "--store", help=_STORE_HELP, show_default=False)
NO_STORE = typer.Option(False, "--no-store", help="Do not write the history store.")

history = typer.Typer(
    name="history",
    help="The history store: import run folders, list runs, prune old ones.",
    no_args_is_help=True,
)


@history.command("import")
def import_command(
    paths: list[Path] = typer.Argument(..., help="Run folders, or folders holding run folders."),
    suite: Optional[Path] = typer.Option(  # noqa: UP045 - typer needs Optional here
        None, "--suite", "-s", help="Suite (default: the one each manifest names)."
    ),
    store: Optional[str] = typer.Option(None, "--store", help=_STORE_HELP, show_default=False),  # noqa: UP045
    allow_code: bool = ALLOW_CODE,
    config: Optional[Path] = CONFIG,  # noqa: UP045
) -> None:
    """Load run folders into the store. Safe to repeat: a run imported again is replaced."""

    from toolproof.store import find_run_folders, open_store

    trust, _ = trust_for(config, allow_code)
    folders = find_run_folders(paths)
    failed = 0
    with open_store(store) as st:
        for folder in folders:
            start = time.perf_counter()
            try:
                done = st.import_run(folder, suite, trust)
            except UserError as exc:
                typer.echo(f"error: {folder}: {exc}", err=True)
                failed += 1
                continue
            typer.echo(
                f"imported {folder}: {done.attempts} attempts, {done.gates} new gate "
                f"decision(s) ({time.perf_counter() - start:.2f} s)"
            )
        where = st.location
    typer.echo(f"{len(folders) - failed} of {len(folders)} run(s) in {where}")
    if failed:
        raise typer.Exit(ExitCode.USAGE)


@history.command("list")
def list_command(
    suite: Optional[str] = typer.Option(None, "--suite", help="Only runs of this suite."),  # noqa: UP045
    target: Optional[str] = typer.Option(None, "--target", help="Only runs of this target."),  # noqa: UP045
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="How many runs."),
    offset: int = typer.Option(0, "--offset", min=0, help="Skip this many (newest first)."),
    store: Optional[str] = typer.Option(None, "--store", help=_STORE_HELP, show_default=False),  # noqa: UP045
) -> None:
    """List stored runs, newest first: strict pass per target and the latest gate decision."""
    from rich.markup import escape
    from rich.table import Table

    from toolproof.cli._console import console as console_
    from toolproof.store import open_store

    with open_store(store) as st:
        page = st.list_runs(suite=suite, target=target, limit=limit, offset=offset)
        where = st.location
    table = Table(title=f"{page.total} run(s) in {escape(where)}", title_justify="left")
    for col in ("id", "run", "started (UTC)", "suite", "target", "strict pass", "gate", "exit"):
        table.add_column(col, overflow="fold")
    for run in page.items:
        started = run.started_at.strftime("%Y-%m-%d %H:%M") if run.started_at else "?"
        gate = "-" if run.gate is None else ("pass" if run.gate.passed else "FAIL")
        for i, target_name in enumerate(run.targets or ["-"]):
            m = run.headline.get(target_name)
            figure = "-"
            if m is not None and m.value is not None:
                figure = f"{100 * m.value:.1f}% ({m.k}/{m.n})"
            first = i == 0
            table.add_row(
                str(run.id) if first else "",
                escape(run.run_id + (f" [{run.shard}]" if run.shard else "")) if first else "",
                started if first else "",
                escape(run.suite_name) if first else "",
                escape(target_name),
                figure,
                gate if first else "",
                ("-" if run.exit_code is None else str(run.exit_code)) if first else "",
            )
    console_().print(table)
    shown = offset + len(page.items)
    if shown < page.total:
        typer.echo(f"{page.total - shown} more: --offset {shown}")


@history.command("prune")
def prune_command(
    keep: str = typer.Option(..., "--keep", help="Keep runs newer than this: 90d, 12w, 48h."),
    store: Optional[str] = typer.Option(None, "--store", help=_STORE_HELP, show_default=False),  # noqa: UP045
) -> None:
    """Delete runs older than --keep from the store (run folders are left alone)."""
    from toolproof.store import open_store, parse_keep

    before = parse_keep(keep)
    with open_store(store) as st:
        n = st.prune(before)
        where = st.location
    typer.echo(f"pruned {n} run(s) started before {before:%Y-%m-%d %H:%M} UTC from {where}")


def merge(
    runs: list[Path] = typer.Argument(..., help="The shards' run folders."),
    out: Path = typer.Option(..., "--out", "-o", help="The merged run folder (new)."),
    partial: bool = typer.Option(False, "--partial", help="Allow missing shards."),
    store: Optional[str] = STORE,  # noqa: UP045
    no_store: bool = NO_STORE,
    allow_code: bool = ALLOW_CODE,
    config: Optional[Path] = CONFIG,  # noqa: UP045
) -> None:
    """Merge the run folders of a sharded run (--shard I/N) into one run folder."""
    from toolproof.run._shard import merge_runs
    from toolproof.store._hooks import store_merged

    trust, _ = trust_for(config, allow_code)
    merged = merge_runs(runs, out, partial=partial)
    n = merged.counts.get("records", 0)
    typer.echo(f"merged {len(runs)} shard(s) into {out} ({n} records)")
    store_merged(out, store, not no_store, trust)


def register(app: typer.Typer) -> None:
    app.add_typer(history)
    app.command("merge")(merge)

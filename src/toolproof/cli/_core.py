"""validate, score and schema: the offline commands."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from toolproof.cli._exit import ExitCode


def validate(suite: Path = typer.Argument(..., help="Suite directory or file.")) -> None:
    """Check a suite: schemas, tool names, expected values, case IDs, matchers."""
    from rich.console import Console

    from toolproof.suite import load_suite_checked

    loaded, errors = load_suite_checked(suite)
    if errors:
        for err in errors:
            typer.echo(f"error: {err}", err=True)
        typer.echo(f"{len(errors)} problem(s) in {loaded.suite.source}", err=True)
        raise typer.Exit(ExitCode.USAGE)
    s = loaded.suite
    Console().print(
        f"[green]ok[/green] suite '{s.name}': {len(s.cases)} cases, "
        f"{len(s.tools)} tools, no problems"
    )


def score(
    suite: Path = typer.Argument(..., help="Suite directory or file."),
    records: list[Path] = typer.Argument(
        ..., help="One or more records files (JSONL) or run folders."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON."),
    failures: bool = typer.Option(True, "--failures/--no-failures", help="List failing cases."),
) -> None:
    """Score recorded model responses offline, with no model calls."""
    from rich.console import Console

    from toolproof.evaluate import evaluate
    from toolproof.evaluate._evaluate import records_path
    from toolproof.report import render_terminal, summary_json
    from toolproof.suite import load_suite

    s = load_suite(suite)
    summaries = evaluate(s, [records_path(p) for p in records], keep_raw=False).summaries
    render_terminal(summaries, Console(), failures=failures)
    if json_out is not None:
        json_out.write_text(
            json.dumps(summary_json(summaries), indent=2, ensure_ascii=False) + "\n"
        )


def schema(
    out: Path | None = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
) -> None:
    """Print the JSON Schema of the suite format (for editor completion)."""
    from toolproof.suite import suite_json_schema

    text = json.dumps(suite_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command()(validate)
    app.command()(score)
    app.command()(schema)

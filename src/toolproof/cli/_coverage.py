"""``toolproof coverage SUITE``: what a suite's cases exercise, per tool."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from toolproof.cli._trust import CONFIG, trust_for


def _short(values: list[Any], limit: int = 6) -> str:
    shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:limit])
    return shown + (f", … (+{len(values) - limit})" if len(values) > limit else "")


def coverage(
    suite: Path = typer.Argument(..., help="Suite directory or file."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    config: Path | None = CONFIG,
) -> None:
    """Per tool: positive, no-call, clarification, confirmation and edge cases; required
    parameters never pinned; enum values never used."""
    from toolproof.report._escape import visible
    from toolproof.suite import load_suite_checked, suite_coverage

    trust, _ = trust_for(config, False)
    loaded, _errors = load_suite_checked(suite, trust, check_code=False)
    report = suite_coverage(loaded.suite)
    if as_json:
        typer.echo(json.dumps(asdict(report), ensure_ascii=False, indent=2, default=str))
        return
    width = max([len(visible(r.tool)) for r in report.tools] + [4])
    typer.echo(f"suite '{visible(report.suite)}': {report.cases} cases, per tool")
    head = f"{'tool':<{width}}  positive  no-call  clarify  confirm  edge"
    typer.echo(head)
    for r in report.tools:
        typer.echo(
            f"{visible(r.tool):<{width}}  {r.positive:>8}  {r.no_call:>7}  {r.clarify:>7}  "
            f"{r.confirm:>7}  {r.edge:>4}"
        )
    gaps = [r for r in report.tools if r.required_unpinned or r.enum_unused or not r.total]
    if gaps:
        typer.echo("")
    for r in gaps:
        if not r.total:
            typer.echo(f"{visible(r.tool)}: no case")
        if r.required_unpinned:
            names = ", ".join(visible(p) for p in r.required_unpinned)
            typer.echo(f"{visible(r.tool)}: required never pinned: {names}")
        for param, values in r.enum_unused.items():
            typer.echo(
                f"{visible(r.tool)}.{visible(param)}: enum values never used: "
                f"{visible(_short(values))}"
            )


def register(app: typer.Typer) -> None:
    app.command("coverage")(coverage)

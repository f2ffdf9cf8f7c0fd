"""``toolproof import``: public benchmarks as toolproof suites."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from toolproof.errors import UserError

import_app = typer.Typer(
    name="import",
    help="Import a public benchmark as toolproof suites.",
    no_args_is_help=True,
)


@import_app.command("bfcl")
def bfcl_command(
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write one suite per category."),
    data: Path | None = typer.Option(
        None,
        "--data",
        help="BFCL's data folder (BFCL_v4_*.json, possible_answer/). Default: the one in the "
        "installed bfcl-eval package.",
    ),
    category: list[str] = typer.Option(
        [], "--category", "-c", help="Only this category (repeatable), e.g. simple_python."
    ),
    profile: str = typer.Option(
        "bfcl",
        "--profile",
        help="The matcher profile the suites use: bfcl (compare as BFCL's checker) or "
        "strict (toolproof's default).",
    ),
    underscore_names: bool = typer.Option(
        False,
        "--underscore-names",
        help="Turn dots in function names into underscores (tools and expected calls), as "
        "BFCL does for providers that refuse a dot in a tool name.",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite suite files that exist."),
) -> None:
    """Write BFCL's categories as suites, one per category (multi-turn ones run BFCL's own
    classes from the installed bfcl-eval, with --allow-code)."""
    from toolproof.importers import import_bfcl, write_bfcl
    from toolproof.report._escape import visible

    if profile not in ("bfcl", "strict"):
        raise UserError(f"--profile: '{profile}' is not bfcl or strict")
    result = import_bfcl(data, category or None, profile, underscore_names)
    written = write_bfcl(result, out, force=force)
    for s, path in zip(result.suites, written, strict=True):
        typer.echo(f"{path}: {len(s.cases)} cases ({s.category.kind}, {s.category.language})")
    if any(s.category.kind == "multi_turn" for s in result.suites):
        typer.echo(
            "multi-turn suites run BFCL's classes from the installed bfcl-eval package "
            "(env/tools.py): run them with --allow-code"
        )
    for skip in result.categories_skipped:
        typer.echo(f"not imported: {visible(skip.where)}: {visible(skip.reason)}")
    for skip in result.skipped[:20]:
        typer.echo(f"skipped: {visible(skip.where)}: {visible(skip.reason)}", err=True)
    if len(result.skipped) > 20:
        typer.echo(f"skipped: {_rest(result.skipped[20:])}", err=True)
    # in the bfcl profile, BFCL's own type rule bounds the values kept; in strict, the schema
    why = "BFCL's type check refuses them" if profile == "bfcl" else "they break the tool's schema"
    for drop in result.dropped[:5]:
        typer.echo(f"values left out ({why}): {visible(drop.where)}: {visible(drop.reason)}")
    if len(result.dropped) > 5:
        typer.echo(f"values left out ({why}): {_rest(result.dropped[5:])}")
    total = sum(len(s.cases) for s in result.suites)
    typer.echo(
        f"{total} cases in {len(written)} suites; {len(result.skipped)} entries skipped; "
        f"{len(result.dropped)} cases with acceptable values left out ({why}); "
        f"{len(result.categories_skipped)} categories not imported"
    )


def _rest(skips: list[Any]) -> str:
    """The entries past those listed, counted per file (``where`` is FILE or FILE:LINE)."""
    from collections import Counter

    from toolproof.report._escape import visible

    files = Counter(re.sub(r":\d+$", "", s.where) for s in skips)
    per_file = ", ".join(f"{visible(f)} {n}" for f, n in files.items())
    return f"{len(skips)} more, not listed: {per_file}"


@import_app.command("tau2")
def tau2_command(
    checkout: Path | None = typer.Argument(
        None,
        help="A τ2-bench checkout (data/tau2/domains inside) or its data folder. Default: "
        "TAU2_DATA_DIR, else the checkout the installed tau2 package comes from.",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write one suite per domain."),
    domain: list[str] = typer.Option(
        [],
        "--domain",
        "-d",
        help="Only this domain (repeatable). Default: retail, airline, "
        "telecom (those the checkout has).",
    ),
    package: str = typer.Option(
        "tau2", "--package", help="The Python package of τ2's code (its domains' tools)."
    ),
    allow_code: bool = typer.Option(
        False,
        "--allow-code",
        help="Import τ2's domain code from your environment (needed: the tools' schemas "
        "come from it, and the suite runs τ2's tools).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite suite files that exist."),
) -> None:
    """Write τ²-bench domains as suites: tools, database, tasks as conversation cases."""
    from toolproof.importers import import_tau2, write_tau2
    from toolproof.report._escape import visible

    result = import_tau2(checkout, domain or None, package=package, allow_code=allow_code)
    written = write_tau2(result, out, force=force)
    for d, path in zip(result.domains, written, strict=True):
        agent = sum(not t.user for t in d.tools)
        user = sum(t.user for t in d.tools)
        tools = f"{agent} tools" + (f" + {user} user tools" if user else "")
        typer.echo(f"{path}: {len(d.cases)} cases, {tools}")
        counts = ", ".join(f"{k} {v}" for k, v in sorted(d.counts.items()))
        typer.echo(f"  {visible(counts)}")
        for note in d.notes:
            typer.echo(f"  note: {visible(note)}")
    typer.echo("run the suites with --allow-code: their tools run τ2's own code")


def register(app: typer.Typer) -> None:
    app.add_typer(import_app)

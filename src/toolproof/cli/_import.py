"""``toolproof import``: public benchmarks as toolproof suites."""

from __future__ import annotations

from pathlib import Path

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
    """Write BFCL's single-turn categories as suites, one per category."""
    from toolproof.importers import import_bfcl, write_bfcl
    from toolproof.report._escape import visible

    if profile not in ("bfcl", "strict"):
        raise UserError(f"--profile: '{profile}' is not bfcl or strict")
    result = import_bfcl(data, category or None, profile, underscore_names)
    written = write_bfcl(result, out, force=force)
    for s, path in zip(result.suites, written, strict=True):
        typer.echo(f"{path}: {len(s.cases)} cases ({s.category.kind}, {s.category.language})")
    for skip in result.categories_skipped:
        typer.echo(f"not imported: {visible(skip.where)}: {visible(skip.reason)}")
    for skip in result.skipped[:20]:
        typer.echo(f"skipped: {visible(skip.where)}: {visible(skip.reason)}", err=True)
    # in the bfcl profile, BFCL's own type rule bounds the values kept; in strict, the schema
    why = "BFCL's type check refuses them" if profile == "bfcl" else "they break the tool's schema"
    for drop in result.dropped[:5]:
        typer.echo(f"values left out ({why}): {visible(drop.where)}: {visible(drop.reason)}")
    total = sum(len(s.cases) for s in result.suites)
    typer.echo(
        f"{total} cases in {len(written)} suites; {len(result.skipped)} entries skipped; "
        f"{len(result.dropped)} cases with acceptable values left out ({why}); "
        f"{len(result.categories_skipped)} categories not imported"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(import_app)

"""``toolproof tools import``: tool definitions from provider JSON, MCP servers and OpenAPI."""

from __future__ import annotations

from pathlib import Path

import typer

tools_app = typer.Typer(
    name="tools",
    help="Bring your own tools: import them from where they are defined.",
    no_args_is_help=True,
)

_SOURCE_HELP = (
    "A JSON/YAML file (OpenAI Chat, OpenAI Responses, Anthropic, Gemini or MCP tool lists, "
    "or an OpenAPI 3.0/3.1 spec), an OpenAPI URL, mcp:stdio:COMMAND ARGS... or "
    "mcp:http(s)://URL."
)


@tools_app.command("import")
def import_command(
    source: str = typer.Argument(..., help=_SOURCE_HELP),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the tools file here (default: print it)."
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        help="openai-chat, openai-responses, anthropic, gemini, mcp or openapi "
        "(default: detected).",
    ),
    check: Path | None = typer.Option(
        None, "--check", help="Report where this suite's tools drifted from SOURCE (exit 1)."
    ),
    include_tag: list[str] = typer.Option([], "--include-tag", help="OpenAPI: only these tags."),
    exclude_tag: list[str] = typer.Option([], "--exclude-tag", help="OpenAPI: not these tags."),
    include_path: list[str] = typer.Option(
        [], "--include-path", help="OpenAPI: only paths matching this glob, e.g. '/pets*'."
    ),
    exclude_path: list[str] = typer.Option(
        [], "--exclude-path", help="OpenAPI: not paths matching this glob."
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", min=0.1, help="Seconds to wait for a URL or an MCP server."
    ),
) -> None:
    """Import tool definitions as toolproof tools; report anything that cannot be carried."""
    from toolproof.importers import OperationFilter, import_tools, tools_file

    only = OperationFilter(
        tuple(include_tag), tuple(exclude_tag), tuple(include_path), tuple(exclude_path)
    )
    result = import_tools(source, fmt=fmt, only=only, timeout_s=timeout)
    for note in result.notes:
        typer.echo(note.render(), err=True)
    if not result.items:
        typer.echo(f"error: no tool imported from {result.source}", err=True)
        raise typer.Exit(2)
    if out is not None:
        out.write_text(tools_file(result), encoding="utf-8")
        typer.echo(
            f"wrote {len(result.items)} tool(s) to {out} ({result.format}, "
            f"{len(result.warnings)} warning(s))",
            err=True,
        )
    elif check is None:
        typer.echo(tools_file(result), nl=False)
    if check is not None:
        _check(check, result)


def _check(suite: Path, result: object) -> None:
    from toolproof.importers import ImportResult, drift
    from toolproof.suite import load_suite_with_origin
    from toolproof.suite._errors import Locator

    assert isinstance(result, ImportResult)
    loaded = load_suite_with_origin(suite)
    root = loaded.origin.suite or Locator(loaded.suite.source or str(suite))
    found = drift(loaded.suite.tools, result.tools)
    for item in found:
        where, prefix = loaded.origin.tools.get(item.tool, (root, ("tools",)))
        error = where.error((*prefix, *item.path), f"{item.tool}: {item.message}")
        typer.echo(f"drift: {error}", err=True)
    if found:
        typer.echo(f"{len(found)} difference(s) between {suite} and {result.source}", err=True)
        raise typer.Exit(1)
    typer.echo(f"no drift: the {len(result.items)} tool(s) of {result.source} match {suite}")


def register(app: typer.Typer) -> None:
    app.add_typer(tools_app)

"""``toolproof tools import``: tool definitions from provider JSON, MCP servers and OpenAPI."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from toolproof._shared.safe_io import save

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
        30.0,
        "--timeout",
        min=0.1,
        help="Seconds a URL's whole download, or an MCP server's tool list, may take.",
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
        save(out, tools_file(result))
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
    from toolproof._shared.locate import Locator
    from toolproof.importers import ImportResult, drift
    from toolproof.suite import load_suite_with_origin

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


_PROMPT = (
    "Where are your tools defined? A JSON/YAML file, an OpenAPI spec or URL, "
    "mcp:stdio:COMMAND or mcp:http(s)://URL (empty: an example tool)"
)


def init_command(
    directory: Path = typer.Argument(Path("."), help="Folder for the new suite."),
    tools: str | None = typer.Option(None, "--tools", help=_SOURCE_HELP),
    fmt: str | None = typer.Option(None, "--format", "-f", help="Format of --tools (detected)."),
    name: str | None = typer.Option(None, "--name", help="Suite name (default: the folder's)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing suite.yaml."),
    timeout: float = typer.Option(
        30.0,
        "--timeout",
        min=0.1,
        help="Seconds a URL's whole download, or an MCP server's tool list, may take.",
    ),
    ci_install: str | None = typer.Option(
        None,
        "--ci-install",
        help="The command the generated workflow installs toolproof with (its "
        "TOOLPROOF_INSTALL; default: pip install -e ./toolproof, from a checkout of "
        "toolproof, which is not on the package index).",
    ),
) -> None:
    """Scaffold a suite from your tools: suite.yaml, case templates, .gitignore, CI workflow.

    Without --tools, asks for a source when run in a terminal; otherwise (CI, pipes)
    it uses an example tool.
    """
    from toolproof.importers import import_tools
    from toolproof.scaffold import scaffold_suite

    if tools is None and _interactive():
        from rich.prompt import Prompt

        tools = Prompt.ask(_PROMPT, default="", show_default=False).strip() or None
    imported = None
    if tools is not None:
        imported = import_tools(tools, fmt=fmt, timeout_s=timeout)
        for note in imported.notes:
            typer.echo(note.render(), err=True)
    done = scaffold_suite(directory, imported, name=name, force=force, ci_install=ci_install)
    count = len(imported.items) if imported is not None else 1
    what = f"{count} tool(s) from {imported.source}" if imported else "an example tool"
    typer.echo(f"scaffolded a suite with {what}:")
    for path in done.files:
        typer.echo(f"  {path}")
    typer.echo(
        f"next: fill in the cases tagged 'todo', then `toolproof validate {directory}` "
        f"and `toolproof run {directory}`"
    )


def _interactive() -> bool:

    return sys.stdin.isatty()


def register(app: typer.Typer) -> None:
    app.add_typer(tools_app)
    app.command("init")(init_command)

from __future__ import annotations

import sys

import typer

from toolproof._version import __version__

app = typer.Typer(
    name="toolproof",
    help="Measure how reliably an LLM calls tools, and gate releases on it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Exit codes, documented in README.md.
EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INFRA = 3


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"toolproof {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version."
    ),
) -> None:
    """toolproof: does the model call the right tool, with the right arguments, every time?"""


def _register() -> None:
    from toolproof.cli import _core, _gate, _judge, _run

    _core.register(app)
    _run.register(app)
    _gate.register(app)
    _judge.register(app)


_register()


def main() -> None:
    """Entry point: user errors become one line on stderr and exit code 2."""
    from toolproof.errors import UserError

    try:
        app()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)

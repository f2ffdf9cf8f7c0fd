from __future__ import annotations

import sys

import typer

from toolproof._shared.gcpause import frozen_after_pauses, frozen_at_exit
from toolproof._version import __version__
from toolproof.cli._exit import ExitCode, leave
from toolproof.errors import UserError

app = typer.Typer(
    name="toolproof",
    help="Measure how reliably an LLM calls tools, and gate releases on it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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
    from toolproof.cli import (
        _core,
        _coverage,
        _gate,
        _generate,
        _import,
        _judge,
        _report,
        _run,
        _store,
        _tools,
        _traces,
    )

    _core.register(app)
    _run.register(app)
    _gate.register(app)
    _report.register(app)
    _store.register(app)
    _tools.register(app)
    _judge.register(app)
    _import.register(app)
    _coverage.register(app)
    _generate.register(app)
    _generate.register_review(app)
    _traces.register(app)


_register()


def main(*, at_once: bool = False) -> None:
    """Entry point: user errors become one line on stderr and exit code 2.

    ``at_once`` (the ``toolproof`` program, not a caller in the same process):
    a command that has closed everything it wrote ends the process at once
    (:func:`toolproof.cli._exit.leave`).
    """

    frozen_at_exit()
    try:
        with frozen_after_pauses():  # a command ends soon: its suite need not be collected
            app()
    except UserError as exc:
        from toolproof._shared.loaded_keys import redactor
        from toolproof.report._escape import visible

        print(f"error: {visible(redactor().text(str(exc)))}", file=sys.stderr)
        sys.exit(ExitCode.USAGE)
    except SystemExit as exc:
        if at_once and (exc.code is None or isinstance(exc.code, int)):
            leave(exc.code)  # returns when the process may not end at once
        raise


def program() -> None:
    """The ``toolproof`` program (``python -m toolproof`` and the installed script)."""
    main(at_once=True)

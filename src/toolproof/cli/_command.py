"""A command whose flags are the fields of one frozen dataclass.

The dataclass declares each flag once: its name, type, default and typer
metadata (``Annotated[T, typer.Option(...)]``). :func:`command` gives typer a
function with one keyword parameter per field, which builds the one options
object and hands it to the command's body. Adding a flag is adding a field.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["TYPER", "command"]

T = TypeVar("T")

#: Field metadata key: a typer ``Option`` shared by several commands (written in the
#: default style, ``typer.Option(default, "--flag")``), given as the field's default to typer.
TYPER = "toolproof.typer"


def command(options: type[T], body: Callable[[T], None]) -> Callable[..., None]:
    """A typer command: the command line read into one ``options``, then ``body(options)``.

    Each field of the dataclass ``options`` is one parameter of the command, in
    field order, with the field's annotation (typer's ``Annotated`` metadata
    included) and its default (a ``default_factory`` is called once, for the
    default typer shows; each invocation gets the values click parsed).
    """
    hints = typing.get_type_hints(options, include_extras=True)
    parameters = []
    for f in dataclasses.fields(options):  # type: ignore[arg-type]
        if TYPER in f.metadata:
            default: Any = f.metadata[TYPER]
        elif f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = inspect.Parameter.empty
        parameters.append(
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hints[f.name]
            )
        )

    def parsed(**values: Any) -> None:
        body(options(**values))

    parsed.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    parsed.__annotations__ = {p.name: p.annotation for p in parameters}
    parsed.__name__ = body.__name__
    parsed.__qualname__ = body.__qualname__
    parsed.__doc__ = body.__doc__
    parsed.__module__ = body.__module__
    return parsed

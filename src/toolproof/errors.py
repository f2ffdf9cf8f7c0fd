"""Errors raised by toolproof.

The hierarchy::

    ToolproofError
     ├── UserError            bad input from the user: a suite, a records file, an option.
     │    └── SuiteError      names the file, line, column and field path.
     │         └── SuiteProblems   several found together (validate prints each).
     ├── ProviderError        a provider answered with an error; carries status, body, headers.
     └── HarnessError         toolproof itself failed (a scorer or judge crashed).

A ``UserError`` is printed by the command line as one line, with no traceback,
and exit code 2.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "HarnessError",
    "ProviderError",
    "SuiteError",
    "SuiteProblems",
    "ToolError",
    "ToolproofError",
    "UserError",
]


class ToolproofError(Exception):
    """Base of every error toolproof raises on purpose."""


class UserError(ToolproofError):
    """The user's input is wrong. The message says what and where."""


def format_path(path: Sequence[str | int]) -> str:
    """Render a field path as ``cases[3].expect.args.order_id``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class SuiteError(UserError):
    """A problem at a precise place in a suite or records file."""

    def __init__(
        self,
        file: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: Sequence[str | int] = (),
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.path = tuple(path)
        self.detail = message
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        field = format_path(self.path)
        return f"{where}: {field + ': ' if field else ''}{self.detail}"


class SuiteProblems(SuiteError):
    """Every problem found while reading a suite.

    It reads as the first problem (file, line, field) plus a count of the
    others; ``errors`` holds them all.
    """

    #: What could be read of the suite despite the problems (a ``LoadedSuite`` of the
    #: cases that parsed), for the checks that can still run on it; None: nothing.
    partial: Any = None

    def __init__(self, errors: Sequence[SuiteError]) -> None:
        if not errors:
            raise ValueError("SuiteProblems needs at least one error")
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(
            first.file, first.detail, line=first.line, column=first.column, path=first.path
        )

    def render(self) -> str:
        more = len(self.errors) - 1
        text = super().render()
        if more:
            text += f" (and {more} more problem{'s' if more > 1 else ''}; see toolproof validate)"
        return text


class ProviderError(ToolproofError):
    """A provider answered, but with an error."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = dict(headers or {})


class HarnessError(ToolproofError):
    """toolproof itself failed while scoring or judging. Never a model failure."""


class ToolError(Exception):
    """Raised (or returned) by an environment tool: the model reads ``message`` as it is,
    marked as an error result.

    ``message`` is text (sent verbatim) or JSON data (sent as JSON). Any other
    exception a tool raises reaches the model as ``{"error": "TypeName: text"}``.
    """

    def __init__(self, message: Any) -> None:
        super().__init__(message)
        self.message = message

    def text(self) -> str:
        """What the model reads."""
        if isinstance(self.message, str):
            return self.message
        return json.dumps(self.message, ensure_ascii=False, sort_keys=True, default=str)

"""Regular expressions from suites, run on a linear-time engine (RE2).

Patterns in a suite (the ``regex`` matcher, mock rules) come from pull
requests and are matched against model output, so a backtracking engine could
be made to take exponential time (``(a+)+$``). RE2 matches in time linear in
the input, whatever the pattern, so verdicts never depend on a time budget or
on the machine's speed. The price: no backreferences and no lookaround. Such
a pattern is refused when the suite is loaded, with the reason.

``bench/regex_engines.py`` compares this with Python's ``re`` and with the
``regex`` module's timeout.
"""

from __future__ import annotations

from typing import Any, Protocol

import re2  # type: ignore[import-untyped]

__all__ = ["Pattern", "RegexError", "compile_regex"]

#: Memory RE2 may use for one compiled pattern (its default is 8 MiB).
_MAX_MEM = 8 << 20


class RegexError(ValueError):
    """A pattern RE2 cannot compile; the message says why."""


class Pattern(Protocol):
    """The part of a compiled pattern toolproof uses."""

    pattern: str

    def fullmatch(self, text: str) -> Any: ...

    def search(self, text: str) -> Any: ...


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own error line to stderr
    options.max_mem = _MAX_MEM
    return options


_OPTIONS = _options()


def compile_regex(pattern: str) -> Pattern:
    """Compile ``pattern`` with RE2 (Python's syntax, less backreferences and lookaround)."""
    if not isinstance(pattern, str):
        raise RegexError(f"a pattern must be a string, got {type(pattern).__name__}")
    try:
        compiled: Pattern = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
        raise RegexError(f"/{shown}/: {reason}{_hint(pattern)}") from None
    return compiled


def _hint(pattern: str) -> str:
    if any(t in pattern for t in ("(?=", "(?!", "(?<=", "(?<!")) or any(
        f"\\{d}" in pattern for d in "123456789"
    ):
        return " (toolproof runs patterns on RE2, which has no lookaround or backreferences)"
    return ""

"""The expectation language: argument matchers, relative dates and mock rules.

A leaf package: it imports only ``toolproof.types`` and ``toolproof.errors``.
``suite`` uses it to validate expectations, ``run`` to answer mock tools, and
``grade`` to judge arguments and replies.
"""

from toolproof.match._dates import resolve, zone
from toolproof.match._matchers import (
    MISSING,
    Context,
    Matcher,
    SpecError,
    compile_value,
    normalize_text,
    show,
    strict_equal,
)
from toolproof.match._mock import CompiledMock, ToolResult, fault_result, result_of

__all__ = [
    "MISSING",
    "CompiledMock",
    "Context",
    "Matcher",
    "SpecError",
    "ToolResult",
    "compile_value",
    "fault_result",
    "normalize_text",
    "resolve",
    "result_of",
    "show",
    "strict_equal",
    "zone",
]

"""The expectation language: argument matchers, relative dates and mock rules.

A leaf package: it imports only ``toolproof.types`` and ``toolproof.errors``.
``suite`` uses it to validate expectations, ``run`` to answer mock tools, and
``grade`` to judge arguments and replies.
"""

from toolproof.match._bfcl import PROFILES, profile_spec, standardize
from toolproof.match._dates import resolve, zone
from toolproof.match._expr_context import Context, context
from toolproof.match._judged import Decisions, Question
from toolproof.match._matchers import (
    MISSING,
    OPTIONS,
    REGISTRY,
    Matcher,
    SpecError,
    compile_value,
    did_you_mean,
    kinds_differ,
    literal_options,
    literal_values,
    matcher,
    normalize_text,
    show,
    strict_equal,
)
from toolproof.match._mock import CompiledMock, ToolResult, fault_result, result_of
from toolproof.match._semantic import (
    SEMANTIC_EXTRA,
    Comparison,
    Embeddings,
    MissingEmbeddings,
    semantic_missing,
    similarity_notes,
    text_key,
)

__all__ = [
    "MISSING",
    "OPTIONS",
    "PROFILES",
    "REGISTRY",
    "SEMANTIC_EXTRA",
    "Comparison",
    "CompiledMock",
    "Context",
    "Decisions",
    "Embeddings",
    "Matcher",
    "MissingEmbeddings",
    "Question",
    "SpecError",
    "ToolResult",
    "compile_value",
    "context",
    "did_you_mean",
    "fault_result",
    "kinds_differ",
    "literal_options",
    "literal_values",
    "matcher",
    "normalize_text",
    "profile_spec",
    "resolve",
    "result_of",
    "semantic_missing",
    "show",
    "similarity_notes",
    "standardize",
    "strict_equal",
    "text_key",
    "zone",
]

"""Grading: pure functions from a case and a model answer to a verdict."""

from toolproof.grade._compile import CompiledCall, CompiledCase, compile_case, context
from toolproof.grade._matchers import (
    Matcher,
    SpecError,
    compile_value,
    normalize_text,
    strict_equal,
)
from toolproof.grade._score import NO_CALL, Scorer

__all__ = [
    "NO_CALL",
    "CompiledCall",
    "CompiledCase",
    "Matcher",
    "Scorer",
    "SpecError",
    "compile_case",
    "compile_value",
    "context",
    "normalize_text",
    "strict_equal",
]

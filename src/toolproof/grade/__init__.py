"""Grading: pure functions from a case and a model answer to a verdict."""

from toolproof.grade._compile import CompiledCall, CompiledCase, compile_case, context
from toolproof.grade._endstate import StateDiff, compare_states, render_state_diff
from toolproof.match._matchers import (
    Matcher,
    SpecError,
    compile_value,
    normalize_text,
    strict_equal,
)
from toolproof.grade._score import NO_CALL, Scorer
from toolproof.grade._trajectory import (
    CompiledTrajectory,
    TrajectoryResult,
    compile_trajectory,
    match_trajectory,
)

__all__ = [
    "NO_CALL",
    "CompiledCall",
    "CompiledCase",
    "CompiledTrajectory",
    "Matcher",
    "Scorer",
    "SpecError",
    "StateDiff",
    "TrajectoryResult",
    "compare_states",
    "compile_case",
    "compile_trajectory",
    "compile_value",
    "context",
    "match_trajectory",
    "normalize_text",
    "render_state_diff",
    "strict_equal",
]

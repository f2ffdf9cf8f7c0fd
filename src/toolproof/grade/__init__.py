"""Grading: pure functions from a case and a model answer to a verdict.

The scorer analyses an answer once, runs its checks (the six built-in stages,
plus a suite's own checks) and assembles an immutable verdict. It imports only
the leaves (``types``, ``errors``, ``match``); what it needs from outside,
such as the expected end states of gold actions, is handed in as data.
"""

from toolproof.grade._answer import NO_CALL, CallInfo, SingleAnswer
from toolproof.grade._checks import (
    SINGLE_STEP_CHECKS,
    AnswerView,
    CaseCheck,
)
from toolproof.grade._compile import (
    ArgMemo,
    CompiledCall,
    CompiledCase,
    ToolIndex,
    compile_case,
    compile_expectations,
    value_key,
)
from toolproof.grade._custom import Finding, FunctionCheck
from toolproof.grade._diff import render_diff
from toolproof.grade._endstate import StateDiff, compare_states, render_state_diff
from toolproof.grade._multistep import (
    MULTI_STEP_CHECKS,
    ExpectedState,
    MissingExpectedState,
    MultiAnswer,
    UngradableRecord,
    rebuild_end_state,
)
from toolproof.grade._rawview import RawView, raw_view, recovered_calls
from toolproof.grade._score import Scorer
from toolproof.grade._stateasserts import (
    STATE_FUNCTIONS,
    CompiledAssert,
    FunctionAssert,
    FunctionsNotRun,
    communicated,
    compile_state_asserts,
    function_asserts,
    normalise_fact,
)
from toolproof.grade._statechanges import (
    ChangeError,
    InitialState,
    apply_changes,
    cow,
    state_changes,
)
from toolproof.grade._trajectory import (
    CompiledTrajectory,
    TrajectoryResult,
    compile_trajectory,
    match_trajectory,
)
from toolproof.match import Matcher, SpecError, compile_value, context, normalize_text, strict_equal

__all__ = [
    "MULTI_STEP_CHECKS",
    "NO_CALL",
    "SINGLE_STEP_CHECKS",
    "STATE_FUNCTIONS",
    "AnswerView",
    "ArgMemo",
    "CallInfo",
    "CaseCheck",
    "ChangeError",
    "CompiledAssert",
    "CompiledCall",
    "CompiledCase",
    "CompiledTrajectory",
    "ExpectedState",
    "Finding",
    "FunctionAssert",
    "FunctionCheck",
    "FunctionsNotRun",
    "InitialState",
    "Matcher",
    "MissingExpectedState",
    "MultiAnswer",
    "RawView",
    "Scorer",
    "SingleAnswer",
    "SpecError",
    "StateDiff",
    "ToolIndex",
    "TrajectoryResult",
    "UngradableRecord",
    "apply_changes",
    "communicated",
    "compare_states",
    "compile_case",
    "compile_expectations",
    "compile_state_asserts",
    "compile_trajectory",
    "compile_value",
    "context",
    "cow",
    "function_asserts",
    "match_trajectory",
    "normalise_fact",
    "normalize_text",
    "raw_view",
    "rebuild_end_state",
    "recovered_calls",
    "render_diff",
    "render_state_diff",
    "state_changes",
    "strict_equal",
    "value_key",
]

"""Cases generated from tool schemas by a model: planned, verified, deduplicated, reviewed.

``generate_cases(tools, MODEL, mix)`` asks the generator for positive,
no-call, clarification, confirmation, cross-tool confusion and edge cases per
tool, keeps only those that verify, and marks each ``needs-review``.
"""

from toolproof.generate._generate import (
    DUPLICATE_SCORE,
    GenerateResult,
    dedupe,
    extract_json,
    generate_cases,
    local_spec,
    verify_with,
)
from toolproof.generate._plan import DEFAULT_MIX, EDGES, Slot, parse_mix, plan_slots
from toolproof.generate._review import ReviewFile, read_review

__all__ = [
    "DEFAULT_MIX",
    "DUPLICATE_SCORE",
    "EDGES",
    "GenerateResult",
    "ReviewFile",
    "Slot",
    "dedupe",
    "extract_json",
    "generate_cases",
    "local_spec",
    "parse_mix",
    "plan_slots",
    "read_review",
    "verify_with",
]

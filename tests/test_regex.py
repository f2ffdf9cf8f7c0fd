"""toolproof._shared.suite_regex: suite patterns on RE2."""

from __future__ import annotations

import pytest

from toolproof._shared.suite_regex import RegexError, compile_regex


def test_ordinary_patterns_match_like_python() -> None:
    p = compile_regex(r"^ORD-[0-9]{6}$")
    assert p.fullmatch("ORD-104821") and not p.fullmatch("ORD-1")
    assert compile_regex(r"(?i)éa+").fullmatch("ÉAA")


@pytest.mark.parametrize("pattern", [r"(a)\1", r"a(?=b)", r"(?<!x)a"])
def test_backreferences_and_lookaround_are_refused_with_the_reason(pattern: str) -> None:
    with pytest.raises(RegexError, match="no lookaround or backreferences"):
        compile_regex(pattern)


def test_a_catastrophic_pattern_still_answers() -> None:
    # (a+)+$ is exponential on a backtracking engine; RE2 answers in linear time
    assert compile_regex(r"(a+)+$").fullmatch("a" * 100_000 + "b") is None

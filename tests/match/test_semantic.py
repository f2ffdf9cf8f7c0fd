"""The semantic matcher on vectors handed in as data: no model is loaded here."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from tests.grade.conftest import call, make_suite, reply
from toolproof.grade import Scorer
from toolproof.match import (
    Context,
    Embeddings,
    MissingEmbeddings,
    SpecError,
    compile_value,
    semantic_missing,
    text_key,
)
from toolproof.match import _semantic as semantic_module
from toolproof.match._dates import zone
from toolproof.match._matchers import MISSING, apply_default

EXPECTED = "refund for a damaged item"
CLOSE = "money back for a broken product"
FAR = "track my parcel"


@pytest.fixture(autouse=True)
def extra_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests hand vectors in; whether the model is installed does not matter."""
    monkeypatch.setattr(semantic_module, "_missing_packages", lambda: ())


def _table() -> Embeddings:
    table = Embeddings()
    table.add(EXPECTED, [1.0, 0.0])
    table.add(CLOSE, [0.8, 0.6])  # cosine 0.8 with EXPECTED
    table.add(FAR, [0.0, 3.0])  # cosine 0 (scaled to unit length when added)
    return table


def _ctx(table: Embeddings | None) -> Context:
    return Context(now=datetime(2026, 9, 19, 10, 0), tz=zone("UTC"), embeddings=table)


def test_cosine_similarity_of_unit_vectors() -> None:
    table = _table()
    assert table.similarity(EXPECTED, CLOSE) == pytest.approx(0.8)
    assert table.similarity(EXPECTED, FAR) == pytest.approx(0.0)
    assert math.isclose(sum(x * x for x in table.vectors[text_key(FAR)]), 1.0)


def test_passes_at_or_above_the_minimum_and_names_the_similarity_below() -> None:
    table = _table()
    assert compile_value({"semantic": EXPECTED, "min": 0.8}, _ctx(table)).check(CLOSE) is None
    reason = compile_value({"semantic": EXPECTED, "min": 0.85}, _ctx(table)).check(CLOSE)
    assert reason == (
        'semantic similarity 0.80 < 0.85 to "refund for a damaged item", '
        'got "money back for a broken product"'
    )


def test_default_minimum_is_0_7() -> None:
    table = _table()
    table.add("almost", [0.69, math.sqrt(1 - 0.69**2)])
    table.add("enough", [0.71, math.sqrt(1 - 0.71**2)])
    m = compile_value({"semantic": EXPECTED}, _ctx(table))
    assert m.check("enough") is None
    assert m.check("almost") is not None


def test_only_strings_are_compared() -> None:
    m = compile_value({"semantic": EXPECTED}, _ctx(_table()))
    assert m.check(MISSING) == "missing"
    assert m.check(42) == "expected a string, got 42"
    assert m.check(["refund"]) is not None


def test_a_text_without_a_vector_is_noted_missing_never_guessed() -> None:
    table = _table()
    reason = compile_value({"semantic": EXPECTED}, _ctx(table)).check("something new")
    assert reason is not None and "not computed" in reason
    assert table.take_missing() == ["something new"]
    assert table.take_missing() == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"semantic": 5}, "'semantic' needs a string"),
        ({"semantic": "  "}, "'semantic' needs a non-empty string"),
        ({"semantic": "x", "min": 1.5}, "'min' must be a number in [-1, 1]"),
        ({"semantic": "x", "min": True}, "'min' must be a number in [-1, 1]"),
        ({"semantic": "x", "threshold": 0.5}, "unknown option 'threshold'"),
    ],
)
def test_bad_specs_are_errors(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        compile_value(spec, _ctx(Embeddings()))
    assert message in str(err.value)


def test_mock_rules_cannot_compare_by_meaning() -> None:
    with pytest.raises(SpecError, match="cannot be used in a mock rule"):
        compile_value({"semantic": "x"}, _ctx(None))


def test_without_the_extra_the_error_is_one_line_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(semantic_module, "_missing_packages", lambda: ("onnxruntime",))
    with pytest.raises(SpecError) as err:
        compile_value({"semantic": "x"}, _ctx(Embeddings()))
    message = str(err.value)
    assert "\n" not in message
    assert "semantic extra (onnxruntime not installed)" in message
    assert "install it with: pip install" in message and "[semantic]" in message
    assert semantic_missing() == message


def test_a_tool_default_applies_the_matcher_with_its_options() -> None:
    spec = apply_default(EXPECTED, {"use": "semantic", "min": 0.75})
    assert spec == {"semantic": EXPECTED, "min": 0.75}
    assert compile_value(spec, _ctx(_table())).check(CLOSE) is None


SUITE_CASES = [
    {
        "id": "search-refunds",
        "prompt": "find refunds for damaged items",
        "expect": {"call": "search", "args": {"q": {"semantic": EXPECTED, "min": 0.75}}},
    }
]


def test_the_scorer_refuses_a_verdict_until_the_vectors_are_there() -> None:
    scorer = Scorer(make_suite(SUITE_CASES))
    answer = reply(None, call("search", '{"q": "money back for a broken product"}'))
    with pytest.raises(MissingEmbeddings) as err:
        scorer.grade_response("search-refunds", answer)
    assert sorted(err.value.texts) == sorted([EXPECTED, CLOSE])
    for text, vector in ((EXPECTED, [1.0, 0.0]), (CLOSE, [0.8, 0.6])):
        scorer.embeddings.add(text, vector)
    verdict = scorer.grade_response("search-refunds", answer)
    assert verdict.passed
    assert verdict.notes == (
        'semantic similarity 0.80 ≥ 0.75: "money back for a broken product" '
        'vs "refund for a damaged item"',
    )


def test_a_failed_semantic_argument_is_a_value_failure_with_its_similarity() -> None:
    scorer = Scorer(make_suite(SUITE_CASES), embeddings=_table())
    verdict = scorer.grade_response("search-refunds", reply(None, call("search", '{"q": "track my parcel"}')))
    assert not verdict.passed
    assert verdict.failure is not None and verdict.failure.value == "wrong_arguments"
    assert any("semantic similarity 0.00 < 0.75" in c.detail for c in verdict.checks)
    assert any(n.startswith("semantic similarity 0.00 < 0.75") for n in verdict.notes)


def test_a_reply_can_be_matched_by_meaning() -> None:
    cases = [{"id": "explain", "prompt": "why?", "expect": {"text": {"semantic": EXPECTED}}}]
    scorer = Scorer(make_suite(cases), embeddings=_table())
    assert scorer.grade_response("explain", reply(CLOSE)).passed
    assert not scorer.grade_response("explain", reply(FAR)).passed

"""Hostile model output is scored, never crashes the scorer."""

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.grade.conftest import call, make_suite, reply
from toolproof.grade import Scorer
from toolproof.types import FailureClass, Response, Stage, ToolCall

CASES = [
    {
        "id": "lookup",
        "prompt": "p",
        "expect": {"call": "lookup_order", "args": {"order_id": "ORD-104821"}},
    },
    {
        "id": "two",
        "prompt": "p",
        "expect": {
            "calls": [
                {"tool": "search", "args": {"q": {"soft": "shoes"}}, "extra_args": True},
                {
                    "tool": "search_orders",
                    "args": {"customer": "Novák", "limit": {"range": {"min": 1}}},
                },
            ]
        },
    },
    {"id": "greet", "prompt": "p", "expect": {"kind": "clarify", "forbidden": ["cancel_order"]}},
]
SCORER = Scorer(make_suite(CASES))
NAMES = ["lookup_order", "search_orders", "search", "cancel_order", "nope", ""]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def tool_calls(draw: Any) -> ToolCall:
    name = draw(st.sampled_from(NAMES))
    raw = draw(st.text(max_size=200)) if draw(st.booleans()) else json.dumps(draw(json_values))
    return call(name, raw)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    case_id=st.sampled_from([c["id"] for c in CASES]),
    calls=st.lists(tool_calls(), max_size=5),
    text=st.none() | st.text(max_size=50),
)
def test_any_response_gets_a_verdict(case_id: str, calls: list[ToolCall], text: str | None) -> None:
    v = SCORER.grade_response(case_id, Response(text=text, tool_calls=calls))
    assert v.passed == (v.failure is None)
    assert v.passed == (not v.checks)
    # the built-in stages' findings come in stage order (the assembler takes them as given)
    ranks = [list(Stage).index(c.stage) for c in v.checks]
    assert ranks == sorted(ranks)
    if not v.passed:
        assert SCORER.diff(v).startswith("expected: ")


def test_huge_arguments() -> None:
    raw = json.dumps({"order_id": "ORD-104821" * 100_000})
    v = SCORER.grade_response("lookup", reply(None, call("lookup_order", raw)))
    assert v.failure is FailureClass.schema_mismatch
    assert len(SCORER.diff(v)) < 2_000


def test_deep_nesting_in_raw_text() -> None:
    raw = "[" * 100_000 + "]" * 100_000
    v = SCORER.grade_response("lookup", reply(None, call("lookup_order", raw)))
    assert v.failure is FailureClass.invalid_json
    assert "nested too deeply" in v.checks[0].message


def test_deep_nesting_in_parsed_arguments() -> None:
    deep: Any = {}
    cur = deep
    for _ in range(50_000):
        cur["x"] = {}
        cur = cur["x"]
    c = ToolCall(name="lookup_order", raw_arguments=None, arguments={"order_id": deep})
    v = SCORER.grade_response("lookup", reply(None, c))
    assert v.failure is FailureClass.schema_mismatch


def test_invalid_unicode() -> None:
    raw = '{"order_id": "ORD-10482\\ud800"}'
    v = SCORER.grade_response("lookup", reply(None, call("lookup_order", raw)))
    assert not v.passed
    assert v.failure in (FailureClass.schema_mismatch, FailureClass.wrong_arguments)


def test_non_json_argument_text() -> None:
    v = SCORER.grade_response("lookup", reply(None, call("lookup_order", "order_id=ORD-104821")))
    assert v.failure is FailureClass.invalid_json
    assert v.values_ok is False


def test_null_where_an_object_was_expected() -> None:
    v = SCORER.grade_response("lookup", reply(None, call("lookup_order", "null")))
    assert v.failure is FailureClass.schema_mismatch
    assert "null is not of type" in v.checks[0].message
    v = SCORER.grade_response("lookup", reply(None, call("lookup_order", "[1, 2]")))
    assert v.failure is FailureClass.schema_mismatch

"""The ``bfcl`` matcher profile: opt-in, and BFCL's leniency where the suite chooses it."""

from __future__ import annotations

from typing import Any

import pytest

from toolproof.grade import Scorer
from toolproof.match import SpecError, compile_value, profile_spec, standardize
from toolproof.match._dates import zone
from toolproof.match._expr_context import Context
from toolproof.types import Response, Suite, ToolCall

TOOL = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "window": {"type": "number"},
            "unit": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "metric": {"type": "boolean"},
        },
        "required": ["city"],
    },
}
ARGS = {
    "city": {"one_of": ["Washington D.C.", "DC"]},
    "days": 3,
    "window": 2.0,
    "unit": {"optional": "celsius"},
    "tags": ["New York", "x**2"],
    "metric": True,
}


def _scorer(matching: str | None) -> Scorer:
    defaults = {"matching": matching} if matching else {}
    case = {
        "id": "c",
        "prompt": "p",
        "tools": [TOOL],
        "expect": {"call": "get_weather", "args": ARGS},
    }
    return Scorer(
        Suite.model_validate({"name": "s", "tools": [], "cases": [case], "defaults": defaults})
    )


def _passes(scorer: Scorer, **changes: Any) -> bool:
    args: dict[str, Any] = {
        "city": "Washington D.C.",
        "days": 3,
        "window": 2.0,
        "unit": "celsius",
        "tags": ["New York", "x**2"],
        "metric": True,
    }
    for key, value in changes.items():
        if value is None:
            args.pop(key)
        else:
            args[key] = value
    response = Response(tool_calls=[ToolCall(name="get_weather", arguments=args)])
    return scorer.grade_response("c", response).passed


def test_standardize_is_bfcls() -> None:
    assert standardize("Washington D.C.") == standardize("washington dc") == "washingtondc"
    assert standardize("April 1, 2024") == standardize("april 1 2024")
    assert standardize("x**2") == standardize("x*2")  # BFCL's false positive, kept
    assert standardize("it's") == 'it"s'
    assert standardize("a(b)") != standardize("ab")  # brackets are not dropped


@pytest.mark.parametrize(
    ("changes", "bfcl", "strict"),
    [
        ({}, True, True),
        ({"city": "washington dc"}, True, False),
        ({"city": "WASHINGTON, D.C."}, True, False),
        ({"city": "Washington"}, False, False),
        ({"tags": ["new york", "X*2"]}, True, False),
        ({"tags": ["X*2", "new york"]}, False, False),  # lists compare in order
        ({"window": 2}, True, True),  # an int for a float
        ({"days": 3.0}, False, True),  # a float for an int: BFCL refuses, JSON Schema accepts
        ({"days": True}, False, False),
        ({"unit": None}, True, True),  # optional left out
        ({"unit": "Celsius"}, True, False),
        ({"metric": 1}, False, False),
    ],
)
def test_profile_against_strict_default(changes: dict[str, Any], bfcl: bool, strict: bool) -> None:
    assert _passes(_scorer("bfcl"), **changes) is bfcl
    assert _passes(_scorer(None), **changes) is strict
    assert _passes(_scorer("strict"), **changes) is strict


def test_profile_leaves_named_matchers_alone() -> None:
    spec = {"a": {"regex": "^x"}, "b": {"one_of": ["X", 2]}, "c": {"optional": 1.5}, "d": None}
    assert profile_spec(spec, "bfcl") == {
        "a": {"regex": "^x"},
        "b": {"one_of": [{"bfcl": "X"}, {"bfcl": 2}]},
        "c": {"optional": {"bfcl": 1.5}},
        "d": None,
    }
    assert profile_spec(spec, "strict") is spec


def test_bfcl_matcher_written_by_hand() -> None:
    ctx = Context(now=None, tz=zone("UTC"))
    m = compile_value({"bfcl": "Washington D.C."}, ctx)
    assert m.ok("washington dc")
    assert (
        m.check("Boston") == 'expected "Washington D.C." (as BFCL standardises text), got "Boston"'
    )
    assert compile_value({"bfcl": 3}, ctx).check(3.0) == "expected the integer 3, got the float 3.0"
    with pytest.raises(SpecError, match="needs a string or a number"):
        compile_value({"bfcl": [1]}, ctx)
    with pytest.raises(SpecError, match="needs a string or a number"):
        compile_value({"bfcl": True}, ctx)


def test_fingerprint_changes_with_the_profile_only_when_chosen() -> None:
    base = {"name": "s", "tools": [], "cases": [{"id": "c", "prompt": "p", "expect": {}}]}
    plain = Suite.model_validate(base).fingerprint()
    strict = Suite.model_validate({**base, "defaults": {"matching": "strict"}}).fingerprint()
    bfcl = Suite.model_validate({**base, "defaults": {"matching": "bfcl"}}).fingerprint()
    assert plain == strict != bfcl
    stamped = dict(base["cases"][0], generated={"by": "m", "at": "t", "status": "accepted"})
    reviewed = Suite.model_validate({**base, "cases": [stamped]}).fingerprint()
    assert reviewed == plain  # a review does not change what the model is asked

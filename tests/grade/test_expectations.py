"""No-call expectations, the closest alternative, immutable verdicts and their diffs."""

import dataclasses
from typing import Any

import pytest

from tests.grade.conftest import call, diff, make_suite, reply
from toolproof.grade import Scorer, render_diff
from toolproof.types import FailureClass, Kind


def test_no_call_expectation_accepts_an_empty_reply(grade: Any) -> None:
    case = {"expect": {"forbidden": ["cancel_order"]}}
    v = grade(case, reply(None))
    assert v.kind is Kind.none
    assert v.passed and v.reply_ok is None  # the reply is not judged
    assert grade({"expect": {"kind": "none"}}, reply("")).passed
    assert grade({"expect": {}}, reply("Hello!")).passed


def test_no_call_expectation_still_fails_a_call(grade: Any) -> None:
    v = grade({"expect": {}}, reply(None, call("search", '{"q": "x"}')))
    assert v.failure is FailureClass.unwanted_call
    assert v.checks[0].message == "expected no tool call, got search"
    assert "expected: no call\n" in diff(v)


def test_kind_text_still_requires_something_said(grade: Any) -> None:
    v = grade({"expect": {"kind": "text"}}, reply(None))
    assert v.failure is FailureClass.wrong_reply and v.reply_ok is False
    assert grade({"expect": {"kind": "text"}}, reply("Sure.")).passed


WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin"]},
        },
        "required": ["city"],
    },
}


def _weather_scorer(case: dict[str, Any]) -> Scorer:
    suite = make_suite([{"id": "c", "prompt": "p", **case}])
    suite = suite.model_copy(update={"tools": [*suite.tools, type(suite.tools[0])(**WEATHER)]})
    return Scorer(suite)


def test_alternatives_diagnose_against_the_closest_one() -> None:
    """A wrong optional value reads as a wrong value, not as an unexpected argument."""
    scorer = _weather_scorer(
        {
            "expect": {
                "alternatives": [
                    [{"tool": "get_weather", "args": {"city": "Paris"}}],
                    [{"tool": "get_weather", "args": {"city": "Paris", "unit": "celsius"}}],
                ]
            }
        }
    )
    answer = reply(None, call("get_weather", '{"city": "Paris", "unit": "kelvin"}'))
    v = scorer.grade_response("c", answer)
    assert v.failure is FailureClass.wrong_arguments
    assert v.checks[0].message == 'get_weather: unit: expected "celsius", got "kelvin"'
    assert 'expected: get_weather(city="Paris", unit="celsius")' in scorer.diff(v)


def test_optional_matcher_in_a_case() -> None:
    scorer = _weather_scorer(
        {"expect": {"call": "get_weather", "args": {"city": "Paris", "unit": {"optional": "celsius"}}}}
    )
    ok = scorer.grade_response("c", reply(None, call("get_weather", '{"city": "Paris"}')))
    bad = scorer.grade_response(
        "c", reply(None, call("get_weather", '{"city": "Paris", "unit": "kelvin"}'))
    )
    assert ok.passed and bad.failure is FailureClass.wrong_arguments


def test_verdicts_are_immutable_and_hold_no_closures(grade: Any) -> None:
    v = grade({"expect": {"call": "lookup_order"}}, reply("no"))
    with pytest.raises(AttributeError):
        v.passed = True  # type: ignore[misc]
    with pytest.raises((AttributeError, dataclasses.FrozenInstanceError)):
        v.checks[0].detail = "x"  # type: ignore[misc]

    def no_callables(value: Any) -> None:
        assert not callable(value) or isinstance(value, type), value
        if isinstance(value, tuple | list):
            for item in value:
                no_callables(item)

    for field in v:
        no_callables(field)


def test_the_diff_is_a_pure_function_of_verdict_and_case(grade: Any) -> None:
    v = grade({"expect": {"call": "lookup_order"}}, reply("It shipped."))
    from tests.grade.conftest import _LAST

    cc = _LAST[-1].cases["c"]
    assert render_diff(v, cc) == render_diff(v, cc) == diff(v)
    assert render_diff(v, cc).startswith("expected: lookup_order(")
    passed = grade({"expect": {"kind": "text"}}, reply("Hi"))
    assert render_diff(passed, _LAST[-1].cases["c"]) == ""

from datetime import datetime
from typing import Any

import pytest

from toolproof.grade import SpecError, compile_value, strict_equal
from toolproof.match._dates import resolve, zone
from toolproof.match._matchers import MISSING, Context, apply_default

PRAGUE = zone("Europe/Prague")
CTX = Context(now=datetime(2026, 9, 19, 10, 0), tz=PRAGUE)


def ok(spec: Any, actual: Any) -> bool:
    return compile_value(spec, CTX).check(actual) is None


def test_exact_is_type_strict() -> None:
    assert ok(750, 750)
    assert ok(750, 750.0)
    assert not ok(750, "750")
    assert not ok("750", 750)
    assert not ok(1, True)
    assert not ok(True, 1)
    assert ok(None, None)
    assert not ok(None, "null")


def test_exact_reason_names_both_types() -> None:
    reason = compile_value(750, CTX).check("750")
    assert reason == 'expected 750 (int), got "750" (str)'


def test_strict_equal_recurses() -> None:
    assert strict_equal({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]})
    assert not strict_equal({"a": [1]}, {"a": ["1"]})
    assert not strict_equal({"a": 1}, {"a": 1, "b": 2})


def test_nested_object_and_array_match_recursively() -> None:
    spec = {
        "address": {"city": {"normalized": "Praha"}, "zip": "11000"},
        "items": [1, {"regex": "A.*"}],
    }
    assert ok(spec, {"address": {"city": " PRAHA ", "zip": "11000"}, "items": [1, "Abc"]})
    reason = compile_value(spec, CTX).check(
        {"address": {"city": "Brno", "zip": "11000"}, "items": [1, "Abc"]}
    )
    assert reason is not None and reason.startswith("address: city:")
    assert not ok(spec, {"address": {"city": "Praha", "zip": "11000"}, "items": [1]})


def test_nested_object_refuses_extra_keys_unless_allowed() -> None:
    assert not ok({"a": 1}, {"a": 1, "b": 2})
    assert compile_value({"a": 1}, CTX, extra=True).check({"a": 1, "b": 2}) is None


def test_normalized() -> None:
    assert ok({"normalized": "Jan  Novák"}, "jan novák")
    assert ok({"normalized": "ｏｒｄｅｒ"}, "ORDER")  # NFKC folds full-width letters
    assert not ok({"normalized": "Novák"}, "Novak")
    assert ok({"normalized": "Novák", "ignore_diacritics": True}, "NOVAK")
    assert not ok({"normalized": "Novák"}, 5)


def test_soft_threshold() -> None:
    assert ok({"soft": "damaged on arrival", "threshold": 0.8}, "damaged on arival")
    assert not ok({"soft": "damaged on arrival", "threshold": 0.95}, "broken")


def test_ignore_accepts_anything_even_absence() -> None:
    m = compile_value({"x": {"ignore": True}}, CTX)
    assert m.check({"x": [1, 2]}) is None
    assert m.check({}) is None


def test_regex_is_a_full_match_on_strings_only() -> None:
    assert ok({"regex": r"ORD-\d{6}"}, "ORD-104821")
    assert not ok({"regex": r"ORD-\d{6}"}, "ORD-1048211")
    assert not ok({"regex": r"\d+"}, 5)


def test_range() -> None:
    assert ok({"range": {"min": 1, "max": 50}}, 50)
    assert not ok({"range": {"min": 1, "max": 50}}, 51)
    assert not ok({"range": {"min": 1}}, True)
    assert not ok({"range": {"max": 5}}, "3")


def test_date_relative_to_suite_now() -> None:
    assert ok({"date": "now-14d"}, "2026-09-05")
    assert ok({"date": "tomorrow"}, "2026-09-20")
    assert ok({"date": "2026-09-20"}, "2026-09-20T08:00:00+02:00")
    assert not ok({"date": "tomorrow"}, "2026-09-19")
    assert not ok({"date": "tomorrow"}, "next day")


def test_datetime_with_time_zone_and_tolerance() -> None:
    assert ok({"datetime": "tomorrow 12:00"}, "2026-09-20T12:00:00")
    assert ok({"datetime": "tomorrow 12:00"}, "2026-09-20T10:00:00Z")  # Prague is UTC+2
    assert not ok({"datetime": "tomorrow 12:00"}, "2026-09-20T12:05:00")
    assert ok({"datetime": "tomorrow 12:00", "tolerance": "5m"}, "2026-09-20T12:05:00")


def test_resolve_offsets_and_errors() -> None:
    assert resolve("today+1w 09:30", CTX.now, PRAGUE).isoformat() == "2026-09-26T09:30:00+02:00"
    with pytest.raises(ValueError, match="needs 'now'"):
        resolve("tomorrow", None, PRAGUE)
    with pytest.raises(ValueError, match="is not a date"):
        resolve("someday", CTX.now, PRAGUE)


def test_one_of_and_contains() -> None:
    assert ok({"one_of": ["express", {"regex": "sta.*"}]}, "standard")
    assert not ok({"one_of": ["express", "standard"]}, "economy")
    assert ok({"contains": "refund"}, "please refund it")
    assert not ok({"contains": "Refund"}, "please refund it")
    assert ok({"contains": "Refund", "ignore_case": True}, "please refund it")
    assert ok({"contains": ["a", {"regex": "b+"}]}, ["x", "bbb", "a"])
    assert not ok({"contains": ["a"]}, ["b"])


def test_missing_value_fails_every_matcher_but_ignore() -> None:
    for spec in (
        1,
        {"normalized": "x"},
        {"regex": "x"},
        {"range": {"min": 1}},
        {"date": "today"},
        {"one_of": [1]},
        {"contains": "x"},
        {"soft": "x"},
    ):
        assert compile_value(spec, CTX).check(MISSING) == "missing"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"regex": "("}, "invalid regex"),
        ({"soft": "x", "treshold": 0.8}, "unknown option 'treshold' for matcher 'soft'"),
        ({"range": {"min": 5, "max": 1}}, "range 'min' is above 'max'"),
        ({"range": [1, 5]}, "'range' needs {min: N, max: N}"),
        ({"ignore": False}, "write 'ignore: true'"),
        ({"date": "whenever"}, "is not a date"),
        ({"one_of": []}, "'one_of' needs a non-empty list"),
        ({"regex": "a", "exact": 1}, "a matcher takes one name"),
        ({"datetime": "now", "tolerance": "soon"}, "is not a duration"),
    ],
)
def test_malformed_matchers_are_refused(spec: Any, message: str) -> None:
    with pytest.raises(
        SpecError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")
    ):
        compile_value(spec, CTX)


def test_spec_error_carries_nested_path() -> None:
    with pytest.raises(SpecError) as info:
        compile_value({"a": [1, {"regex": "("}]}, CTX)
    assert info.value.path == ("a", 1)


def test_literal_object_escape_hatch() -> None:
    assert ok({"exact": {"regex": "x"}}, {"regex": "x"})


def test_tool_default_matcher_applies_to_plain_values_only() -> None:
    assert apply_default("Novák", "normalized") == {"normalized": "Novák"}
    assert apply_default("x", {"use": "soft", "threshold": 0.5}) == {"soft": "x", "threshold": 0.5}
    assert apply_default({"regex": "a"}, "normalized") == {"regex": "a"}
    assert apply_default("x", None) == "x"
    with pytest.raises(SpecError, match="unknown matcher 'fuzzy'"):
        apply_default("x", "fuzzy")

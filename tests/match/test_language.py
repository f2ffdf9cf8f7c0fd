"""The expectation language: one_of with absence, optional, absent, punctuation, did-you-mean."""

from datetime import datetime
from typing import Any

import pytest

from toolproof.match import (
    MISSING,
    OPTIONS,
    REGISTRY,
    Context,
    SpecError,
    compile_value,
    literal_options,
    zone,
)

CTX = Context(now=datetime(2026, 9, 19, 10, 0), tz=zone("Europe/Prague"))


def check(spec: Any, actual: Any) -> str | None:
    return compile_value(spec, CTX).check(actual)


def test_one_of_with_ignore_accepts_an_absent_argument() -> None:
    args = compile_value({"unit": {"one_of": ["celsius", {"ignore": True}]}}, CTX)
    assert args.check({}) is None
    assert args.check({"unit": "kelvin"}) is None  # ignore accepts any value too
    strict = compile_value({"unit": {"one_of": ["celsius", "fahrenheit"]}}, CTX)
    assert strict.check({}) == "unit: missing"


def test_optional_accepts_absence_or_a_matching_value() -> None:
    args = compile_value({"city": "Paris", "unit": {"optional": "celsius"}}, CTX)
    assert args.check({"city": "Paris"}) is None
    assert args.check({"city": "Paris", "unit": "celsius"}) is None
    assert args.check({"city": "Paris", "unit": "kelvin"}) == (
        'unit: expected "celsius", got "kelvin"'
    )
    nested = compile_value({"unit": {"optional": {"one_of": ["celsius", "fahrenheit"]}}}, CTX)
    assert nested.check({"unit": "fahrenheit"}) is None and nested.check({}) is None


def test_absent_inside_one_of() -> None:
    args = compile_value({"unit": {"one_of": ["celsius", {"absent": True}]}}, CTX)
    assert args.check({}) is None
    assert args.check({"unit": "celsius"}) is None
    assert args.check({"unit": "kelvin"}) is not None
    with pytest.raises(SpecError, match="absent: true"):
        compile_value({"absent": "yes"}, CTX)


def test_optional_arguments_are_checked_in_linear_time() -> None:
    """Eight optional parameters need no 2^8 alternatives; 64 are still fast."""
    spec = {f"p{i}": {"optional": i} for i in range(64)}
    args = compile_value(spec, CTX)
    actual = {f"p{i}": i for i in range(0, 64, 2)}
    assert args.check(actual) is None
    assert args.check(dict(actual, p2=3)) == "p2: expected 2, got 3"
    # linear: each present argument reaches its inner matcher once (counted, not timed),
    # by check or by its reason-less twin ok
    calls = 0
    inner_type = type(args.fields["p0"].inner)  # type: ignore[attr-defined]
    originals = {name: getattr(inner_type, name) for name in ("check", "ok")}

    def counting(name: str) -> Any:
        def method(self: Any, value: Any) -> Any:
            nonlocal calls
            calls += 1
            return originals[name](self, value)

        return method

    for name in originals:
        setattr(inner_type, name, counting(name))
    try:
        # compiled again under the counting methods: a matcher may keep its parts' methods
        compile_value(spec, CTX).check(actual)
    finally:
        for name, original in originals.items():
            setattr(inner_type, name, original)
    assert calls == 32


def test_normalized_can_ignore_punctuation_and_that_can_change_meaning() -> None:
    spec = {"normalized": "O'Brien, J.", "ignore_punctuation": True}
    assert check(spec, "obrien j") is None  # punctuation is deleted, as BFCL's checker does
    assert check(spec, "O Brien J") is not None  # a space is not punctuation
    assert check({"normalized": "x**2", "ignore_punctuation": True}, "x*2") is None
    assert check({"normalized": "x**2", "ignore_punctuation": True}, "x2") is None
    washington = {"normalized": "Washington D.C.", "ignore_punctuation": True}
    assert check(washington, "Washington DC") is None
    assert check(washington, "washington, d.c.") is None
    assert check({"normalized": "x**2"}, "x*2") is not None  # never the default
    with pytest.raises(SpecError, match="ignore_punctuation"):
        compile_value({"normalized": "a", "ignore_punctuation": "yes"}, CTX)


def test_a_normalized_failure_shows_both_normalised_forms() -> None:
    reason = check({"normalized": "x**2", "ignore_punctuation": True}, "x+3")
    assert reason == 'expected "x**2" → "x2" (normalized), got "x+3" → "x3"'
    # folding case and spaces alone is not worth an arrow
    assert check({"normalized": "Jan"}, "Jana") == 'expected "Jan" (normalized), got "Jana"'
    reason = check({"normalized": "Novák", "ignore_diacritics": True}, "Nováková")
    assert reason == 'expected "Novák" → "novak" (normalized), got "Nováková" → "novakova"'


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ({"regx": "^a$"}, "did you mean 'regex'?"),
        ({"one_off": [1, 2]}, "did you mean 'one_of'?"),
        ({"normalised": "Novák"}, "did you mean 'normalized'?"),
    ],
)
def test_a_misspelt_matcher_gets_did_you_mean(spec: Any, hint: str) -> None:
    with pytest.raises(SpecError, match=hint.replace("?", r"\?")):
        compile_value(spec, CTX)


def test_a_literal_object_far_from_every_matcher_name_stays_literal() -> None:
    assert check({"data": 1}, {"data": 1}) is None
    assert check({"street": "x"}, {"street": "x"}) is None


def test_matchers_register_themselves_once() -> None:
    assert set(OPTIONS) == set(REGISTRY)
    assert {"optional", "absent"} <= set(REGISTRY)
    assert OPTIONS["normalized"] == {"ignore_diacritics", "ignore_punctuation"}


def test_literal_options_lists_the_literals_inside_matchers() -> None:
    assert literal_options("kelvin") == [((), "kelvin")]
    assert literal_options({"one_of": [None, "kelvin", {"regex": "k.*"}]}) == [
        (("one_of", 0), None),
        (("one_of", 1), "kelvin"),
    ]
    assert literal_options({"optional": {"exact": 3}}) == [(("optional",), 3)]
    assert literal_options({"soft": "x"}) == []
    assert MISSING is not None

"""The fast JSON reader gives exactly what json.loads gives, errors included."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.records._read import loads

CASES = [
    '{"a": NaN, "b": Infinity}',
    '"\\ud800"',
    "1" + "0" * 30,
    "-" + "9" * 25,
    "9223372036854775807",
    "18446744073709551616",
    "1.5e300",
    "0.1",
    '{"k": 1, "k": 2}',
    "[" * 3000 + "]" * 3000,
]


@pytest.mark.parametrize("text", CASES)
def test_same_value_and_type_as_json(text: str) -> None:
    try:
        expected = json.loads(text)
    except RecursionError:
        with pytest.raises(RecursionError):
            loads(text)
        return
    got = loads(text)
    assert repr(got) == repr(expected)
    assert type(got) is type(expected)


@pytest.mark.parametrize("text", ['{"a": }', "[1, 2", "", "{'a': 1}"])
def test_errors_are_json_errors(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert str(ours.value) == str(theirs.value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_round_trip_matches_json(value: object) -> None:
    text = json.dumps(value)
    assert repr(loads(text)) == repr(json.loads(text))

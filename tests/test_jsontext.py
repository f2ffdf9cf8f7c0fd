"""JSON text toolproof writes: lone surrogates escaped, no NaN or Infinity, lossless round trip."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof._shared.json_text import dump_model, dumps, finite
from toolproof.types import Record, Response, Risk

# every code point, lone surrogates included
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=20,
)


def _strict_loads(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} written")

    return json.loads(text, parse_constant=refuse)


@settings(max_examples=300)
@given(JSON_VALUES)
def test_dumps_is_valid_utf8_json_and_reads_back_with_only_non_finite_numbers_nulled(
    value: Any,
) -> None:
    text = dumps(value)
    text.encode("utf-8")  # never raises: surrogates are escaped
    assert _strict_loads(text) == finite(value)


@settings(max_examples=300)
@given(ANY_TEXT)
def test_a_record_with_any_text_round_trips(text: str) -> None:
    record = Record(case_id=text or "c", request={"messages": [text]}, response=Response(text=text))
    line = dump_model(record, exclude_none=True)
    back = Record.model_validate(_strict_loads(line))
    assert back == record


def test_lone_surrogate_is_written_as_its_escape_and_other_text_stays_readable() -> None:
    assert dumps({"t": "é\ud800x"}) == '{"t":"é\\ud800x"}'


def test_non_finite_numbers_become_null() -> None:
    assert dumps([math.nan, math.inf, -math.inf, 1.5]) == "[null,null,null,1.5]"
    record = Record(case_id="a", latency_ms=math.nan, request={"x": math.inf})
    assert '"latency_ms":null' in dump_model(record, exclude_none=True)
    assert _strict_loads(dump_model(record))["request"] == {"x": None}


def test_a_lone_surrogate_in_a_mapping_key_is_written_too() -> None:
    record = Record(case_id="a", request={"k\ud800": ["v\udfff"]})
    line = dump_model(record, exclude_none=True)
    assert '"k\\ud800"' in line
    assert Record.model_validate(_strict_loads(line)) == record


def _copying_finite(data: Any) -> Any:
    """What finite gave when it copied every container."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _copying_finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_copying_finite(v) for v in data]
    return data


@settings(max_examples=300)
@given(JSON_VALUES)
def test_finite_gives_what_a_full_copy_gives_and_the_same_json(value: Any) -> None:
    assert finite(value) == _copying_finite(value)
    assert json.dumps(finite(value)) == json.dumps(_copying_finite(value))


def test_finite_copies_only_the_containers_that_hold_a_non_finite_number() -> None:
    clean = {"a": [1, 2.5, {"b": "x"}], "c": (1, 2)}
    assert finite(clean) is clean
    data = {"keep": [1.0, 2.0], "deep": {"x": [0.5, math.nan]}, "after": {"y": 1}}
    out = finite(data)
    assert out == {"keep": [1.0, 2.0], "deep": {"x": [0.5, None]}, "after": {"y": 1}}
    assert out["keep"] is data["keep"] and out["after"] is data["after"]
    assert math.isnan(data["deep"]["x"][1])  # the data given is left as it was


def _reference(data: Any, indent: int) -> str:
    """What dumps wrote with the standard library alone, before its faster indented path."""
    from pydantic_core import to_jsonable_python

    from toolproof._shared.json_text import _escape_surrogates, has_surrogates

    text = json.dumps(
        finite(data), ensure_ascii=False, allow_nan=False, indent=indent,
        default=to_jsonable_python,
    )  # fmt: skip
    return _escape_surrogates(text) if has_surrogates(text) else text


PLAIN_OR_NOT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT
    | st.sampled_from([Risk.high, 2**70, -0.0, 1e-05, 1e16, "\u2028\x7f\x00\ud800"]),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(ANY_TEXT, inner, max_size=4)
    | st.dictionaries(st.integers() | st.booleans() | st.none(), inner, max_size=2),
    max_leaves=25,
)  # fmt: skip


@given(PLAIN_OR_NOT, st.sampled_from([0, 1, 2, 4]))
@settings(max_examples=400, deadline=None)
def test_indented_text_is_what_the_standard_library_writes(data: Any, indent: int) -> None:
    assert dumps(data, indent=indent) == _reference(data, indent)


def test_a_report_sized_document_is_indented_the_same() -> None:
    failure = {"case_id": "c-1", "attempt": 0, "reasons": ["a", "b \u00e9"], "diff": "x\ny"}
    data = {
        "t": {"rate": {"k": 1, "n": 3, "low": 0.06, "high": 0.79}, "empty": {}, "none": []},
        "failures": [dict(failure, attempt=i, cost=i / 7) for i in range(500)],
    }
    assert dumps(data, indent=2) == _reference(data, 2)
    assert dumps(data, indent=2).count("\n") > 500 * 8


EDGES = st.sampled_from(
    [1e-4, 9.999999999999999e-05, -1e-4, 1e16, 9999999999999998.0, -1e16, 0.0, -0.0, 1.5e-7,
     math.nan, math.inf, 2**63 - 1, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, True, "\ud800"]
)  # fmt: skip
PLAIN_AT_THE_EDGES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT | EDGES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(ANY_TEXT, inner, max_size=4)
    ),
    max_leaves=25,
)


@given(PLAIN_AT_THE_EDGES)
@settings(max_examples=600, deadline=None)
def test_two_space_indented_text_is_the_standard_librarys_at_the_edges_of_orjson(
    data: Any,
) -> None:
    assert dumps(data, indent=2) == _reference(data, 2)


def test_plain_data_is_indented_by_orjson(monkeypatch: Any) -> None:
    """A summary.json's data is written by orjson, not by the pure-Python indenter."""
    from toolproof._shared import json_text as _jsontext

    def refuse(*args: object) -> str:
        raise AssertionError("indented in pure Python")

    monkeypatch.setattr(_jsontext, "_indented", refuse)
    data = {"rate": {"k": 1, "n": 3, "low": 0.0611, "high": 0.79}, "l": [1, None, True, "é"]}
    assert dumps(data, indent=2) == _reference(data, 2)
    for unlike in ({"cost": 1e-05}, {"n": 2**64}, {"risk": Risk.high}, {1: "a"}, ["\ud800"]):
        with pytest.raises(AssertionError, match="pure Python"):
            dumps(unlike, indent=2)

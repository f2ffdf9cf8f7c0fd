"""toolproof._shared.locate: JSON files are located exactly where the YAML reader located them."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolproof._shared.locate import LazyLocator, json_positions
from toolproof.errors import SuiteError
from toolproof.suite._yaml import load_yaml

# Text the YAML reader takes as it is: printable characters, and the line breaks
# it counts (a raw U+2028 or NEL is valid inside a JSON string).
_TEXT = st.text(
    st.characters(
        codec="utf-8",
        exclude_categories=("Cc", "Cs", "Co", "Cn"),
        include_characters="\u2028\u2029\x85\t",
    ),
    max_size=12,
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=25,
)


def _yaml_positions(text: str) -> dict[Any, Any]:
    return load_yaml(text, "f.json")[1]


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.sampled_from([None, 0, 2, "\t"]), st.booleans())
def test_json_positions_are_the_yaml_readers(value: Any, indent: Any, ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    if indent == "\t":  # tab indentation is JSON the YAML reader refuses
        assert json_positions(text)[()] == (1, 1)
        return
    try:
        expected = _yaml_positions(text)
    except SuiteError:  # a line break inside a key: JSON, but not YAML
        assume(False)
    found = json_positions(text)
    assert list(found.values()) == list(expected.values())
    if not (ascii_only and any(ord(c) > 0xFFFF for c in text_of(value))):
        assert found == expected
    # else the YAML reader read an escaped surrogate pair as two lone surrogates;
    # the paths hold the key as JSON reads it, the data they locate


def text_of(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def test_positions_of_a_pretty_printed_tools_file() -> None:
    tools = [
        {"name": "a", "parameters": {"type": "object", "properties": {"x": {"enum": [1, "é"]}}}},
        {"name": "b", "description": "two\u2028lines", "parameters": {}},
    ]
    text = "  " + json.dumps({"tools": tools}, indent=4, ensure_ascii=False) + "\n"
    found = json_positions(text)
    assert found == _yaml_positions(text)
    # line 20 of the newlines, and one more for the U+2028 the YAML reader counts too
    assert found[("tools", 1, "parameters")] == (21, 13)


def test_lazy_locator_works_positions_out_once() -> None:
    calls: list[int] = []

    def positions() -> dict[Any, Any]:
        calls.append(1)
        return {(): (1, 1), (0,): (2, 5)}

    where = LazyLocator("tools.json", positions)
    assert calls == []
    assert str(where.error((0, "name"), "bad")) == "tools.json:2:5: [0].name: bad"
    assert str(where.error((), "worse")) == "tools.json:1:1: worse"
    assert calls == [1]


def test_a_value_that_fits_no_union_member_gets_the_closest_members_errors_only() -> None:
    from pydantic import ValidationError

    from toolproof._shared.locate import Locator, all_errors, first_error
    from toolproof.types._case import SimulatedUser

    for entry, where, words in (
        ({"offer": "sort", "say": "x"}, "script[1].offer", "valid list"),
        ({"offer": [1], "say": "x"}, "script[1].offer[0]", "valid string"),
        ({"when": {"contains": "a"}, "offer": [], "say": "x"}, "script[1].offer", "at least 1"),
    ):
        data = {"script": ["hi", entry]}
        try:
            SimulatedUser.model_validate(data)
        except ValidationError as exc:
            errors = all_errors(exc, data, SimulatedUser, Locator("u.yaml"))
            first = first_error(exc, data, SimulatedUser, Locator("u.yaml"))
        else:  # pragma: no cover - the entry is invalid
            raise AssertionError(entry)
        assert [str(e) for e in errors] == [str(first)], errors
        assert f"u.yaml: {where}: " in str(first) and words in str(first), first
    # a value that fits no member at all: one line, at the value
    data = {"script": ["hi", 5]}
    try:
        SimulatedUser.model_validate(data)
    except ValidationError as exc:
        (only,) = all_errors(exc, data, SimulatedUser, Locator("u.yaml"))
    assert str(only).startswith("u.yaml: script[1]: "), only

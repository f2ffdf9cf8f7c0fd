"""Rows for the store: text lists written as the standard library writes them."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.store._write import _dumps, _dumps_text
from toolproof.types import Check, FailureClass, Stage

# every code point, lone surrogates included
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))
FINDING = st.fixed_dictionaries(
    {"stage": st.none() | ANY_TEXT, "failure": st.none() | ANY_TEXT, "message": ANY_TEXT}
)


@settings(max_examples=300)
@given(st.lists(ANY_TEXT, max_size=5) | st.lists(FINDING, max_size=3))
def test_text_lists_are_written_as_the_standard_library_writes_them(value: list[Any]) -> None:
    assert _dumps_text(value) == _dumps(value)


def test_a_lone_surrogate_which_orjson_refuses_is_written_as_before() -> None:
    assert _dumps_text(["a\ud800"]) == _dumps(["a\ud800"])
    assert _dumps_text(["é\n\x00\u2028"]) == '["é\\n\\u0000\u2028"]'


FAILURE = st.fixed_dictionaries(
    {
        "case_id": ANY_TEXT,
        "attempt": st.integers(min_value=0, max_value=2**63 - 1),
        "risk": st.sampled_from(["low", "medium", "high"]),
        "failure": st.sampled_from(["missed_call", "wrong_arguments", "unknown_tool"]),
        "reasons": st.lists(ANY_TEXT, max_size=3),
        "diff": ANY_TEXT,
    }
)


@settings(max_examples=200)
@given(st.lists(FAILURE, max_size=4))
def test_failure_parts_from_a_log_are_the_bytes_pydantic_writes(failures: list[Any]) -> None:
    from toolproof.store._write import _FAILURE_FIELDS, _FAILURE_LIST, _failure_json

    failures = [{k: f[k] for k in _FAILURE_FIELDS} for f in failures]  # a log's row order
    items = _FAILURE_LIST.validate_python(failures)
    try:
        expected = _FAILURE_LIST.dump_json(items).decode("utf-8")
    except ValueError:  # a lone surrogate: pydantic cannot write it, nor can the store
        return
    assert _failure_json(failures) == expected


CHECK = st.tuples(
    st.sampled_from(list(Stage)), st.none() | st.sampled_from(list(FailureClass)), ANY_TEXT
)


@settings(max_examples=200)
@given(st.lists(ANY_TEXT, max_size=4), st.lists(CHECK, max_size=3))
def test_names_and_findings_written_once_are_what_writing_them_each_time_gives(
    names: list[str], checks: list[tuple[Stage, FailureClass | None, str]]
) -> None:
    from toolproof.store import _write

    found = tuple(Check(stage, failure, message) for stage, failure, message in checks)
    direct = _dumps_text(
        [
            {
                "stage": c.stage.value,
                "failure": c.failure.value if c.failure else None,
                "message": c.message,
            }
            for c in found
        ]
    )
    for _ in range(2):  # written, then taken from what was written
        assert _write._names_text(tuple(names)) == _dumps_text(names)
        assert _write._findings_text(found) == direct


def test_the_texts_written_once_are_bounded(monkeypatch: Any) -> None:
    from toolproof.store import _write

    monkeypatch.setattr(_write, "_TEXTS_SIZE", 8)
    monkeypatch.setattr(_write, "_TEXTS", {})
    for i in range(50):
        assert _write._names_text((f"tool_{i}",)) == f'["tool_{i}"]'
        assert len(_write._TEXTS) <= 8

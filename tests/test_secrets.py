"""The redactor: every loaded key replaced, in text and data, and nothing else touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolproof._shared.json_escapes import unescaped
from toolproof._shared.loaded_keys import MIN_LENGTH, PLACEHOLDER, Redactor
from toolproof.types import AttemptError, Outcome, Record, Response

KEY = "sk-proj-planted-0123456789abcdef"


def test_text_and_nested_data_are_redacted_everywhere() -> None:
    red = Redactor([KEY])
    assert red.text(f"Incorrect API key provided: {KEY}.") == (
        f"Incorrect API key provided: {PLACEHOLDER}."
    )
    data = {"a": [KEY, {"b": f"x{KEY}y"}], KEY: 1, "n": 3.5}
    assert red.value(data) == {
        "a": [PLACEHOLDER, {"b": f"x{PLACEHOLDER}y"}],
        PLACEHOLDER: 1,
        "n": 3.5,
    }


def test_a_record_holding_a_key_is_copied_redacted_and_a_clean_one_is_kept() -> None:
    red = Redactor([KEY])
    leaky = Record(
        case_id="a",
        outcome=Outcome.rejected,
        request={"url": f"https://x/?key={KEY}"},
        error=AttemptError(kind="rejected", message="HTTP 401", status=401, body=f'"{KEY}"'),
        response=Response(text=KEY, raw={"echo": KEY}),
    )
    clean = red.model(leaky)
    assert KEY not in clean.model_dump_json() and PLACEHOLDER in clean.model_dump_json()
    assert clean.error is not None and clean.error.body == f'"{PLACEHOLDER}"'
    other = Record(case_id="b", response=Response(text="nothing secret"))
    assert red.model(other) is other


def test_the_longer_of_two_overlapping_keys_is_replaced_whole() -> None:
    short, long = "abcdefgh1234", "abcdefgh1234-and-more"
    assert Redactor([short, long]).text(long) == PLACEHOLDER


def test_short_placeholder_values_are_not_treated_as_keys() -> None:
    assert Redactor(["EMPTY", "x" * (MIN_LENGTH - 1)]).text("EMPTY xxxxxxx") == "EMPTY xxxxxxx"
    assert not Redactor(["EMPTY"])


def test_a_record_with_a_lone_surrogate_is_redacted_too() -> None:
    leaky = Record(case_id="a", request={"k\ud800": f"{KEY}\ud800"})
    clean = Redactor([KEY]).model(leaky)
    assert clean.request == {"k\ud800": f"{PLACEHOLDER}\ud800"}


def test_every_secret_shaped_variable_is_redacted_not_only_the_loaded_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24 item 5: an MCP server read ANTHROPIC_API_KEY and GITHUB_TOKEN from
    toolproof's /proc environ; they reached records.jsonl unredacted."""
    from toolproof._shared.loaded_keys import environment_secrets
    from toolproof.records import RecordWriter

    planted = {
        "ANTHROPIC_API_KEY": "sk-ant-planted-0123456789",
        "GITHUB_TOKEN": "ghp_planted0123456789abcdef",
        "DEPLOY_SECRET": "s3cr3t-planted-value",
        "PGPASSWORD": "planted-password-1",
        "SOMETHING_ELSE": "hf_plantedvalue0123",  # a known prefix, whatever the name
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLAIN_SETTING", "not-a-secret-at-all")
    assert set(planted.values()) <= environment_secrets()
    assert "not-a-secret-at-all" not in environment_secrets()
    path = tmp_path / "records.jsonl"
    with RecordWriter(path) as writer:
        writer.write(Record(case_id="a", response=Response(text=" ".join(planted.values()))))
    text = path.read_text()
    assert not any(value in text for value in planted.values()), text
    assert text.count(PLACEHOLDER) == len(planted)


def _escaped(text: str, chars: str) -> str:
    """``text`` with each character of ``chars`` written as a JSON ``\\uXXXX`` escape."""
    return "".join(f"\\u{ord(c):04x}" if c in chars else c for c in text)


@pytest.mark.parametrize(
    "hidden",
    [
        lambda k: "key: " + _escaped(k, "-"),  # an escape inside the key
        lambda k: '{"auth": "' + _escaped(k, k[:3]) + '", "more": ',  # truncated JSON
        lambda k: 'she said \\"' + k + '\\" twice',  # quoted inside a string
        lambda k: "".join(f"\\u{ord(c):04x}" for c in k),  # every character escaped
    ],
    ids=["dash", "truncated-json", "quoted", "all"],
)
def test_a_key_spelled_with_json_escapes_inside_text_is_redacted(hidden: object) -> None:
    red = Redactor([KEY])
    text = hidden(KEY)  # type: ignore[operator]
    out = red.text(text)
    assert PLACEHOLDER in out
    view = unescaped(out)
    assert KEY not in out and (view is None or KEY not in view[0])
    # and in a record, where the text is a model's argument text
    record = Record(
        case_id="a", response=Response(tool_calls=[{"name": "t", "raw_arguments": text}])
    )
    line = red.model(record).model_dump_json()
    kept = json.loads(line)["response"]["tool_calls"][0]["raw_arguments"]
    assert KEY not in kept and KEY not in (unescaped(kept) or (kept,))[0]
    assert PLACEHOLDER in line


def test_text_with_escapes_but_no_key_is_kept() -> None:
    red = Redactor([KEY])
    text = 'caf\\u00e9 {"a": "\\u0041"}'
    assert red.text(text) == text
    record = Record(case_id="a", response=Response(text=text))
    assert red.model(record) is record

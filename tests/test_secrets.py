"""The redactor: every loaded key replaced, in text and data, and nothing else touched."""

from __future__ import annotations

from toolproof._secrets import MIN_LENGTH, PLACEHOLDER, Redactor
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

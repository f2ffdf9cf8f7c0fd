from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.records import parse_arguments, read_records, tool_call_from_raw


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_raw_argument_text_is_parsed_not_repaired(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"case_id": "a", "response": {"tool_calls": [{"name": "f", "raw_arguments": "{\\"n\\": \\"750\\"}"}]}}\n'
        '{"case_id": "b", "response": {"tool_calls": [{"name": "f", "raw_arguments": "{n: 1,}"}]}}\n',
    )
    a, b = read_records(path)
    assert a.response is not None and a.response.tool_calls[0].arguments == {"n": "750"}
    assert b.response is not None
    bad = b.response.tool_calls[0]
    assert bad.arguments is None and bad.raw_arguments == "{n: 1,}"
    assert bad.parse_error is not None and bad.parse_error.startswith("Expecting property name")


def test_given_parsed_arguments_are_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"case_id": "a", "response": {"tool_calls": [{"name": "f", '
        '"raw_arguments": "{\\"n\\": 1}", "arguments": {"n": 1}}]}}\n',
    )
    assert read_records(path)[0].response.tool_calls[0].arguments == {"n": 1}  # type: ignore[union-attr]


def test_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, '{"case_id": "a"}\n{"case_id": "b", "resp')
    with pytest.warns(UserWarning, match="incomplete last line"):
        records = read_records(path)
    assert [r.case_id for r in records] == ["a"]


def test_complete_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, '{"case_id": "a"}\n{"case_id": "b"}')
    assert [r.case_id for r in read_records(path)] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"case_id": "a"}\nnot json\n{"case_id": "c"}\n',
            "r.jsonl:2:1: not valid JSON: Expecting value",
        ),
        (
            '{"case_id": "a", "respons": {}}\n',
            "r.jsonl:1:18: respons: unknown key 'respons'; did you mean 'response'?",
        ),
        (
            '{"case_id": "a", "attempt": "first"}\n',
            "r.jsonl:1:18: attempt: Input should be a valid integer, unable to parse string as an "
            "integer, got 'first'",
        ),
        (
            '{"format": "toolproof.record/9", "case_id": "a"}\n',
            "r.jsonl:1:1: format: records format 'toolproof.record/9' is newer than this "
            "toolproof reads (up to toolproof.record/3): read it with the toolproof that "
            "wrote it, or upgrade",
        ),
        (
            '{"format": "other/1", "case_id": "a"}\n',
            "r.jsonl:1:1: format: unknown records format 'other/1' (this toolproof reads "
            "toolproof.record/1, toolproof.record/2, toolproof.record/3)",
        ),
        ("[1, 2]\n", "r.jsonl:1:1: expected a JSON object (one record per line)"),
        (
            '{"case_id": "a", "outcome": "exploded"}\n',
            "r.jsonl:1:18: outcome: Input should be 'ok', 'rate_limited', 'server_error', 'timeout', "
            "'network', 'rejected', 'harness_error' or 'user_error', got 'exploded'",
        ),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SuiteError) as info:
        read_records(path)
    assert str(info.value).replace(str(tmp_path) + "/", "") == message


def test_parse_arguments_never_raises() -> None:
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments("[" * 100_000)[1] == "nested too deeply to parse"
    assert tool_call_from_raw("f", "").parse_error == "Expecting value at line 1 column 1"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_with_file_and_line(tmp_path: Path, literal: str) -> None:
    path = write(tmp_path, '{"case_id": "a"}\n{"case_id": "b", "latency_ms": ' + literal + "}\n")
    with pytest.raises(SuiteError) as info:
        read_records(path)
    assert str(info.value).startswith(f"{path}:2:")
    assert f"{literal.lstrip('-')} is not a JSON number" in str(info.value)


def test_the_identity_of_a_line_toolproof_wrote_is_read_without_parsing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.records import _read, iter_keys
    from toolproof.records._write import record_line
    from toolproof.types import Record

    lines = [
        record_line(Record(case_id="a", target="openai:m", attempt=3))[1],
        record_line(Record(format="toolproof.record/1", case_id="b é", target="t"))[1],
        b'{"format": "toolproof.record/2", "case_id": "c", "target": null, "attempt": 0}\n',
    ]
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(lines))

    def parse(*_: object, **__: object) -> None:
        raise AssertionError("a line was parsed")

    monkeypatch.setattr(_read, "loads", parse)
    monkeypatch.setattr(_read, "_parse_line", parse)
    assert list(iter_keys(path)) == [(1, "a", "openai:m", 3), (2, "b é", "t", 0), (3, "c", None, 0)]

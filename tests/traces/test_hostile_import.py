"""traces import on hostile input: each is a located, counted skip, never a silent change."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolproof.traces import Redactor, import_traces
from toolproof.traces._read import source_files

T = "5b8efff798038103d269b633813fc60c"
DEEP = 10_000


def _chat(span: str, inputs: str, outputs: str) -> str:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": inputs,
        "gen_ai.output.messages": outputs,
    }
    obj = {
        "traceId": T,
        "spanId": span,
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": "1764400000000000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [obj]}]}]})


USER = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}])


def _call(arguments: str) -> str:
    return (
        '[{"role": "assistant", "parts": [{"type": "tool_call", "name": "get_weather", '
        f'"id": "c1", "arguments": {arguments}}}]}}]'
    )


def test_json_text_nested_too_deeply_skips_the_span_naming_the_attribute(tmp_path: Path) -> None:
    deep = "[" * DEEP + "]" * DEEP
    src = tmp_path / "t.jsonl"
    src.write_text(
        "\n".join(
            [
                _chat("eee19b7ec3c1b171", USER, _call('{"city": "Paris"}')),  # fine
                _chat("eee19b7ec3c1b172", USER[:-1] + ", " + deep + "]", _call("{}")),
                _chat("eee19b7ec3c1b173", USER, _call('{"a": ' + deep + "}")),
            ]
        )
        + "\n"
    )
    out = tmp_path / "o"
    report = import_traces([src], out, label="t", redactor=Redactor())
    problems = [p.render() for p in report.problems]
    assert any(
        "t.jsonl:2 (span eee19b7ec3c1b172)" in p and "gen_ai.input.messages" in p and "deep" in p
        for p in problems
    ), problems
    assert any(
        "t.jsonl:3 (span eee19b7ec3c1b173)" in p and "gen_ai.output.messages" in p for p in problems
    ), problems
    # neither is read as a span without content, nor as a decision that made no call
    assert report.without_content == 0
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    assert [d["span_id"] for d in decisions] == ["eee19b7ec3c1b171"]
    assert decisions[0]["calls"][0]["tool"] == "get_weather"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")
def test_links_in_a_trace_folder_are_not_followed_and_are_counted(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text(_chat("eee19b7ec3c1b179", USER, _call("{}")) + "\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_text(_chat("eee19b7ec3c1b171", USER, _call("{}")) + "\n")
    (data / "file-link.jsonl").symlink_to(outside / "secret.jsonl")
    (data / "folder-link").symlink_to(outside)
    problems: list = []
    assert source_files([data], problems) == [data / "a.jsonl"]
    shown = sorted(p.render() for p in problems)
    assert len(shown) == 2 and all("symbolic link" in p for p in shown), shown
    assert "file-link.jsonl" in shown[0] and "folder-link" in shown[1]
    report = import_traces([data], tmp_path / "o", label="t", redactor=Redactor())
    assert report.spans == 1 and report.as_json(Redactor())["skipped"]["symbolic link"] == 2


KEY = "sk-proj-abcDEF1234567890abcDEF1234567890abcd"


def test_no_fragment_of_a_secret_survives_in_a_problem_message(tmp_path: Path) -> None:
    name = f"tool jane.doe@corp.example.net {KEY}"  # not a valid tool name: a reported problem
    defs = [{"type": "function", "name": name, "parameters": {"type": "object"}}]
    out = (
        '[{"role": "assistant", "parts": [{"type": "tool_call", "name": '
        + json.dumps(name)
        + ', "id": "c1", "arguments": {}}]}]'
    )
    line = json.loads(_chat("eee19b7ec3c1b171", USER, out))
    attrs = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    attrs.append({"key": "gen_ai.tool.definitions", "value": {"stringValue": json.dumps(defs)}})
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(line) + "\n")
    folder = tmp_path / "o"
    report = import_traces([src], folder, label="t", redactor=Redactor())
    assert report.problems, "the invalid definition is reported"
    written = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    written += json.dumps(report.as_json(Redactor()))
    for fragment in (KEY[-12:], KEY[8:20], "jane.doe", "corp.example"):
        assert fragment not in written, fragment


def test_clip_never_cuts_inside_a_word() -> None:
    from toolproof.traces._values import clip

    assert clip("short", 10) == "short"
    assert clip(f"key {KEY} end", 20) == "key …"
    assert clip(f"'{KEY}'", 20) == "'…"
    assert clip("a b c", 3) == "a b…"


def test_a_container_of_the_wrong_type_is_counted_not_skipped_unseen(tmp_path: Path) -> None:
    span = json.loads(_chat("eee19b7ec3c1b171", USER, _call("{}")))
    spans = span["resourceSpans"][0]["scopeSpans"][0]["spans"]
    src = tmp_path / "t.jsonl"
    src.write_text(
        "\n".join(
            [
                json.dumps(span),  # 1: fine
                '{"resourceSpans": 5}',  # 2
                json.dumps({"resourceSpans": [{"scopeSpans": {"spans": spans}}]}),  # 3
                json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans[0]}]}]}),  # 4
                '{"resourceLogs": [{"scopeLogs": [{"logRecords": "x"}]}]}',  # 5
                '{"resourceSpans": []}',  # 6: an empty export is no damage
            ]
        )
        + "\n"
    )
    report = import_traces([src], tmp_path / "o", label="t", redactor=Redactor())
    assert [(p.line, p.message.split(" is")[0]) for p in report.problems] == [
        (2, "resourceSpans"),
        (3, "scopeSpans"),
        (4, "spans"),
        (5, "logRecords"),
    ]
    assert report.spans == 1


def test_a_feedback_beyond_64_bits_is_kept_not_a_skipped_span(tmp_path: Path) -> None:
    line = json.loads(_chat("eee19b7ec3c1b171", USER, _call("{}")))
    attrs = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    big = "-99999999999999999999999999"
    attrs.append({"key": "feedback.score", "value": {"intValue": big}})
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(line) + "\n")
    out = tmp_path / "o"
    report = import_traces([src], out, label="t", redactor=Redactor())
    assert report.problems == [] and report.cases == 1
    prov = json.loads((out / "provenance.jsonl").read_text())
    assert prov["feedback"] == int(big)


def _kv(**values: object) -> dict:
    return {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in values.items()]}}


def test_a_structured_message_holding_an_integer_beyond_64_bits_keeps_its_content(
    tmp_path: Path,
) -> None:
    def text(v: str) -> dict:
        return {"stringValue": v}

    def parts(*items: dict) -> dict:
        return {"arrayValue": {"values": list(items)}}

    big = "18446744073709551616"  # 2**64: orjson refuses it
    user = _kv(role=text("user"), parts=parts(_kv(type=text("text"), content=text("Refund"))))
    call = _kv(
        role=text("assistant"),
        parts=parts(
            _kv(
                type=text("tool_call"),
                name=text("refund"),
                id=text("c1"),
                arguments=_kv(amount={"intValue": big}),
            )
        ),
    )
    span = {
        "traceId": T,
        "spanId": "eee19b7ec3c1b171",
        "name": "chat m",
        "startTimeUnixNano": "1764400000000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": text("chat")},
            {"key": "gen_ai.input.messages", "value": parts(user)},
            {"key": "gen_ai.output.messages", "value": parts(call)},
        ],
    }
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    out = tmp_path / "o"
    report = import_traces([src], out, label="t", redactor=Redactor())
    assert report.without_content == 0 and report.cases == 1
    case = json.loads((out / "cases.jsonl").read_text())
    assert case["expect"]["calls"][0]["args"] == {"amount": int(big)}
    decision = json.loads((out / "decisions.jsonl").read_text())
    assert [c["tool"] for c in decision["calls"]] == ["refund"]


def test_a_span_id_of_luhn_valid_digits_is_kept_so_the_case_still_names_its_span(
    tmp_path: Path,
) -> None:
    trace, span = "41111111111111114111111111111111", "4111111111111111"
    line = json.loads(_chat(span, USER, _call("{}")))
    line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = trace
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")  # line 2: a duplicate
    out = tmp_path / "o"
    report = import_traces([src], out, label="t", redactor=Redactor())
    shown = report.as_json(Redactor())["problems"]
    assert shown == [
        f"{src}:2 (span {span}): a span with this ID was read before; this copy skipped"
    ]
    prov = json.loads((out / "provenance.jsonl").read_text())
    decision = json.loads((out / "decisions.jsonl").read_text())
    assert (prov["trace_id"], prov["span_id"]) == (trace, span)
    assert (decision["trace_id"], decision["span_id"]) == (trace, span)
    assert prov["case_id"].endswith(span)


def test_millions_of_damaged_lines_are_counted_without_holding_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.traces._read import Problems
    from toolproof.traces._render import render_import

    monkeypatch.setattr(Problems, "KEEP", 50)
    src = tmp_path / "t.jsonl"
    src.write_text("{not json}\n" * 1000)
    report = import_traces([src], tmp_path / "o", label="t", redactor=Redactor())
    assert len(report.problems) == 50  # held
    data = report.as_json(Redactor())
    assert data["skipped"] == {"malformed JSON": 1000}  # counted
    assert "... 990 more (import-report.json names the first 50)" in render_import(data)

"""traces import: every fixture a real library wrote, end to end, and damaged input."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.evaluate import evaluate
from toolproof.suite import load_suite_checked
from toolproof.traces import Redactor, import_traces

FIXTURES = Path(__file__).parent / "fixtures"

WITH_CONTENT = {
    "otelv2 v1.28-v1.36 logs": (
        ["otelv2-legacy-content.spans.jsonl", "otelv2-legacy-content.logs.jsonl"],
        "gen_ai v1.28-v1.36 log events",
    ),
    "otelv2 v1.37+ attributes": (["otelv2-latest-content.spans.jsonl"], "gen_ai v1.37+ attributes"),
    "otelv2 without opt-in": (
        ["otelv2-latest-noptin-content.spans.jsonl"],
        "gen_ai v1.37+ attributes",
    ),
    "otelv2 event_only (structured values)": (
        ["otelv2-latest-eventonly.spans.jsonl", "otelv2-latest-eventonly.logs.jsonl"],
        "gen_ai v1.37+ attributes",
    ),
    "openinference": (["openinference.spans.jsonl"], "OpenInference"),
    "openinference console": (["openinference.console.txt"], "OpenInference"),
    "langfuse MessageToJson": (["langfuse.messagetojson.json"], "Langfuse"),
    "langfuse OTLP/protobuf body": (["langfuse.pb"], "Langfuse"),
    "openllmetry indexed": (["openllmetry-indexed.spans.jsonl"], "OpenLLMetry indexed keys"),
    "langfuse blob export": (["langfuse-blob-export.jsonl"], "Langfuse"),
    "openlit": (["openlit.spans.jsonl", "openlit.logs.jsonl"], "gen_ai v1.37+ attributes"),
}


def _import(tmp_path: Path, names: list[str], **kw: object) -> tuple[Path, dict]:
    out = tmp_path / "out"
    report = import_traces(
        [FIXTURES / n for n in names],
        out,
        label="t",
        redactor=Redactor(),
        **kw,  # type: ignore[arg-type]
    )
    return out, report.as_json(Redactor())


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("shape", list(WITH_CONTENT))
def test_each_library_shape_imports_validates_and_scores(tmp_path: Path, shape: str) -> None:
    names, layout = WITH_CONTENT[shape]
    out, report = _import(tmp_path, names)
    assert report["layouts"] == {layout: report["chat_spans"]}
    cases = _lines(out / "cases.jsonl")
    assert len(cases) == report["replay_cases"] > 0
    loaded, problems = load_suite_checked(out)
    assert problems == []
    suite = loaded.suite
    assert len(suite.cases) == len(cases)
    records = out / "runs" / "prod-t" / "records.jsonl"
    ev = evaluate(suite, [records])
    (target,) = ev.targets.values()
    assert target.target == "prod:t"
    failed = [v.case_id for v in target.verdicts if not v.passed]
    assert not failed, failed  # production agrees with itself
    prov = _lines(out / "provenance.jsonl")
    assert [p["case_id"] for p in prov] == [c["id"] for c in cases]
    assert all(p["trace_id"] and p["span_id"] and p["start"] for p in prov)


def test_parallel_calls_outcomes_and_mocks_from_the_trace(tmp_path: Path) -> None:
    out, report = _import(tmp_path, ["otelv2-latest-content.spans.jsonl"])
    assert report["calls"] == 4 and report["call_errors"] == 1
    cases = {c["messages"][-1]["content"]: c for c in _lines(out / "cases.jsonl")}
    parallel = next(c for k, c in cases.items() if k and "Praha and Brno" in k)
    assert [(x["tool"], x["args"]) for x in parallel["expect"]["calls"]] == [
        ("get_weather", {"city": "Praha"}),
        ("get_weather", {"city": "Brno"}),
    ]
    rules = parallel["mocks"]["get_weather"]["rules"]
    assert rules[0] == {"when": {"city": "Praha"}, "result": {"city": "Praha", "temp_c": 11}}
    assert rules[1]["fault"] == "error" and rules[1]["when"] == {"city": "Brno"}
    assert parallel["mocks"]["get_weather"]["default"]["message"].startswith("not recorded")
    prov = next(p for p in _lines(out / "provenance.jsonl") if p["case_id"] == parallel["id"])
    assert [o["failed"] for o in prov["outcomes"]] == [False, True]
    assert prov["outcomes"][1]["http_status"] == 503
    assert prov["conversation_id"] == "conv-1"


def test_tools_come_from_the_trace_or_the_tools_file_and_the_case_says_which(
    tmp_path: Path,
) -> None:
    out, _ = _import(tmp_path, ["openinference.spans.jsonl"])
    assert {t["name"] for t in json.loads((out / "tools.json").read_text())} == {
        "get_weather",
        "send_email",
    }
    assert all("tools-from-trace" in c["tags"] for c in _lines(out / "cases.jsonl"))
    from toolproof.types import SuiteTool

    tools = [SuiteTool(name="get_weather", parameters={"type": "object"})]
    out2 = tmp_path / "o2"
    import_traces(
        [FIXTURES / "otelv2-latest-content.spans.jsonl"],
        out2,
        label="t",
        redactor=Redactor(),
        tools_file=tools,
        tools_source="tools.yaml",
    )
    prov = _lines(out2 / "provenance.jsonl")
    assert {p["tools_from"] for p in prov} == {"file:tools.yaml"}


def test_without_content_no_case_but_decisions_and_error_rates(tmp_path: Path) -> None:
    for names in (
        ["otelv2-legacy-nocontent.spans.jsonl", "otelv2-legacy-nocontent.logs.jsonl"],
        ["otelv2-latest-nocontent.spans.jsonl"],
    ):
        out, report = _import(tmp_path, names)
        assert report["replay_cases"] == 0
        assert report["chat_spans_without_content"] == 7
        decisions = _lines(out / "decisions.jsonl")
        called = sorted(c["tool"] for d in decisions for c in d["calls"])
        assert called == ["get_weather", "get_weather", "get_weather", "send_email"]
        assert report["call_errors"] == 1
        assert not any("arguments" in c for d in decisions for c in d["calls"])
        shutil.rmtree(out)


def test_gzip_and_a_folder_read_the_same(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    with gzip.open(src / "a.jsonl.gz", "wb") as f:
        f.write((FIXTURES / "openinference.spans.jsonl").read_bytes())
    report = import_traces([src], tmp_path / "o", label="t", redactor=Redactor())
    assert report.cases == 7


def test_a_non_empty_out_folder_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(UserError, match="--force"):
        import_traces([FIXTURES / "openinference.spans.jsonl"], out, label="t", redactor=Redactor())
    assert (out / "mine.txt").read_text() == "keep"


def _span(trace: str, span: str, parent: str | None = None, **attrs: object) -> dict:
    s: dict = {
        "traceId": trace,
        "spanId": span,
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": "1764400000000000000",
        "attributes": [
            {"key": k, "value": {"stringValue": v} if isinstance(v, str) else v}
            for k, v in {"gen_ai.operation.name": "chat", **attrs}.items()
        ],
    }
    if parent:
        s["parentSpanId"] = parent
    return s


def _line(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


T = "5b8efff798038103d269b633813fc60c"


def test_damaged_input_is_located_or_counted_never_a_traceback(tmp_path: Path) -> None:
    lines = [
        _line(_span(T, "eee19b7ec3c1b174")),  # 1: fine
        "{not json",  # 2
        _line(_span(T, "eee19b7ec3c1b175", "eee19b7ec3c1b175")),  # 3: self-parent
        _line(_span("", "eee19b7ec3c1b176")),  # 4: missing trace ID
        _line(_span(T, "eee19b7ec3c1b174")),  # 5: duplicate of line 1
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "' + T + '", '
        '"spanId": "eee19b7ec3c1b177", "attributes": [{"key": "k", "value": '
        '{"stringValue": "y"}}]}]}]}]}',  # 6: fine
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "'
        + T
        + '", "spanId": "eee19b7ec3c1b178", "attributes": [{"key": "deep", "value": '
        + "[" * 10_000
        + "]" * 10_000
        + "}]}]}]}]}",  # 7: 10,000-deep nesting
        _line(_span(T, "eee19b7ec3c1b179", **{"gen_ai.input.messages": "x" * (2 << 20)})),  # 8
        '{"resourceSpans": [',  # 9: truncated last line
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    report = import_traces([path], tmp_path / "o", label="t", redactor=Redactor())
    where = {(p.kind, p.line) for p in report.problems}
    assert ("malformed JSON", 2) in where
    assert ("self-parent", 3) in where
    assert ("missing ID", 4) in where
    assert ("duplicate span", 5) in where
    assert ("too deep", 7) in where
    assert ("attribute dropped", 8) in where
    assert ("truncated", 9) in where or ("malformed JSON", 9) in where
    rendered = [p.render() for p in report.problems]
    assert any(r.startswith(f"{path}:3 (span eee19b7ec3c1b175)") for r in rendered)


def test_an_overlong_line_is_skipped_without_being_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.traces import _read

    monkeypatch.setattr(_read, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "big.jsonl"
    big = _line(_span(T, "eee19b7ec3c1b174", **{"x": "y" * 5000}))
    path.write_text(big + "\n" + _line(_span(T, "eee19b7ec3c1b175")) + "\n")
    report = import_traces([path], tmp_path / "o", label="t", redactor=Redactor())
    assert [(p.kind, p.line) for p in report.problems] == [("line too long", 1)]
    assert report.spans == 1


def test_cli_import_prints_the_report_and_validate_accepts(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolproof.cli._app import app

    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["traces", "import", str(FIXTURES / "langfuse.messagetojson.json"), "-o", str(out),
         "--label", "2026-12-01"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "replay cases: 7" in result.output
    assert (out / "runs" / "prod-2026-12-01" / "records.jsonl").is_file()
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 0, result.output
    run = out / "runs" / "prod-2026-12-01"
    result = CliRunner().invoke(app, ["score", str(out), str(run)])  # a run folder, manifest too
    assert result.exit_code == 0, result.output
    assert "all 7 scored attempts passed" in result.output


def _conversation_trace(n: int, tool: str | None, feedback: object, start_s: int) -> str:
    trace, span = f"{n:032x}", f"{n:016x}"
    out = (
        [{"type": "tool_call", "id": f"c{n}", "name": tool, "arguments": {"n": n}}]
        if tool
        else [{"type": "text", "content": "ok"}]
    )
    attrs = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": f"Question  number {n % 7}"}]}])}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
            [{"role": "assistant", "parts": out}])}},
        {"key": "feedback.score", "value": {"intValue": str(feedback)}},
    ]  # fmt: skip
    s = {"traceId": trace, "spanId": span, "name": "chat", "attributes": attrs,
         "startTimeUnixNano": str(start_s * 1_000_000_000)}  # fmt: skip
    return _line(s)


def test_sampling_is_stratified_and_seeded_dedup_and_filters_count(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from toolproof.traces import Selection

    lines = []
    for n in range(1, 401):
        tool = "rare_tool" if n == 400 else ("lookup" if n % 2 else None)
        lines.append(_conversation_trace(n, tool, -1 if n % 4 == 0 else 1, 1764400000 + n))
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(lines) + "\n")

    def run(name: str, sel: Selection) -> dict:
        return import_traces(
            [src], tmp_path / name, label="t", redactor=Redactor(), selection=sel
        ).as_json(Redactor())

    a = run("a", Selection(sample=0.05, seed=1))
    b = run("b", Selection(sample=0.05, seed=1))
    run("c", Selection(sample=0.05, seed=2))
    assert a["sampled_by_stratum"]["rare_tool"] == [1, 1]  # a stratum never sampled away
    assert a["sampled_by_stratum"]["lookup"][1] == 200
    assert 2 <= a["sampled_by_stratum"]["lookup"][0] <= 25
    assert (tmp_path / "a" / "cases.jsonl").read_text() == (
        tmp_path / "b" / "cases.jsonl"
    ).read_text()
    assert (tmp_path / "a" / "cases.jsonl").read_text() != (
        tmp_path / "c" / "cases.jsonl"
    ).read_text()
    assert b["decisions"] == {"call": 201, "no call": 199}  # drift still sees every decision

    d = run("d", Selection(dedup=True))
    # digits fold and spaces collapse: one conversation, three call sets
    assert d["near_duplicates_removed"] == 397 and d["replay_cases"] == 3

    e = run("e", Selection(only_negative=True))
    assert e["replay_cases"] == 100 and e["without_negative_feedback"] == 300

    since = datetime.fromtimestamp(1764400000 + 101, tz=UTC)
    until = datetime.fromtimestamp(1764400000 + 201, tz=UTC)
    f = run("f", Selection(since=since, until=until))
    assert f["replay_cases"] == 100 and f["outside_time_window"] == 300


def test_protobuf_body_reads_as_its_messagetojson_twin_and_damage_is_located(
    tmp_path: Path,
) -> None:
    a, _ = _import(tmp_path / "a", ["langfuse.pb"])
    b, _ = _import(tmp_path / "b", ["langfuse.messagetojson.json"])
    assert (a / "cases.jsonl").read_text() == (b / "cases.jsonl").read_text()
    assert (a / "runs" / "prod-t" / "records.jsonl").read_text() == (
        b / "runs" / "prod-t" / "records.jsonl"
    ).read_text()
    cut = tmp_path / "cut.pb"
    cut.write_bytes((FIXTURES / "langfuse.pb").read_bytes()[:5000])
    report = import_traces([cut], tmp_path / "c", label="t", redactor=Redactor())
    assert [(p.kind, p.file) for p in report.problems] == [("malformed protobuf", str(cut))]
    deep = tmp_path / "deep.pb"
    value = _ld(1, b"x")  # AnyValue{string_value: "x"}
    for _ in range(100):  # AnyValue{array_value: {values: [value]}}
        value = _ld(5, _ld(1, value))
    span = _ld(1, bytes(range(1, 17))) + _ld(2, bytes(range(1, 9))) + _ld(5, b"chat")
    span += _ld(9, _ld(1, b"k") + _ld(2, value))
    deep.write_bytes(_ld(1, _ld(2, _ld(2, span))))
    report = import_traces([deep], tmp_path / "d", label="t", redactor=Redactor())
    assert [p.kind for p in report.problems] == ["malformed protobuf"]
    assert "nested deeper" in report.problems[0].message


def _ld(field: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    size, out = len(payload), bytearray()
    while True:
        out.append((size & 0x7F) | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            break
    return bytes([(field << 3) | 2]) + bytes(out) + payload


def test_a_call_to_an_unoffered_or_unnameable_tool_still_validates(tmp_path: Path) -> None:
    def span(n: int, tool: str, args: object) -> dict:
        out = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": tool,
                                                "arguments": args}]}]  # fmt: skip
        return _span(
            f"{n:032x}", f"{n:016x}",
            **{"gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                   {"type": "text", "content": "hi \x1b[2J [bold]x[/bold]"}]}]),
               "gen_ai.output.messages": json.dumps(out),
               "gen_ai.tool.definitions": json.dumps([{"type": "function", "name": "lookup",
                                                       "parameters": {"type": "object"}}])},
        )  # fmt: skip

    src = tmp_path / "t.jsonl"
    src.write_text(
        _line(
            span(1, "cancel", {"id": 1}), span(2, "get weather/../x", {}), span(3, "lookup", "[1,2")
        )
    )
    out, report = _import(tmp_path, [str(src)])
    assert report["cases_calling_an_unoffered_tool"] == 2
    loaded, problems = load_suite_checked(out)
    assert problems == [] and len(loaded.suite.cases) == 3
    tagged = [c.id for c in loaded.suite.cases if "production-called-an-unoffered-tool" in c.tags]
    assert len(tagged) == 2


def test_calls_of_one_conversation_in_separate_traces_replay_together(tmp_path: Path) -> None:
    """Without an agent span every model call is its own trace: gen_ai.conversation.id
    joins them, so the first decision replays with the result the second trace shows."""
    user = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}]
    call = {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}
    first = _span(
        "1" * 32, "a" * 16,
        **{"gen_ai.conversation.id": "conv-9", "gen_ai.input.messages": json.dumps(user),
           "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}])},
    )  # fmt: skip
    second = _span(
        "2" * 32, "b" * 16,
        **{"gen_ai.conversation.id": "conv-9",
           "gen_ai.input.messages": json.dumps([*user,
               {"role": "assistant", "parts": [call]},
               {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                           "response": "4 °C"}]}]),
           "gen_ai.output.messages": json.dumps(
               [{"role": "assistant", "parts": [{"type": "text", "content": "4 °C in Oslo."}]}])},
    )  # fmt: skip
    second["startTimeUnixNano"] = "1764400001000000000"
    src = tmp_path / "t.jsonl"
    src.write_text(_line(first) + "\n" + _line(second) + "\n")
    out, report = _import(tmp_path, [str(src)])
    assert report["traces"] == 2 and report["replay_cases"] == 2
    case = next(c for c in _lines(out / "cases.jsonl") if c["id"].startswith("1" * 12))
    assert case["mocks"]["get_weather"]["rules"][0] == {"when": {"city": "Oslo"}, "result": "4 °C"}
    record = next(
        r for r in _lines(out / "runs" / "prod-t" / "records.jsonl") if r["case_id"] == case["id"]
    )
    assert record["response"]["text"] == "4 °C in Oslo." and record["transcript"]
    loaded, problems = load_suite_checked(out)
    assert problems == []
    ev = evaluate(loaded.suite, [out / "runs" / "prod-t" / "records.jsonl"])
    assert all(v.passed for t in ev.targets.values() for v in t.verdicts)


def test_protobuf_logs_body_beside_spans_reads_as_its_otlp_json_twin(tmp_path: Path) -> None:
    """v1.28-v1.36 content in log records, as OTLPLogExporter posts it (one real run)."""
    a, ra = _import(tmp_path / "a", ["otelv2-legacy-pb.spans.pb", "otelv2-legacy-pb.logs.pb"])
    b, rb = _import(tmp_path / "b", ["otelv2-legacy-pb.spans.jsonl", "otelv2-legacy-pb.logs.jsonl"])
    assert ra["log_records"] == rb["log_records"] == 28 and ra["replay_cases"] == 7
    assert ra["layouts"] == {"gen_ai v1.28-v1.36 log events": 7}
    assert (a / "cases.jsonl").read_text() == (b / "cases.jsonl").read_text()
    records = Path("runs") / "prod-t" / "records.jsonl"
    assert (a / records).read_text() == (b / records).read_text()
    first = _lines(a / "cases.jsonl")[0]
    assert first["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}


def test_damaged_protobuf_logs_are_located(tmp_path: Path) -> None:
    body = (FIXTURES / "otelv2-legacy-pb.logs.pb").read_bytes()
    cut = tmp_path / "cut.logs.pb"
    cut.write_bytes(body[: len(body) // 2])
    garbage = tmp_path / "garbage.pb"
    garbage.write_bytes(bytes(range(256)) * 40)
    broken_gz = tmp_path / "broken.logs.pb.gz"
    broken_gz.write_bytes(gzip.compress(body)[:300])
    # a log record whose body nests 100 arrays deep
    value = _ld(1, b"x")
    for _ in range(100):
        value = _ld(5, _ld(1, value))
    record = _ld(9, bytes(range(1, 17))) + _ld(10, bytes(range(1, 9))) + _ld(5, value)
    deep = tmp_path / "deep.logs.pb"
    deep.write_bytes(_ld(1, _ld(2, _ld(2, record))))
    report = import_traces(
        [cut, garbage, broken_gz, deep], tmp_path / "o", label="t", redactor=Redactor()
    )
    found = {(p.kind, Path(p.file).name) for p in report.problems}
    assert ("malformed protobuf", "cut.logs.pb") in found
    assert ("malformed protobuf", "garbage.pb") in found
    assert ("unreadable", "broken.logs.pb.gz") in found
    assert ("malformed protobuf", "deep.logs.pb") in found
    assert report.spans == 0 and report.log_records == 0


def test_openlit_dropped_assistant_turns_are_restored_from_the_span_that_recorded_them(
    tmp_path: Path,
) -> None:
    """openlit 1.45.0 leaves the assistant's tool-call turn out of the next input history."""
    out, report = _import(tmp_path, ["openlit.spans.jsonl", "openlit.logs.jsonl"])
    assert report["assistant_turns_restored"] == 3
    assert report["tools_from"] == {"trace": 7}  # from its structured log-event definitions
    assert report["spans"] == 22 and report["chat_spans"] == 7  # httpx POST spans: neither
    for case in _lines(out / "cases.jsonl"):
        asked: set[str] = set()
        for m in case["messages"]:
            asked.update(c["id"] for c in m.get("tool_calls", []))
            if m["role"] == "tool":
                assert m["tool_call_id"] in asked  # every result answers a call before it
    parallel = next(c for c in _lines(out / "cases.jsonl") if len(c["messages"]) == 5)
    assert [c["name"] for c in parallel["messages"][2]["tool_calls"]] == ["get_weather"] * 2


def test_a_number_too_large_for_its_field_is_named(tmp_path: Path) -> None:
    span = _span("5b8efff798038103d269b633813fc60d", "eee19b7ec3c1b175", None)
    span["kind"] = 12345678901234567890123  # beyond 64 bits
    src = tmp_path / "big.jsonl"
    src.write_text(_line(span) + "\n")
    report = import_traces([src], tmp_path / "o", label="t", redactor=Redactor())
    assert [(p.kind, p.line, p.message) for p in report.problems] == [
        ("malformed span", 1, "skipped: a number too large for its field")
    ]


#: Tool definitions a trace may carry that are no valid JSON Schema (as `validate` checks):
#: (parameters as JSON text, the problem the import report names).
BAD_SCHEMAS = [
    ('{"type": "object", "properties": {"a": {"$ref": "file:///etc/passwd"}}}',
     "refers outside the schema"),
    ('{"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/s.json"}}}',
     "refers outside the schema"),
    ('{"type": "object", "properties": {"a": {"type": "strnig"}}}', "unknown JSON Schema type"),
    ('{"type": "object", "required": "a", "properties": {}}', "is not of type 'array'"),
    ('{"type": "object", "properties": {"a": {"type": "integer", "maximum": 1e400}}}',
     "is not of type 'number'"),
    ('{"type": "object", "properties": {"a": {"type": "number", "minimum": NaN}}}',
     "is not of type 'number'"),
    ('{"type": "string"}', "must have type: object"),
]  # fmt: skip


def _schema_trace(n: int, parameters: str, args: str, user: str = '"hi"') -> str:
    defs = f'[{{"type": "function", "name": "lookup", "description": "d", "parameters": {parameters}}}]'
    call = f'{{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {args}}}'
    return _line(
        _span(f"{n:032x}", f"{n:08x}0000000a",
              **{"gen_ai.input.messages": f'[{{"role": "user", "parts": [{{"type": "text", "content": {user}}}]}}]',
                 "gen_ai.output.messages": f'[{{"role": "assistant", "parts": [{call}]}}]',
                 "gen_ai.tool.definitions": defs}),
    )  # fmt: skip


def test_a_tool_definition_that_is_no_valid_schema_is_skipped_with_its_reason(
    tmp_path: Path,
) -> None:
    """Each bad definition is left out (the case offers the tool by the name production
    called), named in the report with file:line, span, tool and problem; `validate` accepts
    the folder and `score` scores it. Production's arguments that violate a valid schema
    (a pattern they do not match) are kept out of the expectation, named too."""
    from typer.testing import CliRunner

    from toolproof.cli._app import app

    lines = [
        _schema_trace(i, p, '{"a": "aaaaaaaaaaaaaaaaaaaa!"}')
        for i, (p, _) in enumerate(BAD_SCHEMAS, 1)
    ]
    pattern = '{"type": "object", "properties": {"a": {"type": "string", "pattern": "(a+)+$"}}}'
    lines.append(_schema_trace(99, pattern, '{"a": "aaaaaaaaaaaaaaaaaaaa!"}'))
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(lines) + "\n", "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["traces", "import", str(src), "-o", str(out), "--label", "s"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "import-report.json").read_text("utf-8"))
    assert report["replay_cases"] == len(lines)
    assert report["skipped"] == {"invalid tool definition": len(BAD_SCHEMAS),
                                 "arguments against the tool's schema": 1}  # fmt: skip
    for i, (_, why) in enumerate(BAD_SCHEMAS, 1):
        (text,) = [p for p in report["problems"] if f"(span {i:08x}0000000a)" in p]
        assert text.startswith(f"{src}:{i}")
        assert "tool 'lookup'" in text and why in text, text
    (text,) = [p for p in report["problems"] if "(span 000000630000000a)" in p]
    assert "does not match" in text and "expect.calls[0].args.a" in text, text
    cases = _lines(out / "cases.jsonl")
    assert all(c["tools"] == ["lookup"] for c in cases[:-1])  # by the name production called
    assert cases[-1]["tools"][0]["parameters"]["properties"]["a"]["pattern"] == "(a+)+$"
    assert cases[-1]["expect"] == {"calls": [{"tool": "lookup"}], "order": "superset"}
    tools = json.loads((out / "tools.json").read_text())
    assert tools == [{"name": "lookup", "parameters": {"type": "object"}}]
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["score", str(out), str(out / "runs" / "prod-s")])
    assert result.exit_code == 0, result.output
    # production's call that breaks its own tool's schema is scored as what it is
    assert f"1 of {len(lines)} scored attempts failed" in result.output
    assert "000000630000000a (low) schema_mismatch" in result.output


def test_a_tools_file_that_validate_would_refuse_is_refused_with_its_problem(
    tmp_path: Path,
) -> None:
    from toolproof.suite import load_tools_file

    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "lookup", "parameters": {"type": "object", "required": "a"}}]')
    out = tmp_path / "out"
    with pytest.raises(UserError) as caught:
        import_traces([FIXTURES / "langfuse.messagetojson.json"], out, label="t",
                      redactor=Redactor(), tools_file=load_tools_file(tools),
                      tools_source=str(tools))  # fmt: skip
    assert str(caught.value) == (
        f"{tools}: tool 'lookup': parameters.required: invalid JSON Schema: "
        "'a' is not of type 'array'"
    )
    assert not out.exists()


def test_a_lone_surrogate_or_deep_nesting_is_skipped_naming_the_field(tmp_path: Path) -> None:
    deep = '{"d": ' + "[" * 300 + "]" * 300 + "}"
    lines = [
        _schema_trace(1, '{"type": "object"}', '{"s": "x"}', '"lone \\ud800 x"'),
        _schema_trace(2, '{"type": "object"}', deep),
    ]
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(lines) + "\n", "utf-8")
    report = import_traces([src], tmp_path / "out", label="t", redactor=Redactor())
    shown = [p.render() for p in report.problems]
    assert shown == [
        f"{src}:1 (span 000000010000000a): skipped: cases.messages[0].content: surrogates "
        "not allowed ('\\ud800'): not writable as UTF-8",
        f"{src}:2 (span 000000020000000a): skipped: expect.calls[0].args: "
        "nested too deeply to write (Maximum serialization depth exceeded)",
    ]
    assert report.cases == 0
    # nothing of a skipped case is written: the three files hold the same cases
    out = tmp_path / "out"
    assert (out / "cases.jsonl").read_text() == (out / "provenance.jsonl").read_text() == ""


def test_a_second_definition_of_the_same_tool_is_left_out_and_named(tmp_path: Path) -> None:
    one = '{"type": "object", "properties": {"a": {"type": "string"}}}'
    line = _schema_trace(1, one, '{"a": "x"}')
    # the trace defines lookup twice (the second without properties)
    line = line.replace(
        "}}]\"", '}}, {\\"type\\": \\"function\\", \\"name\\": \\"lookup\\", \\"parameters\\": {\\"type\\": \\"object\\"}}]"', 1
    )  # fmt: skip
    assert line.count('\\"type\\": \\"function\\"') == 2
    src = tmp_path / "t.jsonl"
    src.write_text(line + "\n", "utf-8")
    out = tmp_path / "out"
    report = import_traces([src], out, label="t", redactor=Redactor())
    assert [p.render() for p in report.problems] == [
        f"{src}:1 (span 000000010000000a): tool 'lookup': a second definition of this name; "
        "its definition is left out, the first definition of this name offered"
    ]
    loaded, problems = load_suite_checked(out)
    assert problems == [] and loaded.suite.tools[0].parameters == json.loads(one)


def test_arguments_that_redaction_makes_break_their_schema_leave_the_expectation(
    tmp_path: Path,
) -> None:
    """A placeholder longer than the parameter's maxLength: the expectation keeps the call
    without the arguments, named in the report, and validate accepts the folder."""
    schema = '{"type": "object", "properties": {"a": {"type": "string", "maxLength": 8}}}'
    src = tmp_path / "t.jsonl"
    src.write_text(_schema_trace(1, schema, '{"a": "a@b.cz"}') + "\n", "utf-8")
    out = tmp_path / "out"
    report = import_traces([src], out, label="t", redactor=Redactor())
    (problem,) = [p.render() for p in report.problems]
    assert problem.startswith(f"{src}:1 (span 000000010000000a): expect.calls[0].args.a (as "
                              "redacted): expected value 'user1@example.com' violates")  # fmt: skip
    assert _lines(out / "cases.jsonl")[0]["expect"]["calls"] == [{"tool": "lookup"}]
    _loaded, problems = load_suite_checked(out)
    assert problems == []
    assert "a@b.cz" not in (out / "import-report.json").read_text()

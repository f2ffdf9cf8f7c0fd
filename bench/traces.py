"""Trace import and drift: spans per second and peak memory, beside a floor in the same run.

Generates N spans (default 1,000,000) as OTLP/JSON Lines, half in the v1.37+
attribute layout and half in the v1.28-v1.36 layout with its log records in a
second file. Each trace is an agent span, a chat span that calls a tool, the
tool's execute_tool span and a second chat span that answers: four spans, one
trace per line. Texts carry e-mail addresses and phone numbers, so redaction
has work to do.

Figures (wall time; the load average beside them, since the machine may be
shared):

- floor: orjson reading every line of the same files (spans per second);
- import: ``toolproof traces import`` of both files, in a child process, its
  spans per second and the child's peak RSS;
- drift: ``toolproof drift`` between that import folder and itself, in a child
  process (it reads the import's decisions.jsonl, one line per chat span), its
  spans per second (spans the window stands for) and peak RSS.

Usage: python bench/traces.py [N]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson


def _a(key: str, value: object) -> dict[str, object]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _any(value: object) -> dict[str, object]:
    """A plain value as an OTLP/JSON AnyValue."""
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in value.items()]}}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": "" if value is None else str(value)}


def _trace(i: int, legacy: bool) -> tuple[str, list[str]]:
    t = f"{i:032x}"
    agent, c1, tool, c2 = (f"{i:012x}{k:04x}" for k in (1, 2, 3, 4))
    base = 1764400000000000000 + i * 10_000_000
    user = f"Please refund order {i} and mail jan{i % 997}@example.cz or call +420 601 {i % 1000:03d} 456"
    args = {"order_id": str(i), "email": f"jan{i % 997}@example.cz"}
    result = {"status": "refunded", "order_id": str(i)}
    spans = [
        {"traceId": t, "spanId": agent, "name": "invoke_agent", "kind": 1,
         "startTimeUnixNano": str(base), "endTimeUnixNano": str(base + 5_000_000),
         "attributes": [_a("gen_ai.operation.name", "invoke_agent"),
                        _a("gen_ai.conversation.id", f"conv-{i}")]},
        {"traceId": t, "spanId": tool, "parentSpanId": agent, "name": "execute_tool refund",
         "kind": 1, "startTimeUnixNano": str(base + 2_000_000),
         "endTimeUnixNano": str(base + 2_500_000),
         "attributes": [_a("gen_ai.operation.name", "execute_tool"), _a("gen_ai.tool.name", "refund"),
                        _a("gen_ai.tool.call.id", f"call_{i}"),
                        _a("gen_ai.tool.call.arguments", json.dumps(args)),
                        _a("gen_ai.tool.call.result", json.dumps(result))],
         "status": {"code": 2 if i % 50 == 0 else 0}},
    ]  # fmt: skip
    logs: list[dict[str, object]] = []
    for span, start, first in ((c1, base + 1_000_000, True), (c2, base + 3_000_000, False)):
        attrs = [_a("gen_ai.operation.name", "chat"), _a("gen_ai.request.model", "gpt-4o"),
                 _a("gen_ai.usage.input_tokens", 40)]  # fmt: skip
        history = [{"role": "system", "parts": [{"type": "text", "content": "You help with orders."}]},
                   {"role": "user", "parts": [{"type": "text", "content": user}]}]  # fmt: skip
        if not first:
            history += [
                {"role": "assistant", "parts": [{"type": "tool_call", "id": f"call_{i}",
                                                 "name": "refund", "arguments": args}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{i}",
                                            "response": json.dumps(result)}]},
            ]  # fmt: skip
        out = (
            [{"type": "tool_call", "id": f"call_{i}", "name": "refund", "arguments": args}]
            if first
            else [{"type": "text", "content": f"Order {i} is refunded."}]
        )
        if legacy:
            attrs.append(_a("gen_ai.system", "openai"))
            for m in history:
                if m["role"] in ("system", "user"):
                    logs.append({"traceId": t, "spanId": span, "eventName": f"gen_ai.{m['role']}.message",
                                 "body": {"kvlistValue": {"values": [
                                     {"key": "content", "value": {"stringValue": m["parts"][0]["content"]}}]}}})  # fmt: skip
            calls = [{"id": f"call_{i}", "type": "function",
                      "function": {"name": "refund", "arguments": json.dumps(args)}}] if first else []  # fmt: skip
            body = {"index": 0, "finish_reason": "tool_calls" if first else "stop",
                    "message": {"role": "assistant", "tool_calls": calls} if first
                    else {"role": "assistant", "content": out[0].get("content")}}  # fmt: skip
            # the body as opentelemetry-instrumentation-openai-v2 writes it: a kvlist
            # {index, finish_reason, message: {role, tool_calls | content}}
            logs.append({"traceId": t, "spanId": span, "eventName": "gen_ai.choice",
                         "body": _any(body)})  # fmt: skip
        else:
            attrs += [_a("gen_ai.provider.name", "openai"),
                      _a("gen_ai.input.messages", json.dumps(history)),
                      _a("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": out}]))]  # fmt: skip
        spans.append({"traceId": t, "spanId": span, "parentSpanId": agent, "name": "chat gpt-4o",
                      "kind": 3, "startTimeUnixNano": str(start),
                      "endTimeUnixNano": str(start + 800_000), "attributes": attrs})  # fmt: skip
    line = json.dumps(
        {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}
    )
    log_lines = (
        [json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]})] if logs else []
    )
    return line, log_lines


def generate(n_spans: int, folder: Path) -> list[Path]:
    traces = n_spans // 4
    files = [
        folder / "latest.spans.jsonl",
        folder / "legacy.spans.jsonl",
        folder / "legacy.logs.jsonl",
    ]
    with files[0].open("w") as latest, files[1].open("w") as legacy, files[2].open("w") as logs:
        for i in range(1, traces + 1):
            is_legacy = i % 2 == 0
            line, log_lines = _trace(i, is_legacy)
            (legacy if is_legacy else latest).write(line + "\n")
            for log in log_lines:
                logs.write(log + "\n")
    return files


def floor(files: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of orjson reading every line."""
    start, cpu = time.perf_counter(), time.process_time()
    for path in files:
        with path.open("rb") as f:
            for line in f:
                orjson.loads(line)
    return time.perf_counter() - start, time.process_time() - cpu


def child(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of a child process (RSS read by GNU time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{argv[:4]} failed ({done.returncode}): {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return took, cpu, peak_kib / 1024


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    tool = [sys.executable, "-m", "toolproof"]
    with tempfile.TemporaryDirectory(prefix="toolproof-bench-traces-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        files = generate(n, folder)
        size = sum(p.stat().st_size for p in files) / (1 << 20)
        print(
            f"generated {n:,} spans ({size:,.0f} MiB, 3 files) in {time.perf_counter() - t0:.1f} s"
        )
        print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
        f, fc = floor(files)
        print("                                          wall spans/s   CPU spans/s   peak RSS")
        print(f"floor   orjson reads every line        {n / f:12,.0f}  {n / fc:12,.0f}"
              f"   (in this process)")  # fmt: skip
        out = folder / "imported"
        took, cpu, rss = child(
            [*tool, "traces", "import", *map(str, files), "-o", str(out), "--label", "bench"]
        )
        print(f"import  toolproof traces import        {n / took:12,.0f}  {n / cpu:12,.0f}"
              f"   {rss:,.0f} MiB   CPU rate {n / cpu / (n / fc):.1%} of the floor's")  # fmt: skip
        took, cpu, rss = child(
            [*tool, "drift", "--baseline", str(out), "--current", str(out), "-f", "json"]
        )
        print(f"drift   toolproof drift (import vs it) {n / took:12,.0f}  {n / cpu:12,.0f}"
              f"   {rss:,.0f} MiB   CPU rate {n / cpu / (n / fc):.1%} of the floor's")  # fmt: skip
        report = json.loads((out / "import-report.json").read_text())
        print(f"import report: {report['spans']:,} spans, {report['replay_cases']:,} replay cases, "
              f"redacted {report['redaction']['by_kind']}")  # fmt: skip
        print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()

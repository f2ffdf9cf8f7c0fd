"""Scale: big suites and big records files through validate, score and evaluate().

Generates suites with 300 distinct tools (nested objects, enums, optional
parameters; no two parameter schemas alike) and single-step cases in JSONL
case files of at most 10,000 cases each, and records for them
(about 40% of the answers fail: wrong tool, wrong value, schema violation,
missing call), each with a raw request and response as a provider would
have recorded them. Each command runs as its own process, timed from start
to last line, with its peak RSS:

- the floor: ``python -c pass`` and ``toolproof --help``;
- suites: ``toolproof validate`` on a suite of N cases (µs per case beyond
  ``toolproof --help``);
- records: ``toolproof score`` (with ``--json``) and ``evaluate(...,
  keep_records=False)`` in-process on R records of a fixed 1,000-case suite
  (R/1000 attempts per case). µs per record is counted beyond scoring 1,000
  records (one per case), which pays start-up, loading the suite and the
  statistics' fixed costs; wall-clock and CPU (user + system) both;
- the store: the same ``toolproof score`` with the history store on (a fresh
  SQLite store in the temporary folder), so its peak RSS includes writing
  the run, its attempts and its summaries to the store.

Records are generated one line at a time (1,000,000 records make a 1.36 GB
file, 840 MB with ``--layout dumps``, and take a few minutes). By default each line is what toolproof's own
writer makes of the record (``toolproof.record/3``, compact, the parsed
arguments beside their text), as a run folder holds them; ``--layout dumps``
writes them as ``json.dumps`` does, in format ``/1`` with the argument text
alone (what this benchmark wrote before), for comparison.

Usage: python bench/scale.py [--suites N,...] [--records R,...] [--stages S,...]
                              [--layout written|dumps]
       (default --suites 10000,100000 --records 10000,100000
       --stages score,store,evaluate; P5 figures: --suites "" --records
       10000,100000,1000000; the store alone: --suites "" --stages store)
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TOOLS = 300
PER_FILE = 10_000  # cases per file: a file stays well under the default size limit
PY = sys.executable
TOOLPROOF = str(Path(PY).parent / "toolproof")


def _tool(i: int) -> dict[str, Any]:
    return {
        "name": f"tool_{i:03d}",
        "description": f"Operation number {i} on the order system.",
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                "mode": {"type": "string", "enum": ["fast", "safe", "dry"]},
                "count": {"type": "integer", "minimum": 1, "maximum": 100},
                "filter": {
                    "type": "object",
                    "properties": {
                        "status": {"type": "string", "enum": ["open", "closed"]},
                        "since": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
                "note": {"type": "string", "description": f"Free text for operation {i}."},
                f"extra_{i}": {"type": "boolean"},
            },
            "required": ["id"],
            "additionalProperties": False,
        },
        "risk": ["low", "medium", "high"][i % 3],
    }


def _case(i: int, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """One case and the answer to record for it."""
    kind = rng.random()
    tool = f"tool_{rng.randrange(TOOLS):03d}"
    ident = f"ABC-{i % 10000:04d}"
    if kind < 0.1:
        case = {"id": f"c{i}", "prompt": f"Hello number {i}", "expect": {"kind": "text"}}
        return case, {"text": "Hello! How can I help?", "tool_calls": []}
    n_calls = 1 if kind < 0.8 else 2
    calls = []
    answer_calls = []
    for j in range(n_calls):
        name = tool if j == 0 else f"tool_{(int(tool[5:]) + 1) % TOOLS:03d}"
        args: dict[str, Any] = {"id": ident, "mode": "safe", "filter": {"status": "open"}}
        expected = {
            "id": ident,
            "mode": "safe",
            "filter": {"status": "open"},
            "count": {"ignore": True},
        }
        calls.append({"tool": name, "args": expected})
        fail = rng.random()
        sent = dict(args)
        if fail < 0.12:
            sent["mode"] = "fast"  # wrong value
        elif fail < 0.22:
            sent["id"] = "abc"  # schema violation
        elif fail < 0.30:
            name = f"tool_{(int(name[5:]) + 7) % TOOLS:03d}"  # wrong tool
        answer_calls.append({"id": f"call_{j}", "name": name, "raw_arguments": json.dumps(sent)})
    if rng.random() < 0.05:
        answer_calls = []  # missing call
    case = {
        "id": f"c{i}",
        "prompt": f"Please handle {ident} carefully, request {i}.",
        "expect": {"calls": calls},
        "tools": sorted({c["tool"] for c in calls} | {tool}),
        "reason": "generated",
        "tags": [f"t{i % 7}"],
    }
    answer = {"text": None, "tool_calls": answer_calls, "stop_reason": "tool_calls"}
    return case, answer


def make(
    n: int, folder: Path, attempts: int = 1, layout: str = "written"
) -> tuple[Path, Path]:
    rng = random.Random(n)
    tools = [_tool(i) for i in range(TOOLS)]
    suite_dir = folder / "suite"
    (suite_dir / "cases").mkdir(parents=True)
    (suite_dir / "tools.json").write_text(json.dumps(tools))
    (suite_dir / "suite.yaml").write_text(
        "suite: scale\nversion: '1'\nsystem: You are a careful assistant.\n"
        "tools: tools.json\ncases: []\ncases_from: [cases/*.jsonl]\n"
    )
    records = folder / "records.jsonl"
    by_name = {t["name"]: t for t in tools}
    with records.open("w") as rf:
        for start in range(0, n, PER_FILE):
            with (suite_dir / "cases" / f"part{start // PER_FILE:04d}.jsonl").open("w") as cf:
                _write(
                    range(start, min(n, start + PER_FILE)), attempts, rng, cf, rf, by_name, layout
                )
    return suite_dir, records


def _write(
    ids: range,
    attempts: int,
    rng: random.Random,
    cf: Any,
    rf: Any,
    by_name: dict[str, Any],
    layout: str = "written",
) -> None:
    line = _written if layout == "written" else _dumped
    for i in ids:
        case, answer = _case(i, rng)
        cf.write(json.dumps(case) + "\n")
        for attempt in range(attempts):
            # every third attempt answers afresh, so repeats are not all alike
            sent = answer if attempt % 3 else _case(i, rng)[1]
            rf.write(line(_record(i, attempt, case, sent, by_name)))


def _dumped(data: dict[str, Any]) -> str:
    return json.dumps(data) + "\n"


def _written(data: dict[str, Any]) -> str:
    """The line toolproof's records writer makes of the record (as ``run`` writes it)."""
    from toolproof.records import tool_call_from_raw
    from toolproof.records._write import record_line
    from toolproof.types import Record
    from toolproof.types._record import RECORD_FORMAT

    response = dict(data["response"])
    response["tool_calls"] = [
        tool_call_from_raw(c["name"], c["raw_arguments"], c["id"]) for c in response["tool_calls"]
    ]
    record = Record.model_validate({**data, "format": RECORD_FORMAT, "response": response})
    return record_line(record)[1].decode("utf-8")


def _record(
    i: int, attempt: int, case: dict[str, Any], answer: dict[str, Any], by_name: dict[str, Any]
) -> dict[str, Any]:
    offered = [by_name[t] for t in case.get("tools", [])]
    raw_request = {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "You are a careful assistant."},
            {"role": "user", "content": case["prompt"]},
        ],
        "tools": [
            {
                "type": "function",
                "function": {k: t[k] for k in ("name", "description", "parameters")},
            }
            for t in offered
        ],
    }
    raw_response = {"id": f"chatcmpl-{i}", "choices": [{"message": {"role": "assistant"}}]}
    return {
        "format": "toolproof.record/1",
        "case_id": case["id"],
        "target": "openai:gpt-4.1-mini",
        "attempt": attempt,
        "request": raw_request,
        "response": {**answer, "raw": raw_response, "latency_ms": 100 + i % 900},
    }


def measure(argv: list[str]) -> tuple[float, float]:
    """Run argv in a wrapper process that reports its child's peak RSS alone."""
    wall, _, rss = measure_cpu(argv)
    return wall, rss


def measure_cpu(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB) of argv, run in a wrapper process."""
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
        "w = time.perf_counter() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps([p.returncode, w, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024,\n"
        "                  p.stderr.decode()[-800:]]))\n"
    )
    out = subprocess.run([PY, "-c", wrapper, *argv], capture_output=True, text=True, check=True)
    code, wall, cpu, rss, err = json.loads(out.stdout)
    if code not in (0, 1):
        raise SystemExit(f"failed (exit {code}): {' '.join(argv)}\n{err}")
    return wall, cpu, rss


EVALUATE = (
    "import sys; from toolproof.suite import load_suite; from toolproof.evaluate import evaluate\n"
    "ev = evaluate(load_suite(sys.argv[1]), [sys.argv[2]], keep_raw=False, keep_records=False)\n"
    "print(sum(t.summary.attempts for t in ev.targets.values()))\n"
)


def _sizes(flag: str, default: str) -> list[int]:
    argv = sys.argv[1:]
    value = argv[argv.index(flag) + 1] if flag in argv else default
    return [int(x) for x in value.split(",") if x]


def _names(flag: str, default: str) -> list[str]:
    argv = sys.argv[1:]
    value = argv[argv.index(flag) + 1] if flag in argv else default
    return [x for x in value.split(",") if x]


def _commands(suite: Path, out: Path, tmp: Path) -> dict[str, Any]:
    """What each stage runs on a records file."""

    def score(records: Path) -> list[str]:
        return [TOOLPROOF, "score", str(suite), str(records), "--no-failures", "--json", str(out)]

    def store(records: Path) -> list[str]:
        # a fresh store for each records file (``env`` execs: the RSS is the command's own)
        return ["env", f"TOOLPROOF_STORE={tmp / (records.stem + '.db')}", *score(records)]

    def in_process(records: Path) -> list[str]:
        return [PY, "-c", EVALUATE, str(suite), str(records)]

    return {"score": score, "store": store, "evaluate()": in_process}


def main() -> None:
    suites = _sizes("--suites", "10000,100000")
    record_counts = _sizes("--records", "10000,100000")
    stages = _names("--stages", "score,store,evaluate")
    layout = (_names("--layout", "written") or ["written"])[0]
    if layout not in ("written", "dumps"):
        raise SystemExit(f"--layout: written or dumps, not {layout!r}")
    floor_py, _ = min(measure([PY, "-c", "pass"]) for _ in range(3))
    floor_help, cpu_help, rss_help = min(measure_cpu([TOOLPROOF, "--help"]) for _ in range(3))
    print(
        f"floor: python -c pass {floor_py:.3f} s; toolproof --help {floor_help:.3f} s "
        f"({floor_help / floor_py:.1f}x), {rss_help:.0f} MB; records laid out: {layout}"
    )
    for n in suites:
        with tempfile.TemporaryDirectory() as tmp:
            suite, _ = make(n, Path(tmp), attempts=0)
            wall, cpu, rss = measure_cpu([TOOLPROOF, "validate", str(suite)])
            per = (wall - floor_help) / n * 1e6
            per_cpu = (cpu - cpu_help) / n * 1e6
            print(
                f"suite of {n:>9,} cases  validate {wall:8.2f} s  {per:8.1f} µs/case  "
                f"(CPU {cpu:.2f} s, {per_cpu:.1f} µs/case)  peak RSS {rss:6.0f} MB"
            )
    for r in record_counts:
        with tempfile.TemporaryDirectory() as tmp:
            suite, records = make(1000, Path(tmp), attempts=max(1, r // 1000), layout=layout)
            small = Path(tmp) / "small.jsonl"
            with records.open() as src, small.open("w") as dst:
                for _, line in zip(range(1000), src, strict=False):
                    dst.write(line)
            out = Path(tmp) / "report.json"
            mb = records.stat().st_size / 1e6
            commands = _commands(suite, out, Path(tmp))
            for name, argv in commands.items():
                if name.removesuffix("()") not in stages:
                    continue
                base_wall, base_cpu, _ = measure_cpu(argv(small))
                wall, cpu, rss = measure_cpu(argv(records))
                n = max(1, r - 1000)
                print(
                    f"{r:>9,} records ({mb:5.0f} MB)  {name:<10} {wall:8.2f} s wall "
                    f"{(wall - base_wall) / n * 1e6:7.1f} µs/record, {cpu:8.2f} s CPU "
                    f"{(cpu - base_cpu) / n * 1e6:7.1f} µs/record (beyond 1,000 records: "
                    f"{base_wall:.2f} s wall, {base_cpu:.2f} s CPU)  peak RSS {rss:6.0f} MB"
                )


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        raise SystemExit(0)
    os.environ.setdefault("TOOLPROOF_STORE", "off")
    main()

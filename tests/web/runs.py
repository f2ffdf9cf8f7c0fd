"""Run folders for the report and viewer tests: the example suite's demo records,
and a suite whose case ID, model reply, tool argument, tool name and target carry
script payloads."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproof.run import read_manifest
from toolproof.run._manifest import Manifest, TargetEntry, write_manifest
from toolproof.suite import load_suite
from toolproof.trust import Trust

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"
#: The example suite's environment tools are Python from the suite: these tests own it.
TRUST = Trust(allow_code=True)

#: Each payload would open a dialog or add an element named "pwned" if it ran.
CASE_XSS = "<img/src=x/onerror=alert('case')>"
REPLY_XSS = "Done.<script>alert('reply')</script><img src=x id=pwned onerror=\"alert('reply-img')\">"
ARG_XSS = "<img src=x id=pwned2 onerror=alert('arg')>"
TOOL_XSS = "<svg/onload=alert('tool')>"
TARGET_XSS = "evil:<script>alert('target')</script>"
TEXT_CASE = "reply-</script><script>alert('case2')</script>"

XSS_SUITE = {
    "format": 1,
    "suite": "xss",
    "version": "1",
    "tools": [
        {
            "name": "lookup_order",
            "description": "Look up an order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        }
    ],
    "cases": [
        {
            "id": CASE_XSS,
            "prompt": "Where is order 1? <b>bold</b>",
            "expect": {"call": "lookup_order", "args": {"order_id": "1"}},
            "reason": "A reason with <i>markup</i> that must stay text.",
            "tags": ["<u>tag</u>"],
        },
        {
            "id": TEXT_CASE,
            "prompt": "Say hello.",
            "expect": {"kind": "text"},
        },
    ],
}


def _record(case_id: str, target: str, attempt: int, response: dict[str, Any]) -> str:
    return json.dumps(
        {
            "format": "toolproof.record/1",
            "case_id": case_id,
            "target": target,
            "attempt": attempt,
            "request": {"messages": [{"role": "user", "content": REPLY_XSS}]},
            "response": {**response, "raw": {"echo": REPLY_XSS, "args": ARG_XSS}},
            "latency_ms": 100.0 + 37 * attempt,
        }
    )


def write_xss_suite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "suite.json"
    path.write_text(json.dumps(XSS_SUITE), encoding="utf-8")
    return path


def xss_records(path: Path) -> Path:
    lines = []
    for attempt in range(2):
        lines.append(
            _record(
                CASE_XSS,
                TARGET_XSS,
                attempt,
                {
                    "text": REPLY_XSS,
                    "tool_calls": [
                        {"name": "lookup_order", "raw_arguments": json.dumps({"order_id": ARG_XSS})},
                        {"name": TOOL_XSS, "raw_arguments": "{}"},
                    ],
                },
            )
        )
        lines.append(_record(TEXT_CASE, TARGET_XSS, attempt, {"text": REPLY_XSS}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_run(
    runs: Path, run_id: str, suite_path: Path, records: list[str], started: datetime
) -> Path:
    """A run folder: the records lines and a manifest naming the suite."""
    folder = runs / run_id
    folder.mkdir(parents=True)
    (folder / "records.jsonl").write_text("".join(records), encoding="utf-8")
    suite = load_suite(suite_path, TRUST)
    targets = list(dict.fromkeys(json.loads(line)["target"] for line in records if line.strip()))
    write_manifest(
        folder,
        Manifest(
            run_id=run_id,
            toolproof_version="test",
            suite_name=suite.name,
            suite_version=suite.version,
            suite_source=str(suite_path),
            suite_fingerprint=suite.fingerprint(),
            tools_fingerprint="t",
            targets=[TargetEntry(spec=t) for t in targets],
            repeats=1,
            started_at=started,
            status="complete",
        ),
    )
    read_manifest(folder)
    return folder


def _lines(path: Path, target: str | None = None, attempt: int | None = None) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if target is not None:
            d["target"] = target
        if attempt is not None:
            d["attempt"] = attempt
        out.append(json.dumps(d, ensure_ascii=False) + "\n")
    return out


def make_runs(root: Path) -> Path:
    """runs/: support-a (demo model), support-b (demo model b under the same name),
    support-c (both as two attempts: flaky cases), and xss."""
    runs = root / "runs"
    suite_dir = root / "suite"
    shutil.copytree(SUPPORT, suite_dir)
    name = "recorded:demo-model"
    a = _lines(SUPPORT / "records.jsonl", name, 0)
    b = _lines(SUPPORT / "records-b.jsonl", name, 0)
    make_run(runs, "support-a", suite_dir, a, datetime(2026, 11, 1, 10, tzinfo=UTC))
    make_run(runs, "support-b", suite_dir, b, datetime(2026, 11, 2, 10, tzinfo=UTC))
    c = a + _lines(SUPPORT / "records-b.jsonl", name, 1)
    make_run(runs, "support-c", suite_dir, c, datetime(2026, 11, 3, 10, tzinfo=UTC))
    xss_suite = write_xss_suite(root / "xss-suite")
    xss = xss_records(root / "xss.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    make_run(runs, "xss", xss_suite, xss, datetime(2026, 11, 4, 10, tzinfo=UTC))
    return runs


def make_store(runs: Path, location: str) -> None:
    """Import every run under ``runs`` into the store at ``location``, and gate support-a
    as `toolproof gate` does (the decision goes to the store and the run's events)."""
    from toolproof.evaluate import load_run
    from toolproof.gate import run_gate
    from toolproof.store import open_store
    from toolproof.store._hooks import store_gate

    with open_store(location) as store:
        for folder in sorted(p for p in runs.iterdir() if (p / "manifest.json").is_file()):
            store.import_run(folder, trust=TRUST)
    ev = load_run(runs / "support-a", trust=TRUST)
    store_gate(ev, None, run_gate(ev), location)

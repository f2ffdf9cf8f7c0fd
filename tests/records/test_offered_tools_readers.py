"""A conversation whose offered tools change at a user turn (a scripted user's ``offer``):
the requests after the change are stored as deltas like any other, and every reader (the
records reader, the viewer, the history store) rebuilds each step's request byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.records._steps import expand_requests
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.store import Store, open_store
from toolproof.suite import load_suite
from toolproof.types import Record
from toolproof.web import FolderSource, RunCache

SUITE: dict[str, Any] = {
    "format": 1,
    "suite": "later",
    "tools": [
        {"name": n, "parameters": {"type": "object", "properties": {"file": {"type": "string"}}}}
        for n in ("lookup", "sort", "diff")
    ],
    "mocks": {n: {"default": {"result": {"ok": n}}} for n in ("lookup", "sort", "diff")},
    "cases": [
        {
            "id": "late",
            "tools": ["lookup", "sort", "diff"],
            "user": {
                "script": [
                    "Look up report.txt.",
                    {"offer": ["sort", "diff"], "say": "More tools. What about now?"},
                    "Thanks. ###STOP###",
                ]
            },
            "expect": {"kind": "text"},
        }
    ],
}

STEPS = [
    {"tool_calls": [{"name": "lookup", "raw_arguments": '{"file": "r"}'}]},
    {"text": "Found."},
    {"tool_calls": [{"name": "sort", "raw_arguments": '{"file": "r"}'}]},
    {"text": "Sorted."},
]


def _run(tmp_path: Path) -> Path:
    import yaml

    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False), "utf-8")
    suite = load_suite(folder / "suite.yaml")
    provider = ScriptedProvider.from_dict({"cases": {"late": {"steps": STEPS}}})
    out = tmp_path / "runs" / "run"
    opts = RunOptions(out=out, cache=False, fsync=False, retry=RetryPolicy(0.001, 0.01))
    run_suite(suite, [Target(spec="scripted:agent", provider=provider)], opts)
    return out


def _requests(record: Record) -> list[str]:
    return [json.dumps(s["request"]) for s in record.steps or []]


def test_every_reader_rebuilds_the_requests_whose_tools_changed(tmp_path: Path) -> None:
    run = _run(tmp_path)
    line = json.loads((run / "records.jsonl").read_text("utf-8").splitlines()[0])
    assert line["format"] == "toolproof.record/3"
    deltas = [s.get("request_delta") for s in line["steps"]]
    assert deltas[0] is None and all(d is not None for d in deltas[1:])
    assert "tools" not in {**deltas[1].get("append", {}), **deltas[1].get("set", {})}
    assert "tools" in {**deltas[2].get("append", {}), **deltas[2].get("set", {})}

    (read,) = read_records(run / "records.jsonl")
    tools = [[t["name"] for t in s["request"]["tools"]] for s in read.steps or []]
    assert tools == [["lookup"], ["lookup"], ["lookup", "sort", "diff"], ["lookup", "sort", "diff"]]
    expected = _requests(read)

    # the viewer, from the run folder
    index = RunCache(FolderSource(tmp_path / "runs")).get("run")
    viewed = index.record(("late", "scripted:agent", 0))
    assert viewed is not None and _requests(viewed) == expected

    # the history store, which reads the raw line back from the run folder
    with open_store(str(tmp_path / "history.db")) as store:
        imported = store.import_run(run)
        (row,) = store.attempts(imported.run_pk).items
        raw = Store.read_raw(row)
    assert raw is not None
    expand_requests(raw, raw["format"])
    assert _requests(Record.model_validate(raw)) == expected

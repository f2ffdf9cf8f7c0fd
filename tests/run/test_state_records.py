"""Records of multi-step attempts store the state's changes; scoring rebuilds the end state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import SuiteError
from toolproof.evaluate import evaluate
from toolproof.grade import rebuild_end_state
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.run import RunOptions, Target, load_initial_state, run_suite
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Record, Suite, Verdict

from .conftest import write_suite

CODE = Trust(allow_code=True)  # these suites run their own tools
ROWS = 300

TOOLS_PY = """
def close(state, args):
    state["orders"][args["id"]]["status"] = "closed"
    state["log"].append({"closed": args["id"]})
    return {"ok": True}
"""


def _state() -> dict[str, Any]:
    return {
        "orders": {
            f"O{i:04d}": {"status": "open", "note": f"order number {i}", "lines": [i, i + 1]}
            for i in range(ROWS)
        },
        "log": [],
    }


def _suite(tmp_path: Path) -> Suite:
    data = {
        "format": 1,
        "suite": "state-records",
        "tools": [
            {
                "name": "close",
                "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
            }
        ],
        "environment": {"state": "state.json", "tools": "tools.py"},
        "cases": [
            {
                "id": f"close-{n}",
                "prompt": f"Close order O000{n}.",
                "max_steps": 3,
                "trajectory": {"mode": "strict", "steps": [{"tool": "close", "args": {"id": f"O000{n}"}}]},
                "end_state": {"actions": [{"tool": "close", "args": {"id": f"O000{n}"}}]},
            }
            for n in (1, 2)
        ]
        + [
            {
                "id": "partial",
                "prompt": "Close order O0003.",
                "max_steps": 3,
                "trajectory": {"mode": "strict", "steps": [{"tool": "close", "args": {"id": "O0003"}}]},
                "end_state": {"state": {"orders": {"O0003": {"status": "closed"}}}},
            }
        ],
    }
    folder = tmp_path / "suite"
    path = write_suite(folder, data)
    (folder / "state.json").write_text(json.dumps(_state()))
    (folder / "tools.py").write_text(TOOLS_PY)
    return load_suite(path)


def _close(order: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "close", "arguments": {"id": order}}]}


SCRIPT = {
    "close-1": {"steps": [_close("O0001"), {"text": "Closed."}]},
    # a wrong extra change: fails on the end state
    "close-2": {"steps": [_close("O0002"), _close("O0005"), {"text": "Closed."}]},
    "partial": {"steps": [_close("O0003"), {"text": "Closed."}]},
}


def _run(tmp_path: Path, suite: Suite) -> Path:
    provider = ScriptedProvider.from_dict({"cases": SCRIPT})
    opts = RunOptions(trust=CODE, out=tmp_path / "run", cache=False, fsync=False)
    run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    return tmp_path / "run" / "records.jsonl"


def _verdicts(suite: Suite, path: Path, trust: Trust = CODE) -> list[Verdict]:
    ev = evaluate(suite, [path], trust=trust)
    # the file's stem names the target of these records: compare all the rest
    verdicts = [v._replace(target=None) for t in ev.targets.values() for v in t.verdicts]
    return sorted(verdicts, key=lambda v: v.case_id)


def test_a_record_stores_the_changes_not_the_whole_state(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    path = _run(tmp_path, suite)
    lines = path.read_text(encoding="utf-8").splitlines()
    state_size = len(json.dumps(_state()))
    for line in lines:
        data = json.loads(line)
        assert data["format"] == "toolproof.record/3"
        assert "end_state" not in data
        assert "O0299" not in line  # an order no attempt touched
        assert len(line) < state_size / 2
    first = json.loads(lines[0])
    assert first["state_changes"] == [
        ["set", ["orders", "O0001", "status"], "closed"],
        ["set", ["log", 0], {"closed": "O0001"}],
    ]


def test_rebuilding_gives_the_exact_end_state(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    records = {r.case_id: r for r in read_records(_run(tmp_path, suite))}
    initial = load_initial_state(suite)
    assert initial is not None
    expected = _state()
    expected["orders"]["O0002"]["status"] = "closed"
    expected["orders"]["O0005"]["status"] = "closed"
    expected["log"] = [{"closed": "O0002"}, {"closed": "O0005"}]
    rebuilt = rebuild_end_state(records["close-2"], initial)
    assert json.dumps(rebuilt) == json.dumps(expected)  # key order and types too
    assert initial.state == _state()  # the initial state is never changed


def _as_format_1(record: Record, suite: Suite) -> str:
    """The line an earlier toolproof wrote: the whole end state, format /1."""
    initial = load_initial_state(suite)
    data = json.loads(record.model_dump_json(exclude_none=True))
    data["format"] = "toolproof.record/1"
    data["end_state"] = rebuild_end_state(record, initial)
    del data["state_changes"], data["state_base"]
    return json.dumps(data)


def test_old_records_with_a_whole_end_state_score_the_same(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    path = _run(tmp_path, suite)
    old = tmp_path / "old.jsonl"
    old.write_text(
        "".join(_as_format_1(r, suite) + "\n" for r in read_records(path)), encoding="utf-8"
    )
    new_verdicts, old_verdicts = _verdicts(suite, path), _verdicts(suite, old)
    assert old_verdicts == new_verdicts
    assert [(v.case_id, v.passed) for v in new_verdicts] == [
        ("close-1", True),
        ("close-2", False),
        ("partial", True),
    ]
    failed = new_verdicts[1]
    assert "wrong_end_state" in failed.failures
    assert failed.evidence.end_state_diff == (
        'orders / O0005 / status: expected "open", actual "closed"\n'
        "log: expected [{'closed': 'O0002'}], actual [{'closed': 'O0002'}, {'closed': 'O0005'}]"
    )


def test_cases_with_a_written_state_score_without_running_code(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    path = _run(tmp_path, suite)
    only = tmp_path / "partial.jsonl"
    only.write_text(
        "".join(line + "\n" for line in path.read_text().splitlines() if '"partial"' in line)
    )
    [verdict] = _verdicts(suite, only, Trust())
    assert verdict.case_id == "partial" and verdict.passed


def test_records_of_another_initial_state_are_refused_with_their_line(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    path = _run(tmp_path, suite)
    state = _state()
    state["orders"]["O0001"]["note"] = "edited since the run"
    (tmp_path / "suite" / "state.json").write_text(json.dumps(state))
    with pytest.raises(SuiteError) as info:
        evaluate(suite, [path], trust=CODE)
    message = str(info.value)
    assert message.startswith(f"{path}:1: record for case 'close-1'")
    assert "state_base: the record's changes apply to the initial state sha256:" in message
    assert "the state file changed since the run" in message


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (["set", ["orders", "NOPE", "status"], "x"], "state_changes[0]", "no such place"),
        (["remove", ["refunds"]], "state_changes[0]", "nothing to remove"),
        (["move", ["orders"]], "state_changes[0][0]", "Input should be 'set', got 'move'"),
    ],
)
def test_changes_that_do_not_apply_are_refused_with_line_and_field(
    tmp_path: Path, change: list[Any], field: str, reason: str
) -> None:
    suite = _suite(tmp_path)
    path = _run(tmp_path, suite)
    lines = path.read_text(encoding="utf-8").splitlines()
    data = json.loads(lines[1])
    data["state_changes"] = [change]
    lines[1] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        evaluate(suite, [path], trust=CODE)
    message = str(info.value)
    assert message.startswith(f"{path}:2")
    assert field in message and reason in message


def test_a_format_1_line_cannot_carry_state_changes(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps(
            {"format": "toolproof.record/1", "case_id": "a", "state_changes": [["remove", ["x"]]]}
        )
        + "\n"
    )
    with pytest.raises(SuiteError) as info:
        read_records(path)
    assert str(info.value) == (
        f"{path}:1:1: state_changes: 'state_changes' is not a field of records format "
        "toolproof.record/1"
    )

"""Expected end states: computed only for the cases asked for, kept content-addressed, and
never trusted blindly when read back (a damaged or forged entry is recomputed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from toolproof.evaluate import evaluate
from toolproof.run import RunOptions, Target, run_suite
from toolproof.run._expected import StoredStates
from toolproof.suite import load_suite
from toolproof.trust import Trust

CODE = Trust(allow_code=True)

ENV = """
import pathlib

CALLS = pathlib.Path(__file__).with_name("calls.txt")


def cancel_order(state, args):
    with CALLS.open("a") as fh:
        fh.write(args["order_id"] + "\\n")
    order = state["orders"][args["order_id"]]
    if order["status"] != "pending":
        raise ValueError("only a pending order can be cancelled")
    order["status"] = "cancelled"
    return {"ok": True}
"""


def _suite(tmp: Path) -> Path:
    folder = tmp / "s"
    folder.mkdir()
    cases = [
        {
            "id": f"cancel-{n}",
            "prompt": f"Cancel ORD-{n}.",
            "max_steps": 3,
            "expect": {"kind": "text"},
            "end_state": {"actions": [{"tool": "cancel_order", "args": {"order_id": f"ORD-{n}"}}]},
        }
        for n in (1, 2, 3)
    ]
    suite = {
        "suite": "orders",
        "tools": [
            {
                "name": "cancel_order",
                "effect": "write",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            }
        ],
        "environment": {"state": "state.json", "tools": "env.py"},
        "cases": cases,
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    orders = {"ORD-1": "pending", "ORD-2": "pending", "ORD-3": "shipped"}
    state = {"orders": {k: {"status": v} for k, v in orders.items()}}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "env.py").write_text(ENV)
    return folder


def _calls(folder: Path) -> list[str]:
    path = folder / "calls.txt"
    return path.read_text().split() if path.exists() else []


def test_only_the_cases_asked_for_are_computed(tmp_path: Path) -> None:
    folder = _suite(tmp_path)
    states = StoredStates(load_suite(folder), CODE, folder=tmp_path / "cache")
    assert list(states) == ["cancel-1", "cancel-2", "cancel-3"]
    assert states["cancel-2"].state["orders"]["ORD-2"] == {"status": "cancelled"}
    assert _calls(folder) == ["ORD-2"]
    assert states.computed == 1 and states.hits == 0
    assert states["cancel-2"] is states["cancel-2"]  # once per process too
    assert states.warnings == []
    assert states["cancel-3"].state["orders"]["ORD-3"] == {"status": "shipped"}
    assert len(states.warnings) == 1 and "only a pending order" in states.warnings[0]


def test_a_kept_state_is_read_back_without_running_the_tools(tmp_path: Path) -> None:
    folder = _suite(tmp_path)
    cache = tmp_path / "cache"
    first = StoredStates(load_suite(folder), CODE, folder=cache)
    expected = first["cancel-1"].state
    warned = first["cancel-3"].warnings
    again = StoredStates(load_suite(folder), CODE, folder=cache)
    assert again["cancel-1"].state == expected
    assert again["cancel-3"].warnings == warned  # the warnings are kept too
    assert again.hits == 2 and again.computed == 0
    assert _calls(folder) == ["ORD-1", "ORD-3"]  # not run again


def test_a_changed_tools_file_is_another_key(tmp_path: Path) -> None:
    folder = _suite(tmp_path)
    cache = tmp_path / "cache"
    StoredStates(load_suite(folder), CODE, folder=cache)["cancel-1"]
    (folder / "env.py").write_text(ENV.replace('"cancelled"', '"void"'))
    again = StoredStates(load_suite(folder), CODE, folder=cache)
    assert again["cancel-1"].state["orders"]["ORD-1"] == {"status": "void"}
    assert again.computed == 1


def _entry(cache: Path) -> Path:
    (entry,) = cache.glob("*/*.json")
    return entry


@pytest.mark.parametrize(
    "tamper",
    [
        "content",  # a value changed, digest left as it was
        "forged",  # a value changed and the digest recomputed, but for another key
        "garbage",
        "bad changes",  # a digest that matches, over changes that do not apply
    ],
)
def test_a_tampered_entry_is_recomputed_never_believed(tmp_path: Path, tamper: str) -> None:
    from toolproof.run._expected import _dumps, _sha

    folder = _suite(tmp_path)
    cache = tmp_path / "cache"
    StoredStates(load_suite(folder), CODE, folder=cache)["cancel-1"]
    path = _entry(cache)
    entry = json.loads(path.read_text())
    if tamper == "garbage":
        path.write_text("{not json")
    else:
        if tamper == "bad changes":
            entry["changes"] = [["set", ["orders", "ORD-9", "status", "x"], 1]]
        else:
            entry["changes"] = [["set", ["orders", "ORD-1", "status"], "pending"]]
        if tamper == "forged":
            entry["key"] = "0" * 64
        if tamper in ("forged", "bad changes"):
            body = {"key": entry["key"], "changes": entry["changes"], "warnings": []}
            entry["digest"] = _sha(_dumps(body))
        path.write_text(json.dumps(entry))
    again = StoredStates(load_suite(folder), CODE, folder=cache)
    assert again["cancel-1"].state["orders"]["ORD-1"] == {"status": "cancelled"}
    assert again.hits == 0 and again.computed == 1
    restored = json.loads(_entry(cache).read_text())
    assert restored["changes"] == [["set", ["orders", "ORD-1", "status"], "cancelled"]]


def test_score_of_one_record_computes_one_expected_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _suite(tmp_path)
    monkeypatch.setenv("TOOLPROOF_CACHE", str(tmp_path / "c"))
    suite = load_suite(folder, trust=CODE)
    call = {"name": "cancel_order", "arguments": {"order_id": "ORD-2"}}
    script = {"cases": {"cancel-2": {"steps": [{"tool_calls": [call]}, {"text": "Done."}]}}}
    (folder / "script.yaml").write_text(yaml.safe_dump(script))
    one = suite.model_copy(update={"cases": [c for c in suite.cases if c.id == "cancel-2"]})
    run_suite(
        one,
        [Target(spec=f"scripted:{folder / 'script.yaml'}")],
        RunOptions(out=tmp_path / "r", cache=False, fsync=False, trust=CODE, observer=None),
    )
    (folder / "calls.txt").unlink()
    ev = evaluate(suite, [tmp_path / "r" / "records.jsonl"], trust=CODE)
    (verdict,) = [v for t in ev.targets.values() for v in t.verdicts]
    assert verdict.passed
    assert _calls(folder) == ["ORD-2"]  # the other two cases' gold actions never ran
    assert len(list((tmp_path / "c" / "expected").glob("*/*.json"))) == 1
    again = evaluate(suite, [tmp_path / "r" / "records.jsonl"], trust=CODE)
    assert [v.passed for t in again.targets.values() for v in t.verdicts] == [True]
    assert _calls(folder) == ["ORD-2"]  # kept: not run again


def test_an_empty_list_of_actions_expects_the_starting_state_rows_with_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The starting state itself, not a view of it: rows holding lists compare equal."""
    folder = _suite(tmp_path)
    monkeypatch.setenv("TOOLPROOF_CACHE", str(tmp_path / "c"))
    state = {"orders": {"ORD-1": {"status": "pending", "items": [{"sku": "A", "qty": 1}]}}}
    (folder / "state.json").write_text(json.dumps(state))
    data = yaml.safe_load((folder / "suite.yaml").read_text())
    data["cases"] = [{**data["cases"][0], "id": "nothing", "end_state": {"actions": []}}]
    (folder / "suite.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    suite = load_suite(folder, trust=CODE)
    script = {"cases": {"nothing": {"steps": [{"text": "Nothing to do."}]}}}
    (folder / "script.yaml").write_text(yaml.safe_dump(script))
    run_suite(
        suite,
        [Target(spec=f"scripted:{folder / 'script.yaml'}")],
        RunOptions(out=tmp_path / "r", cache=False, fsync=False, trust=CODE, observer=None),
    )
    ev = evaluate(suite, [tmp_path / "r" / "records.jsonl"], trust=CODE)
    (verdict,) = [v for t in ev.targets.values() for v in t.verdicts]
    assert verdict.multistep is not None and verdict.multistep.end_state_ok is True
    assert verdict.passed

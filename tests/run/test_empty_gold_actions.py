"""A case whose gold ``end_state.actions`` is an empty list: nothing may change.

Its expected state is the starting state. The user's steps: `validate` passes,
`run --allow-code` grades it (before, it wrote the records and then exited 2
saying the suite's code needs --allow-code, which had been given), and
`score` grades it too, with or without --allow-code (no code is needed to
know that nothing changes).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.cli_support import toolproof

SUITE = {
    "suite": "readonly",
    "tools": [
        {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        }
        for name in ("lookup_order", "cancel_order")
    ],
    "environment": {"state": "state.json", "tools": "env.py"},
    "cases": [
        {
            "id": "read-only",
            "prompt": "Where is ORD-1?",
            "max_steps": 3,
            "expect": {"kind": "text"},
            "end_state": {"actions": []},
        }
    ],
}
ENV = '''
def lookup_order(state, args):
    return state["orders"][args["order_id"]]


def cancel_order(state, args):
    state["orders"][args["order_id"]]["status"] = "cancelled"
    return {"ok": True}
'''


def _suite(tmp: Path, tool: str) -> Path:
    folder = tmp / "s"
    folder.mkdir()
    (folder / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    (folder / "state.json").write_text(json.dumps({"orders": {"ORD-1": {"status": "shipped"}}}))
    (folder / "env.py").write_text(ENV)
    call = {"name": tool, "raw_arguments": '{"order_id": "ORD-1"}'}
    script = {"read-only": {"steps": [{"tool_calls": [call]}, {"text": "It has shipped."}]}}
    (folder / "script.yaml").write_text(yaml.safe_dump(script))
    return folder


def test_an_empty_list_of_gold_actions_is_the_starting_state(tmp_path: Path) -> None:
    _suite(tmp_path, "lookup_order")
    assert toolproof("validate", "s", "--allow-code", cwd=tmp_path).returncode == 0
    run = ["run", "s", "-m", "scripted:s/script.yaml", "-q", "-o", "r", "--no-store"]
    done = toolproof(*run, "--allow-code", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 1 scored attempts passed" in done.stdout
    scored = toolproof("score", "s", "r", "--allow-code", "--no-store", cwd=tmp_path)
    assert scored.returncode == 0, scored.stdout + scored.stderr


def test_a_change_fails_a_case_that_expects_none(tmp_path: Path) -> None:
    _suite(tmp_path, "cancel_order")
    run = ["run", "s", "-m", "scripted:s/script.yaml", "-q", "-o", "r", "--no-store"]
    done = toolproof(*run, "--allow-code", cwd=tmp_path)
    assert "1 of 1 scored attempts failed" in done.stdout, done.stdout + done.stderr
    report = toolproof("score", "s", "r", "--allow-code", "--no-store", cwd=tmp_path)
    assert "the end state differs in 1 place(s)" in report.stdout
    assert "cancelled" in report.stdout


def test_the_expected_state_needs_no_code(tmp_path: Path) -> None:
    from toolproof.run import expected_states
    from toolproof.suite import load_suite

    suite = load_suite(_suite(tmp_path, "lookup_order"))
    state = expected_states(suite)["read-only"]  # no --allow-code: nothing runs
    assert state.state == {"orders": {"ORD-1": {"status": "shipped"}}}
    assert not state.partial and not state.warnings

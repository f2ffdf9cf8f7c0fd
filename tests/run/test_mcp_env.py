"""A real MCP server as the environment of multi-step cases: every call really runs on it.

The server is the tests' own (``tests/mcpenv/servers/files_server.py``, written
with the mcp SDK), copied into the suite's folder and started over stdio for
each attempt by a scripted run.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import SuiteError, SuiteProblems, UserError
from toolproof.grade import Scorer
from toolproof.mcpenv import INSTALL_HINT
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records._steps import expand_steps
from toolproof.run import RunOptions, Target, run_suite
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Record, Suite

from .conftest import write_suite

pytest.importorskip("mcp", reason="the mcp extra is not installed")

SERVER = Path(__file__).parents[1] / "mcpenv" / "servers" / "files_server.py"
CODE = Trust(allow_code=True)


def _string(name: str) -> dict[str, Any]:
    return {"type": "string", "description": name}


TOOLS = [
    {
        "name": "write_file",
        "effect": "write",
        "parameters": {
            "type": "object",
            "properties": {"path": _string("file"), "text": _string("text")},
            "required": ["path", "text"],
        },
    },
    {
        "name": "read_file",
        "effect": "read",
        "parameters": {
            "type": "object",
            "properties": {"path": _string("file")},
            "required": ["path"],
        },
    },
    {"name": "explode", "parameters": {"type": "object", "properties": {}}},
    {
        "name": "slow",
        "parameters": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
]


def _suite_data(**environment: Any) -> dict[str, Any]:
    return {
        "format": 1,
        "suite": "mcp-env",
        "tools": TOOLS,
        "environment": {"mcp": f"stdio:{PYTHON} server.py", **environment},
        "cases": [
            {
                "id": "write-then-read",
                "prompt": "Save 'hi' in note.txt, then read it back.",
                "max_steps": 4,
                "trajectory": {
                    "steps": [
                        {"tool": "write_file", "args": {"path": "note.txt", "text": "hi"}},
                        {"tool": "read_file", "args": {"path": "note.txt"}},
                    ]
                },
                "end_state": {"state": {"note.txt": "hi", "hello.txt": "hello from the suite"}},
            },
            {
                "id": "tool-fails",
                "prompt": "Explode.",
                "max_steps": 3,
                "expect": {"kind": "text"},
            },
            {
                "id": "tool-hangs",
                "prompt": "Wait a long time.",
                "max_steps": 3,
                "expect": {"kind": "text"},
            },
            {
                "id": "mock-overrides",
                "prompt": "Read secret.txt, then hello.txt.",
                "max_steps": 4,
                "mocks": {
                    "read_file": {
                        "rules": [{"when": {"path": "secret.txt"}, "fault": "unavailable"}]
                    }
                },
                "expect": {"kind": "text"},
            },
        ],
    }


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "raw_arguments": json.dumps(args)}


SCRIPT = {
    "write-then-read": {
        "steps": [
            {"tool_calls": [_call("write_file", path="note.txt", text="hi")]},
            {"tool_calls": [_call("read_file", path="note.txt")]},
            {"text": "note.txt says hi."},
        ]
    },
    "tool-fails": {
        "steps": [{"tool_calls": [_call("explode")]}, {"text": "Sorry, that failed."}]
    },
    "tool-hangs": {
        "steps": [{"tool_calls": [_call("slow", seconds=30)]}, {"text": "It took too long."}]
    },
    "mock-overrides": {
        "steps": [
            {"tool_calls": [_call("read_file", path="secret.txt")]},
            {"tool_calls": [_call("read_file", path="hello.txt")]},
            {"text": "hello.txt says hello."},
        ]
    },
}

PYTHON = Path(sys.executable).name  # a bare name found on PATH, as a suite would write it


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python`` in the suite means this interpreter (the one with the mcp SDK)."""
    import os

    here = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", here + os.pathsep + os.environ.get("PATH", ""))


def _folder(tmp_path: Path, data: dict[str, Any]) -> Path:
    folder = tmp_path / "suite"
    path = write_suite(folder, data)
    shutil.copy(SERVER, folder / "server.py")
    (folder / "hello.txt").write_text("hello from the suite")
    return path


def _run(suite: Suite, tmp_path: Path, trust: Trust = CODE) -> dict[str, Record]:
    provider = ScriptedProvider.from_dict({"cases": SCRIPT})
    opts = RunOptions(trust=trust, out=tmp_path / "run", cache=False, fsync=False)
    result = run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    return {r.case_id: r for r in result.records}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Suite, dict[str, Record], Path]:
    import os

    tmp_path = tmp_path_factory.mktemp("mcp")
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + old
    try:
        suite = load_suite(
            _folder(tmp_path, _suite_data(call_timeout=2, state_tool="files")), CODE
        )
        return suite, _run(suite, tmp_path), tmp_path / "suite"
    finally:
        os.environ["PATH"] = old


def _tool_messages(record: Record) -> list[Any]:
    return [m for m in record.transcript or [] if m.role == "tool"]


def test_each_call_really_runs_on_the_server_and_is_recorded(
    ran: tuple[Suite, dict[str, Record], Path],
) -> None:
    _, records, folder = ran
    record = records["write-then-read"]
    assert record.outcome == "ok"
    wrote, read = _tool_messages(record)
    assert wrote.content == "wrote 2 characters to note.txt" and not wrote.is_error
    assert read.content == "hi" and not read.is_error
    calls = record.mcp_calls or []
    assert [(c.tool, c.purpose) for c in calls] == [
        ("write_file", "call"),
        ("read_file", "call"),
        ("files", "state"),
    ]
    assert calls[1].arguments == {"path": "note.txt"}
    assert calls[1].result is not None and calls[1].result["content"][0]["text"] == "hi"
    assert all(c.duration_ms > 0 for c in calls)
    assert record.end_state == {"hello.txt": "hello from the suite", "note.txt": "hi"}
    assert not (folder / "note.txt").exists()  # the server ran in a temporary copy


def test_the_end_state_from_the_state_tool_is_graded(
    ran: tuple[Suite, dict[str, Record], Path],
) -> None:
    suite, records, _ = ran
    verdict = Scorer(suite).grade(records["write-then-read"])
    assert verdict is not None and verdict.passed, [c.message for c in verdict.checks]
    assert verdict.multistep is not None
    assert verdict.multistep.trajectory_ok and verdict.multistep.end_state_ok


def test_a_failing_tool_is_an_error_result_the_model_reads(
    ran: tuple[Suite, dict[str, Record], Path],
) -> None:
    record = ran[1]["tool-fails"]
    (message,) = _tool_messages(record)
    assert message.is_error and message.content == "Error executing tool explode"
    assert record.mcp_calls is not None and record.mcp_calls[0].is_error
    # the model's next request carried the error (stored as what it adds to the first)
    sent = expand_steps(record.steps or [])[1]["request"]["messages"][-1]
    assert sent["role"] == "tool" and "Error executing tool explode" in json.dumps(sent)


def test_a_call_past_the_timeout_is_an_error_result(
    ran: tuple[Suite, dict[str, Record], Path],
) -> None:
    record = ran[1]["tool-hangs"]
    (message,) = _tool_messages(record)
    assert message.is_error
    assert json.loads(message.content or "") == {"error": "slow: no answer within 2 s"}
    assert record.mcp_calls is not None
    hung = record.mcp_calls[0]
    assert hung.timed_out and hung.result is None and 1500 < hung.duration_ms < 30_000
    assert record.response is not None and record.response.text == "It took too long."


def test_a_mock_rule_overrides_one_call_and_the_rest_reach_the_server(
    ran: tuple[Suite, dict[str, Record], Path],
) -> None:
    record = ran[1]["mock-overrides"]
    mocked, real = _tool_messages(record)
    assert mocked.is_error and "503 Service Unavailable" in (mocked.content or "")
    assert real.content == "hello from the suite" and not real.is_error
    # only the call no rule matched ran on the server (then the state call)
    ran_calls = [(c.tool, c.arguments) for c in record.mcp_calls or []]
    assert ran_calls == [("read_file", {"path": "hello.txt"}), ("files", {})]


def test_without_allow_code_nothing_starts(tmp_path: Path) -> None:
    suite = load_suite(_folder(tmp_path, _suite_data(state_tool="files")))
    with pytest.raises(SuiteError) as caught:
        _run(suite, tmp_path, Trust())
    assert caught.value.path == ("environment", "mcp")
    assert "real MCP server" in str(caught.value) and "--allow-code" in str(caught.value)
    assert not (tmp_path / "run").exists()


def test_a_server_that_cannot_start_stops_the_run_with_one_error(tmp_path: Path) -> None:
    path = _folder(tmp_path, _suite_data(state_tool="files"))
    (path.parent / "server.py").write_text("raise SystemExit(3)\n")
    suite = load_suite(path, CODE)
    with pytest.raises(Exception, match="did not start"):
        _run(suite, tmp_path)


def test_without_the_mcp_sdk_the_run_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = load_suite(_folder(tmp_path, _suite_data(state_tool="files")), CODE)
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` fails as if not installed
    with pytest.raises(UserError) as err:
        _run(suite, tmp_path)
    # (toolproof is not on the package index: the hint names the checkout's extra)
    assert str(err.value) == INSTALL_HINT and "[mcp]" in INSTALL_HINT
    assert "pip install " in INSTALL_HINT and "'toolproof[mcp]'" not in INSTALL_HINT
    assert not (tmp_path / "run").exists()


def test_the_working_folder_is_the_one_the_suite_names(tmp_path: Path) -> None:
    from toolproof.run._runner import mcp_spec

    data = _suite_data(folder="srv", call_timeout=7, state_tool="files")
    path = write_suite(tmp_path / "suite", data)
    (path.parent / "srv").mkdir()
    (path.parent / "srv" / "server.py").write_text("")
    spec = mcp_spec(load_suite(path), CODE)
    assert spec.workdir == path.parent / "srv" and spec.call_timeout_s == 7
    assert spec.command == (PYTHON, "server.py")
    # the command's files are looked up in that folder, not beside the suite file
    (path.parent / "srv" / "server.py").unlink()
    (path.parent / "server.py").write_text("")
    with pytest.raises(SuiteProblems, match=r"environment\.mcp: .* does not run a file"):
        load_suite(path)

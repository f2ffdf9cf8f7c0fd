"""An MCP environment in a suite: what it may say, and one located error for what it may not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.errors import SuiteError, SuiteProblems
from toolproof.suite import load_suite
from toolproof.suite._api import load_suite_checked
from toolproof.trust import Trust

TOOL = {"name": "read_file", "parameters": {"type": "object", "properties": {}}}


def _write(folder: Path, environment: dict[str, Any], case: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "server.py").write_text("print('a server')\n")
    data = {
        "suite": "s",
        "tools": [TOOL],
        "environment": environment,
        "cases": [
            {
                "id": "c",
                "prompt": "Read it.",
                "max_steps": 3,
                "expect": {"kind": "text"},
                **(case or {}),
            }
        ],
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _problems(path: Path, trust: Trust | None = None, *, code: bool = False) -> list[SuiteError]:
    try:
        _, errors = load_suite_checked(path, trust or Trust(), check_code=code)
    except SuiteProblems as exc:
        return list(exc.errors)
    return errors


def _one(path: Path, trust: Trust | None = None, *, code: bool = False) -> str:
    problems = _problems(path, trust, code=code)
    assert len(problems) == 1, [str(p) for p in problems]
    return str(problems[0])


def test_an_mcp_environment_loads(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, {"mcp": "stdio:python server.py", "call_timeout": 5}))
    assert suite.environment is not None and suite.environment.mcp == "stdio:python server.py"
    assert suite.environment.call_timeout == 5


@pytest.mark.parametrize(
    ("environment", "field", "message"),
    [
        ({"mcp": "stdio:python server.py", "state": "s.json"}, "environment", "not both"),
        ({"state": "s.json"}, "environment", "missing required key 'tools'"),
        (
            {"state": "s.json", "tools": "t.py", "call_timeout": 3},
            "environment",
            "'call_timeout' applies only to an 'mcp' environment",
        ),
        ({"mcp": "python server.py"}, "environment.mcp", "stdio:"),
        ({"mcp": "stdio:python server.py", "call_timeout": 0}, "environment.call_timeout", ""),
        ({"mcp": "stdio:python -m some_module"}, "environment.mcp", "-m runs code"),
        ({"mcp": "stdio:python ../server.py"}, "environment.mcp", "goes up with '..'"),
        ({"mcp": "stdio:python /srv/server.py"}, "environment.mcp", "absolute path"),
        ({"mcp": "stdio:python 'server.py"}, "environment.mcp", "cannot split"),
        ({"mcp": "stdio:"}, "environment.mcp", "give the command"),
        (
            {"mcp": "stdio:python server.py", "folder": "nowhere"},
            "environment.folder",
            "no such folder 'nowhere'",
        ),
    ],
)
def test_a_wrong_environment_is_one_located_error(
    tmp_path: Path, environment: dict[str, Any], field: str, message: str
) -> None:
    text = _one(_write(tmp_path, environment))
    assert "suite.yaml:" in text and f" {field}: " in text and message in text


def test_the_user_may_trust_an_exact_command_from_elsewhere(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcp": "stdio:python -m some_module --flag"})
    trusted = Trust(commands=frozenset({("python", "-m", "some_module", "--flag")}))
    assert _problems(path, trusted) == []
    other = Trust(commands=frozenset({("python", "-m", "some_module")}))
    assert "-m runs code" in _one(path, other)


def test_gold_actions_are_refused_on_an_mcp_environment(tmp_path: Path) -> None:
    case = {"end_state": {"actions": [{"tool": "read_file", "args": {}}]}}
    text = _one(_write(tmp_path, {"mcp": "stdio:python server.py"}, case))
    assert "cases[0].end_state.actions" in text and "not replayed on an MCP environment" in text


def test_an_expected_state_needs_a_state_tool(tmp_path: Path) -> None:
    case = {"end_state": {"state": {"a.txt": "x"}}}
    text = _one(_write(tmp_path, {"mcp": "stdio:python server.py"}, case))
    assert "cases[0].end_state.state" in text and "state_tool" in text
    fixed = _write(tmp_path, {"mcp": "stdio:python server.py", "state_tool": "files"}, case)
    assert _problems(fixed) == []


def test_validate_without_allow_code_names_the_server(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcp": "stdio:python server.py"})
    text = _one(path, code=True)
    assert " environment.mcp: " in text and "real MCP server" in text and "--allow-code" in text
    assert _problems(path, Trust(allow_code=True), code=True) == []


def test_changing_the_server_file_changes_the_suite_fingerprint(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcp": "stdio:python server.py"})
    before = load_suite(path).fingerprint()
    (tmp_path / "server.py").write_text("print('another server')\n")
    assert load_suite(path).fingerprint() != before

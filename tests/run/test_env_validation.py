"""`toolproof validate` checks the multi-step parts of a suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.errors import SuiteError
from toolproof.suite import check_suite
from toolproof.suite._load import load_suite_with_origin

BASE: dict[str, Any] = {
    "suite": "v",
    "tools": [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}],
    "mocks": {"ghost": {"default": {"result": 1}}},
    "cases": [
        {
            "id": "a",
            "prompt": "x",
            "mocks": {"phantom": {"default": {"result": 1}}},
            "trajectory": {"steps": [{"tool": "nope"}]},
            "end_state": {"actions": [{"tool": "lookup"}]},
        }
    ],
}


def test_unknown_tools_and_missing_environment_are_reported(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(BASE), encoding="utf-8")
    messages = [str(e) for e in check_suite(load_suite_with_origin(tmp_path / "suite.yaml"))]
    text = "\n".join(messages)
    assert "mock for unknown tool 'ghost'" in text
    assert "mock for unknown tool 'phantom'" in text
    assert "unknown tool 'nope'" in text
    assert "gold actions need a suite 'environment'" in text


def test_a_clean_multistep_case_has_no_problems(tmp_path: Path) -> None:
    clean = {
        **BASE,
        "mocks": {},
        "cases": [
            {
                "id": "a",
                "prompt": "x",
                "mocks": {"lookup": {"rules": [{"when": {"id": 1}, "fault": "timeout"}]}},
                "trajectory": {"steps": [{"tool": "lookup"}]},
            }
        ],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(clean), encoding="utf-8")
    assert check_suite(load_suite_with_origin(tmp_path / "suite.yaml")) == []


def _env_suite(tmp_path: Path) -> Path:
    data = {
        "suite": "v",
        "tools": [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}],
        "environment": {"state": "state.json", "tools": "tools.py"},
        "cases": [{"id": "a", "prompt": "x", "expect": {"kind": "text"}}],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return tmp_path / "suite.yaml"


def test_changing_the_environment_files_changes_the_fingerprint(tmp_path: Path) -> None:
    path = _env_suite(tmp_path)
    (tmp_path / "state.json").write_text('{"orders": {}}')
    (tmp_path / "tools.py").write_text("def lookup(state, args):\n    return 1\n")
    before = load_suite_with_origin(path).suite.fingerprint()
    (tmp_path / "state.json").write_text('{"orders": {"A": {}}}')
    assert load_suite_with_origin(path).suite.fingerprint() != before


def test_a_missing_environment_file_is_an_error_at_its_field(tmp_path: Path) -> None:
    path = _env_suite(tmp_path)
    (tmp_path / "tools.py").write_text("")
    with pytest.raises(SuiteError, match=r"environment\.state.*state\.json"):
        load_suite_with_origin(path)

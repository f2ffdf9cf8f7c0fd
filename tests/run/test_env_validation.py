"""`toolproof validate` checks the multi-step parts of a suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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

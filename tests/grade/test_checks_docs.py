"""docs/checks.md: every Python example runs, in order, from the repository root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "checks.md"


def test_the_examples_of_the_checks_document_run(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    runnable = [b for b in blocks if "class CaseCheck(Protocol)" not in b]
    assert len(runnable) == 3
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"Finding": __import__("toolproof.grade").grade.Finding}
    for block in runnable:
        exec(compile(block, str(DOC), "exec"), namespace)


def test_the_example_suite_check_fails_a_reply_that_pastes_json() -> None:
    import importlib.util

    from toolproof.types import Response

    spec = importlib.util.spec_from_file_location("support_checks", ROOT / "examples/support/checks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Answer:
        def __init__(self, text: str) -> None:
            self.response = Response(text=text)

    failed = module.no_raw_tool_output(None, Answer('Here: {"status": "shipped", "id": 1}'))
    assert failed.passed is False and "raw JSON" in failed.reason
    assert module.no_raw_tool_output(None, Answer("It shipped {soon}.")) is True

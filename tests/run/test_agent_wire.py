"""The agent loop through real provider adapters and the local stub server (127.0.0.1 only).

Each tool result must reach the model in the provider's own format, tied to
the call it answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.providers import ModelSettings
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.suite import load_suite
from toolproof.testing import Reply, StubServer

from .conftest import write_suite

SUITE: dict[str, Any] = {
    "format": 1,
    "suite": "wire",
    "tools": [
        {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        }
    ],
    "mocks": {
        "lookup": {
            "rules": [{"when": {"id": "A"}, "result": {"status": "shipped"}}],
            "default": {"fault": "unavailable"},
        }
    },
    "cases": [
        {
            "id": "ok",
            "prompt": "Where is A?",
            "max_steps": 3,
            "trajectory": {"steps": [{"tool": "lookup", "args": {"id": "A"}}]},
        },
        {"id": "down", "prompt": "Where is B?", "max_steps": 3, "expect": {"kind": "text"}},
    ],
}


def _tool_result(fmt: str, body: dict[str, Any]) -> tuple[str, str, bool]:
    """(call id, content, is_error) of the last tool result in a request body."""
    if fmt == "openai":
        last = body["messages"][-1]
        assert last["role"] == "tool"
        return last["tool_call_id"], last["content"], "503" in last["content"]
    if fmt == "anthropic":
        last = body["messages"][-1]
        assert last["role"] == "user"
        block = last["content"][-1]
        assert block["type"] == "tool_result"
        text = (
            block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
        )
        return block["tool_use_id"], text, bool(block.get("is_error"))
    last = body["contents"][-1]
    part = last["parts"][-1]["functionResponse"]
    return part.get("id") or part["name"], json.dumps(part["response"]), "503" in json.dumps(part)


@pytest.mark.parametrize(
    ("spec", "fmt", "key"),
    [
        ("openai:gpt-4.1-mini", "openai", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "gemini", "GEMINI_API_KEY"),
    ],
)
def test_tool_results_go_back_in_the_providers_format(
    spec: str, fmt: str, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(key, "test-key-not-real")
    suite = load_suite(write_suite(tmp_path / "suite", SUITE))
    script = [
        Reply.call("lookup", {"id": "A"}, id="call_A"),
        Reply.say("A has shipped."),
    ]
    with StubServer(script, default=Reply.say("Sorry, the service is unavailable.")) as stub:
        settings = ModelSettings(base_url=stub.base_url(fmt))
        opts = RunOptions(
            out=tmp_path / "run",
            cache=False,
            fsync=False,
            retry=RetryPolicy(base_s=0.001, cap_s=0.01),
        )
        # one case at a time, so the stub's script lines up with the steps
        target = Target(spec, settings=settings)
        result = run_suite(suite, [target], opts)
        bodies = [r.body for r in stub.requests]
    record = next(r for r in result.records if r.case_id == "ok")
    assert record.outcome == "ok", record.error
    assert record.response is not None and record.response.text == "A has shipped."
    assert record.steps is not None and len(record.steps) == 2
    call_id, content, is_error = _tool_result(fmt, bodies[1])
    assert '"shipped"' in content and not is_error
    if fmt != "gemini":
        assert call_id == "call_A"

"""The user's agent as a target: a Python callable or an HTTP endpoint."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from toolproof.errors import UserError
from toolproof.providers import ModelSettings
from toolproof.providers._normalise import to_response
from toolproof.run import RunOptions, Target, run_suite
from toolproof.types import Outcome, Response, Suite

from . import agents

AGENTS = agents.__name__


def opts(tmp_path: Path, name: str = "r") -> RunOptions:
    return RunOptions(out=tmp_path / name, cache_dir=tmp_path / "cache", fsync=False)


def agent(spec: str, **settings: Any) -> Target:
    return Target(spec=spec, kind="target", settings=ModelSettings.model_validate(settings))


def test_a_sync_callable_returning_an_openai_message(suite: Suite, tmp_path: Path) -> None:
    result = run_suite(suite, [agent(f"{AGENTS}:openai_style")], opts(tmp_path))
    rec = next(r for r in result.records if r.case_id == "case-4")
    assert rec.outcome is Outcome.ok and rec.response is not None
    call = rec.response.tool_calls[0]
    assert call.name == "lookup_order" and call.arguments == {"order_id": "ORD-000004"}
    assert rec.response.raw["role"] == "assistant"  # the agent's own answer is kept
    assert rec.request["messages"][-1]["content"] == "Where is order ORD-000004?"


def test_an_async_callable_returning_anthropic_blocks(suite: Suite, tmp_path: Path) -> None:
    result = run_suite(suite, [agent(f"{AGENTS}:anthropic_style")], opts(tmp_path))
    response = result.records[0].response
    assert response is not None and response.text == "Looking it up."
    assert response.tool_calls[0].raw_arguments == '{"order_id": "X"}'


def test_an_agent_crash_is_recorded_not_retried_not_scored(suite: Suite, tmp_path: Path) -> None:
    result = run_suite(suite, [agent(f"{AGENTS}:crashes")], opts(tmp_path))
    assert {r.outcome for r in result.records} == {Outcome.server_error}
    assert "ValueError: agent bug" in (result.records[0].error.message or "")  # type: ignore[union-attr]
    assert result.manifest.counts["retries"] == 0


def test_an_unreadable_answer_is_rejected(suite: Suite, tmp_path: Path) -> None:
    result = run_suite(suite, [agent(f"{AGENTS}:nonsense")], opts(tmp_path))
    assert {r.outcome for r in result.records} == {Outcome.rejected}


def test_a_slow_agent_times_out(suite: Suite, tmp_path: Path) -> None:
    slow = agent(f"{AGENTS}:slow", timeout_s=0.05, max_retries=0, concurrency=6)
    result = run_suite(suite, [slow], opts(tmp_path))
    assert {r.outcome for r in result.records} == {Outcome.timeout}


def test_agent_answers_are_not_cached(suite: Suite, tmp_path: Path) -> None:
    agents.CALLS["n"] = 0
    run_suite(suite, [agent(f"{AGENTS}:counted")], opts(tmp_path, "a"))
    run_suite(suite, [agent(f"{AGENTS}:counted")], opts(tmp_path, "b"))
    assert agents.CALLS["n"] == 12


def test_a_bad_target_spec_is_a_user_error(suite: Suite, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot import"):
        run_suite(suite, [agent("no_such_module_xyz:f")], opts(tmp_path))
    with pytest.raises(UserError, match="has no"):
        run_suite(suite, [agent(f"{AGENTS}:missing")], opts(tmp_path, "r2"))


@pytest.mark.parametrize(
    ("value", "text", "calls"),
    [
        ("plain", "plain", 0),
        ({"text": "t", "tool_calls": [{"name": "a", "raw_arguments": "{}"}]}, "t", 1),
        ({"choices": [{"message": {"role": "assistant", "content": "c"}}]}, "c", 0),
        (
            {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "m"}]},
            "m",
            0,
        ),
        (Response(text="r"), "r", 0),
    ],
)
def test_answer_shapes_are_normalised(value: Any, text: str, calls: int) -> None:
    response = to_response(value)
    assert response.text == text and len(response.tool_calls) == calls


class _Server:
    def __init__(self) -> None:
        self.bodies: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self.fail_first = 0
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.bodies.append(await request.json())
        self.headers.append(dict(request.headers))
        if self.fail_first > 0:
            self.fail_first -= 1
            return web.Response(status=503, headers={"Retry-After": "0"}, text="busy")
        order = self.bodies[-1]["messages"][-1]["content"].split()[-1].rstrip("?")
        body = {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": order}}]}
        return web.json_response(body)


@pytest.fixture
def server() -> Iterator[_Server]:
    state = _Server()
    app = web.Application()
    app.router.add_post("/respond", state.handle)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    state.url = f"http://127.0.0.1:{port}/respond"
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield state
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.run_until_complete(runner.cleanup())
    loop.close()


def test_an_http_agent(
    suite: Suite, tmp_path: Path, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPROOF_TEST_AGENT_KEY", "sk-secret-agent-123")
    server.fail_first = 2
    target = agent(server.url, api_key_env="TOOLPROOF_TEST_AGENT_KEY", temperature=0)
    result = run_suite(suite, [target], opts(tmp_path))
    assert all(r.outcome is Outcome.ok for r in result.records)
    rec = next(r for r in result.records if r.case_id == "case-2")
    assert rec.response is not None
    assert rec.response.tool_calls[0].arguments == {"order_id": "ORD-000002"}
    assert set(server.bodies[0]) == {"messages", "tools", "settings"}
    assert server.bodies[0]["settings"]["temperature"] == 0
    assert server.headers[0]["Authorization"] == "Bearer sk-secret-agent-123"
    assert result.manifest.counts["retries"] == 2
    for path in (tmp_path / "r").iterdir():
        assert "sk-secret-agent-123" not in path.read_text()
    assert (
        json.loads((tmp_path / "r" / "manifest.json").read_text())["targets"][0]["kind"] == "target"
    )


def test_a_missing_key_for_an_http_agent_is_one_user_error(
    suite: Suite, tmp_path: Path, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLPROOF_TEST_AGENT_KEY", raising=False)
    target = agent(server.url, api_key_env="TOOLPROOF_TEST_AGENT_KEY", concurrency=3)
    with pytest.raises(UserError, match="TOOLPROOF_TEST_AGENT_KEY"):
        run_suite(suite, [target], opts(tmp_path))
    assert server.bodies == []


def test_an_agents_own_code_asks_which_attempt_it_runs(suite: Suite, tmp_path: Path) -> None:
    """run/_context: the runner sets the attempt around each call, for a user's agent code
    deeper than the request reaches (sync agents run in a thread, async ones in a task)."""
    from toolproof.run import AttemptInfo, current_attempt

    agents.SEEN.clear()
    targets = [agent(f"{AGENTS}:asks_attempt"), agent(f"{AGENTS}:asks_attempt_async")]
    options = opts(tmp_path)
    options.repeats = 2
    result = run_suite(suite, targets, options)
    assert len(result.records) == 2 * 2 * len(suite.cases)
    for record in result.records:
        kind = "async" if record.target.endswith("_async") else "sync"  # type: ignore[union-attr]
        seen = agents.SEEN[(kind, record.attempt, record.case_id)]
        assert seen == AttemptInfo(record.case_id, record.attempt, record.target)
    assert current_attempt() is None  # outside a run

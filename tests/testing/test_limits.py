"""The limiting stubs enforce their limits, and toolproof rides them without losing a record."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from toolproof.providers import ModelSettings
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.testing import BucketLimitedStub, Reply, TokenLimitedStub, WindowLimitedStub
from toolproof.types import Case, Expect, Suite, SuiteTool


def _post(stub: object, n: int) -> list[int]:
    url = stub.base_url("openai") + "/chat/completions"  # type: ignore[attr-defined]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client() as client:
        return [client.post(url, json=body).status_code for _ in range(n)]


def test_window_stub_admits_limit_per_window() -> None:
    with WindowLimitedStub(limit=3, window_s=0.5, default=Reply.say("ok")) as stub:
        codes = _post(stub, 5)
        assert codes == [200, 200, 200, 429, 429]
        time.sleep(0.55)
        assert _post(stub, 1) == [200]
        assert (stub.accepted, stub.rejected, stub.violations) == (4, 2, 0)


def test_window_stub_says_when_to_come_back() -> None:
    with WindowLimitedStub(limit=1, window_s=0.5, default=Reply.say("ok")) as stub:
        url = stub.base_url("openai") + "/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        with httpx.Client() as client:
            client.post(url, json=body)
            refused = client.post(url, json=body)
        assert refused.status_code == 429
        assert 0 < float(refused.headers["retry-after"]) <= 0.5


def test_bucket_and_token_stubs_refuse_beyond_their_budget() -> None:
    with BucketLimitedStub(per_minute=60, capacity=2, default=Reply.say("ok")) as stub:
        assert _post(stub, 3) == [200, 200, 429]
    reply = Reply.say("ok")  # reports 12 input and 7 output tokens
    with TokenLimitedStub(per_minute=40, default=reply) as stub:
        assert _post(stub, 3) == [200, 200, 429]
        assert stub.tokens_accepted == 38


def _suite(n: int) -> Suite:
    tool = SuiteTool(
        name="ping", description="Ping.", parameters={"type": "object", "properties": {}}
    )
    cases = [Case(id=f"c{i}", prompt="ping", expect=Expect(call="ping")) for i in range(n)]
    return Suite(name="limits", tools=[tool], cases=cases)


@pytest.mark.parametrize("rpm", [None, 3000.0])
def test_no_record_is_lost_against_a_rolling_window(
    rpm: float | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with WindowLimitedStub(limit=5, window_s=0.1, default=Reply.call("ping", {})) as stub:
        settings = ModelSettings(
            base_url=stub.base_url("openai"), concurrency=8, rpm=rpm, max_retries=0
        )
        result = run_suite(
            _suite(40),
            [Target(spec="openai:gpt-4.1-mini", settings=settings)],
            RunOptions(out=tmp_path / "run", cache=False, retry=RetryPolicy(base_s=0.01)),
        )
        assert stub.violations == 0
    # max_retries=0, yet 429s with a Retry-After never use it up: nothing is lost
    assert [r.outcome.value for r in result.records].count("ok") == 40

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


def _answers(stub: object, n: int, provider: str = "openai") -> list[httpx.Response]:
    path = "/messages" if provider == "anthropic" else "/chat/completions"
    url = stub.base_url(provider) + path  # type: ignore[attr-defined]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client() as client:
        return [client.post(url, json=body) for _ in range(n)]


def test_limited_stubs_state_their_limits_as_openai_does() -> None:
    with WindowLimitedStub(limit=3, window_s=60, default=Reply.say("ok")) as stub:
        answers = _answers(stub, 4)
    assert [a.headers["x-ratelimit-limit-requests"] for a in answers] == ["3"] * 4
    assert [a.headers["x-ratelimit-remaining-requests"] for a in answers] == ["2", "1", "0", "0"]
    # full again once the newest request has left the window: a minute at most
    assert answers[0].headers["x-ratelimit-reset-requests"] == "1m0s"
    assert answers[3].status_code == 429
    with TokenLimitedStub(per_minute=60, default=Reply.say("ok")) as stub:
        (answer,) = _answers(stub, 1)
    assert answer.headers["x-ratelimit-remaining-tokens"] == "41"  # 60 - 12 - 7
    assert answer.headers["x-ratelimit-reset-tokens"] == "19s"  # one token a second


def test_limited_stubs_state_their_limits_as_anthropic_does_on_its_endpoint() -> None:
    with BucketLimitedStub(per_minute=60, capacity=2, default=Reply.say("ok")) as stub:
        (answer,) = _answers(stub, 1, "anthropic")
    assert answer.headers["anthropic-ratelimit-requests-limit"] == "2"
    assert answer.headers["anthropic-ratelimit-requests-remaining"] == "1"
    assert answer.headers["anthropic-ratelimit-requests-reset"].endswith("Z")
    assert not any(name.startswith("x-ratelimit") for name in answer.headers)


def test_a_limited_stub_can_send_no_limit_headers() -> None:
    with WindowLimitedStub(limit=1, headers=False, default=Reply.say("ok")) as stub:
        answers = _answers(stub, 2)
    assert [a.status_code for a in answers] == [200, 429]
    assert not any("ratelimit" in name for a in answers for name in a.headers)


def test_whole_second_retry_after_is_rounded_up() -> None:
    with WindowLimitedStub(limit=1, window_s=0.3, whole_seconds=True) as stub:
        stub.default = Reply.say("ok")
        refused = _answers(stub, 2)[1]
    assert refused.headers["retry-after"] == "1"
    assert "retry-after-ms" not in refused.headers


@pytest.mark.parametrize("headers", [True, False])
def test_no_record_is_lost_following_the_server(
    headers: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No client limit: toolproof follows the stated limit, or learns one from the 429s."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    reply = Reply.call("ping", {})
    with WindowLimitedStub(limit=4, window_s=0.2, headers=headers, default=reply) as stub:
        settings = ModelSettings(base_url=stub.base_url("openai"), concurrency=8)
        result = run_suite(
            _suite(40),
            [Target(spec="openai:gpt-4.1-mini", settings=settings)],
            RunOptions(out=tmp_path / "run", cache=False, retry=RetryPolicy(base_s=0.01)),
        )
        assert stub.violations == 0
        assert stub.accepted == 40
    assert [r.outcome.value for r in result.records].count("ok") == 40
    assert sorted(r.case_id for r in result.records) == sorted(f"c{i}" for i in range(40))


def test_a_stated_token_limit_is_kept_without_tpm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token stub states its budget; toolproof keeps to it with no tpm set."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    reply = Reply.call("ping", {})  # 19 tokens a request
    # 20 requests' worth to start with, refilled at one request's worth each 0.05 s
    with TokenLimitedStub(per_minute=19 * 20, default=reply) as stub:
        stub.rate = 19 / 0.05
        settings = ModelSettings(base_url=stub.base_url("openai"), concurrency=4)
        result = run_suite(
            _suite(60),
            [Target(spec="openai:gpt-4.1-mini", settings=settings)],
            RunOptions(out=tmp_path / "run", cache=False, retry=RetryPolicy(base_s=0.01)),
        )
        assert stub.tokens_accepted == 60 * 19
        # the budget is known from the first answer: at most the first workers overdraw it
        assert stub.rejected <= 4
    assert [r.outcome.value for r in result.records].count("ok") == 60

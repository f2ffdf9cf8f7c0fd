"""The runner against a real HTTP adapter and the local stub server (127.0.0.1 only)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolproof.providers import ModelSettings
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.testing import Delay, RateLimit, RawReply, Reply, ServerError, StubServer, Truncated
from toolproof.types import Outcome, Suite

SECRET = "sk-test-do-not-store-4f1d2c"
ANSWER = Reply.call("lookup_order", {"order_id": "ORD-000001"})


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer(default=ANSWER) as server:
        yield server


def opts(tmp_path: Path, **kw: Any) -> RunOptions:
    o = RunOptions(
        out=tmp_path / "run",
        cache_dir=tmp_path / "cache",
        retry=RetryPolicy(base_s=0.001, cap_s=0.01),
        fsync=False,
    )
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def openai(stub: StubServer, **settings: Any) -> Target:
    values = {"base_url": stub.base_url("openai"), **settings}
    return Target("openai:gpt-4.1-mini", settings=ModelSettings.model_validate(values))


def test_concurrency_is_honoured_over_http(suite: Suite, stub: StubServer, tmp_path: Path) -> None:
    stub.latency_s = 0.05
    result = run_suite(suite, [openai(stub, concurrency=4)], opts(tmp_path, repeats=2))
    assert stub.peak_in_flight == 4
    assert stub.request_count == 12
    assert all(r.outcome is Outcome.ok for r in result.records)


def test_retry_after_is_waited_for(suite: Suite, stub: StubServer, tmp_path: Path) -> None:
    stub.add(RateLimit(retry_after="0.3"))
    started = time.monotonic()
    result = run_suite(suite, [openai(stub)], opts(tmp_path))
    assert time.monotonic() - started >= 0.3
    assert all(r.outcome is Outcome.ok for r in result.records)
    assert stub.request_count == 7
    assert result.manifest.counts["retries"] == 1


def test_infrastructure_failures_are_classified_and_recorded(
    suite: Suite, stub: StubServer, tmp_path: Path
) -> None:
    stub.add(
        ServerError(),
        ServerError(status=503),  # case-0: server_error after 1 retry
        Truncated(ANSWER),
        Truncated(ANSWER),  # case-1: network
        RateLimit(retry_after="0"),
        RateLimit(retry_after="0"),  # case-2: rate_limited
        RawReply({"error": {"message": "bad request"}}, status=400),  # case-3: rejected, no retry
        Delay(1.0, ANSWER),
        Delay(1.0, ANSWER),  # case-4: timeout
    )
    target = openai(stub, max_retries=1, timeout_s=0.2)
    result = run_suite(suite, [target], opts(tmp_path))
    outcomes = {r.case_id: r.outcome for r in result.records}
    assert outcomes == {
        "case-0": Outcome.server_error,
        "case-1": Outcome.network,
        "case-2": Outcome.rate_limited,
        "case-3": Outcome.rejected,
        "case-4": Outcome.timeout,
        "case-5": Outcome.ok,
    }
    failed = [r for r in result.records if r.outcome is not Outcome.ok]
    assert all(r.error is not None and r.response is None for r in failed)
    assert next(r for r in failed if r.case_id == "case-3").error.status == 400  # type: ignore[union-attr]
    assert result.infra_failures == 5


def test_a_cache_hit_sends_no_request(suite: Suite, stub: StubServer, tmp_path: Path) -> None:
    run_suite(suite, [openai(stub)], opts(tmp_path))
    assert stub.request_count == 6
    result = run_suite(suite, [openai(stub)], opts(tmp_path, out=tmp_path / "again"))
    assert stub.request_count == 6
    assert all(r.cached and r.outcome is Outcome.ok for r in result.records)


def test_no_key_is_ever_written(suite: Suite, stub: StubServer, tmp_path: Path) -> None:
    stub.add(ServerError(), RateLimit(retry_after="0"))
    run_suite(suite, [openai(stub, max_retries=0)], opts(tmp_path, repeats=2))
    assert any(SECRET in str(r.headers) for r in stub.requests)  # the key was really used
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "records.jsonl" for p in written)
    assert any(p.suffix == ".json" and "cache" in p.parts for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path

from __future__ import annotations

import time

from toolproof.run import Pacer, RetryPolicy


def test_retry_after_wins_over_back_off() -> None:
    policy = RetryPolicy(base_s=10, cap_s=60)
    for retry in range(5):
        delay = policy.delay(retry, 0.5)
        assert 0.5 <= delay <= 0.5 * 1.05 + 0.001


def test_back_off_grows_exponentially_with_jitter_and_a_cap() -> None:
    policy = RetryPolicy(base_s=1, cap_s=8)
    for retry, ceiling in [(0, 1), (1, 2), (2, 4), (3, 8), (6, 8)]:
        delays = [policy.delay(retry, None) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered


async def test_rpm_spaces_requests_evenly() -> None:
    pacer = Pacer(rpm=600)  # one request per 0.1 s
    started = time.monotonic()
    for _ in range(4):
        await pacer.acquire()
    assert time.monotonic() - started >= 0.3


async def test_a_pause_holds_every_request_back() -> None:
    pacer = Pacer()
    pacer.pause(0.2)
    started = time.monotonic()
    await pacer.acquire()
    assert time.monotonic() - started >= 0.2


def test_a_429_spaces_requests_at_the_rate_the_server_accepted() -> None:
    pacer = Pacer()
    assert pacer.interval == 0
    for _ in range(20):
        pacer.answered()
    time.sleep(0.2)
    pacer.rate_limited(0.0)
    assert 0 < pacer.interval <= 0.2 / 20 * 1.5
    before = pacer.interval
    pacer.answered()
    assert pacer.interval < before  # relaxes as answers come


async def test_the_token_budget_waits_when_spent() -> None:
    pacer = Pacer(tpm=6000)  # 100 tokens per second
    await pacer.acquire(6000)
    pacer.settle(6000, 6010)  # the provider reported a bit more
    started = time.monotonic()
    await pacer.acquire(5)
    assert time.monotonic() - started >= 0.1


def test_429s_with_no_answers_yet_only_pause() -> None:
    pacer = Pacer()
    for _ in range(20):
        pacer.rate_limited(0.01)
    assert pacer.interval == 0

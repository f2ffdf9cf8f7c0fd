from __future__ import annotations

import time

import pytest

from toolproof.providers._base import Allowance, RateLimits
from toolproof.run import Pacer, RetryPolicy
from toolproof.run._pacing import MARGIN


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


def test_a_stated_limit_spaces_requests_at_the_limit_over_its_reset() -> None:
    pacer = Pacer()
    pacer.observe(RateLimits(requests=Allowance(10, 0, 1.0)), accepted=True)
    assert pacer.interval == pytest.approx(MARGIN * 0.1)
    # a refused answer says nothing of the rate: a window looks fuller than it is
    pacer.observe(RateLimits(requests=Allowance(10, 0, 0.2)), accepted=False)
    assert pacer.interval == pytest.approx(MARGIN * 0.1)
    # a bucket that is full again needs no spacing
    pacer.observe(RateLimits(requests=Allowance(10, 10, 0.0)), accepted=True)
    assert pacer.interval == 0


def test_a_lone_429_while_spaced_pauses_no_one_but_two_in_a_row_do() -> None:
    pacer = Pacer()
    pacer.observe(RateLimits(requests=Allowance(10, 0, 1.0)), accepted=True)
    before = pacer.interval
    pacer.answered()
    pacer.rate_limited(1.0)
    assert pacer.paused_s == 0
    assert before < pacer.interval <= before * 1.1  # widened a little
    pacer.rate_limited(1.0)
    assert 0.5 < pacer.paused_s <= 1.0


def test_the_first_429s_pause_everyone() -> None:
    pacer = Pacer()  # not spaced yet: nothing known of the server
    pacer.rate_limited(1.0)
    assert pacer.paused_s > 0.5


async def test_the_token_estimate_is_calibrated_by_reported_usage() -> None:
    pacer = Pacer(tpm=60_000)
    charged = await pacer.acquire(200)
    assert charged == 200
    assert pacer.in_flight == 1
    pacer.settle(charged, 20, 200)
    assert pacer.in_flight == 0
    assert pacer.calibrated(200) == 20
    assert pacer.calibrated(1) == 1  # never less than one token
    assert await pacer.acquire(400) == 40


async def test_a_stated_token_limit_starts_a_budget_at_the_server_level() -> None:
    pacer = Pacer()
    assert not pacer.counts_tokens
    pacer.observe(RateLimits(tokens=Allowance(6000, 100, 59.0)), accepted=True)
    assert pacer.counts_tokens
    assert await pacer.acquire(50) == 50  # 100 left: no wait
    # the server's lower count wins over ours
    pacer.observe(RateLimits(tokens=Allowance(6000, 0, 60.0)), accepted=True)
    pacer.settle(50, 50, 50)
    assert pacer.in_flight == 0


def test_an_attempt_that_fails_gives_its_tokens_back() -> None:
    pacer = Pacer(tpm=600)
    pacer.settle(0, 0)  # a failed attempt with nothing charged changes nothing
    assert pacer.in_flight == 0
    assert pacer.calibrated(100) == 100  # failures teach the calibration nothing

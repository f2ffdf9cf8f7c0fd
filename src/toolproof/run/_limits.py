"""Client-side pacing: requests and tokens per minute, retry back-off, pauses.

One :class:`Pacer` per target. It spaces requests evenly to stay under
``rpm``, keeps a token budget for ``tpm`` (charged with an estimate before a
request and corrected with the reported usage after it), and holds every
worker of the target back while a ``Retry-After`` pause is in force.

It also adapts: when the server answers 429, the pacer measures the rate
the server has been accepting (the answers of the last second, over the time
from the first of them to the end of the pause the server asked for) and
spaces requests to match, so the workers do not all come back at once after
the pause. Each answer then shortens the spacing a little, to probe upwards.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from dataclasses import dataclass

__all__ = ["Pacer", "RetryPolicy"]

_WINDOW_S = 1.0
#: Each answer shortens the learned spacing this much: a slow probe upwards.
_RELAX = 0.999
_MIN_SPAN_S = 0.1
#: Requests are spaced this much wider than the limit, so that jitter between
#: toolproof and the server does not cross a limit right at its edge.
MARGIN = 1.02


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential back-off with jitter; a server's Retry-After wins."""

    base_s: float = 1.0
    cap_s: float = 60.0
    max_retry_after_s: float = 300.0
    max_rate_limited_s: float = 900.0
    """429s with a Retry-After are back-pressure, not failures: they do not use up
    ``max_retries``; an attempt gives up once it has waited this long on them,"""
    max_rate_limited: int = 100
    """or once it has been told to come back this many times."""

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            wait = min(retry_after, self.max_retry_after_s)
            return wait + random.uniform(0, 0.05 * wait + 0.001)
        ceiling = min(self.cap_s, self.base_s * (2**retry))
        return random.uniform(ceiling / 2, ceiling)


class Pacer:
    """Requests-per-minute, tokens-per-minute and Retry-After pauses for one target."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self._fixed = MARGIN * 60.0 / rpm if rpm else 0.0
        self._adaptive = 0.0
        self._answers: deque[float] = deque(maxlen=4096)
        self._next_slot = 0.0
        self._tpm = tpm
        self._tokens = float(tpm) if tpm else 0.0
        self._refilled = time.monotonic()
        self._paused_until = 0.0

    def pause(self, seconds: float) -> None:
        """Hold every request of this target back for ``seconds``."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    @property
    def interval(self) -> float:
        """Seconds between requests now: the configured rpm or the learned rate."""
        return max(self._fixed, self._adaptive)

    def answered(self) -> None:
        """A request got an answer: remember when, and relax the learned spacing."""
        self._answers.append(time.monotonic())
        if self._adaptive:
            self._adaptive *= _RELAX

    def rate_limited(self, pause_s: float) -> None:
        """The server said 429: pause everyone, and space requests at the rate it accepted."""
        self.pause(pause_s)
        now = time.monotonic()
        recent = [t for t in self._answers if t >= now - _WINDOW_S]
        if len(recent) >= 2:  # with no recent answers there is nothing to learn from
            # the server took len(recent) requests over the time since the first of them,
            # and wants no more until the pause is over
            span = max(now - recent[0], _MIN_SPAN_S) + pause_s
            self._adaptive = max(self._adaptive, MARGIN * span / len(recent))

    async def acquire(self, estimated_tokens: int = 0) -> None:
        """Wait until a request may be sent."""
        await self._wait_pause()
        interval = self.interval
        if interval:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + interval
            if slot > now:
                await asyncio.sleep(slot - now)
        if self._tpm:
            await self._take_tokens(estimated_tokens)
        await self._wait_pause()

    async def _wait_pause(self) -> None:
        while (left := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(left)

    def _refill(self) -> None:
        assert self._tpm
        now = time.monotonic()
        self._tokens = min(self._tpm, self._tokens + (now - self._refilled) * self._tpm / 60.0)
        self._refilled = now

    async def _take_tokens(self, estimate: int) -> None:
        assert self._tpm
        self._refill()
        while self._tokens < 0 or (estimate and self._tokens < min(estimate, self._tpm)):
            need = max(-self._tokens, min(estimate, self._tpm) - self._tokens)
            await asyncio.sleep(max(need * 60.0 / self._tpm, 0.001))
            self._refill()
        self._tokens -= estimate

    def settle(self, estimated_tokens: int, used_tokens: int | None) -> None:
        """Correct the token budget with what the provider reported."""
        if self._tpm and used_tokens is not None:
            self._tokens += estimated_tokens - used_tokens

"""Client-side pacing: requests and tokens per minute, retry back-off, pauses.

One :class:`Pacer` per target. It spaces requests evenly to stay under
``rpm``, keeps a token budget for ``tpm`` (charged with an estimate before a
request and corrected with the reported usage after it), and holds every
worker of the target back while a ``Retry-After`` pause is in force.

With no limit configured it follows the server, in one of two ways:

- A server that states its limits in its answers (``x-ratelimit-*``,
  ``anthropic-ratelimit-*``) is believed. Requests are spaced at the limit
  over the time until it is full again, as the last accepted answer said:
  for a rolling window that is its rate exactly (the newest request has just
  entered it), for a small request bucket it is fast while the bucket is full
  and comes down to the refill rate as it empties. A stated token limit is
  kept as a token budget, like a configured ``tpm``: the limit as its size,
  the used part over the time to full as its refill rate, and the server's
  remaining count as its level.
- A server that only answers 429 is measured: the pacer takes the rate the
  server has been accepting (the answers of the last second, over the time
  from the first of them to the end of the pause the server asked for) and
  spaces requests to match, so the workers do not all come back at once after
  the pause. Each answer then shortens the spacing a little, to probe upwards.

A 429 pauses every worker of the target for its Retry-After, except a lone
one while requests are already spaced (the answer before it was accepted):
that is jitter at the edge of the limit, or a probe upwards that went too far.
Then only the refused request waits (a whole-second Retry-After would idle
the server for most of a second otherwise), and the spacing widens a little,
to narrow back slowly as answers are accepted.

The token estimate made before a request is calibrated with the usage the
provider reports, so that it reserves about what a request really costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections import deque
from dataclasses import dataclass

from toolproof.providers._base import RateLimits

__all__ = ["Pacer", "RetryPolicy"]

_WINDOW_S = 1.0
#: Each answer shortens the learned spacing this much: a slow probe upwards.
_RELAX = 0.99
#: A lone 429 while spaced widens the spacing this much (the learned one, and
#: up to _MAX_WIDEN the one the server stated).
_WIDEN = 1.05
_MAX_WIDEN = 1.10
#: Each accepted answer takes back this much of the widening of a stated spacing.
_NARROW = 0.998
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
        self._configured_tpm = bool(tpm)
        #: the token budget: its size, its refill per second and its level (0: none)
        self._capacity = float(tpm) if tpm else 0.0
        self._per_s = tpm / 60.0 if tpm else 0.0
        self._tokens = self._capacity
        self._refilled = time.monotonic()
        self._paused_until = 0.0
        self._in_flight = 0
        self._charged_in_flight = 0
        self._told = 0.0  # the spacing the server's request headers imply, 0 when none
        self._widened = 1.0  # how much lone 429s have widened the stated spacing
        self._refused_last = False  # whether the last answer was a 429
        self._estimated = 0  # token estimates and the usage reported for them
        self._used = 0
        self._returned: asyncio.Event | None = None

    def pause(self, seconds: float) -> None:
        """Hold every request of this target back for ``seconds``."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    @property
    def paused_s(self) -> float:
        """Seconds the pause in force still holds every request back (0 when none)."""
        return max(0.0, self._paused_until - time.monotonic())

    @property
    def in_flight(self) -> int:
        """Requests sent and not yet settled."""
        return self._in_flight

    @property
    def counts_tokens(self) -> bool:
        """Whether requests are charged against a token budget (configured or stated)."""
        return bool(self._per_s)

    @property
    def interval(self) -> float:
        """Seconds between requests now: the configured rpm, the stated or the learned rate."""
        return max(self._fixed, self._adaptive, self._told * self._widened)

    def observe(self, limits: RateLimits | None, *, accepted: bool) -> None:
        """Note what an answer's rate-limit headers said.

        Only accepted answers count: on a refused request a rolling window
        looks fuller than it is.
        """
        if limits is None or not accepted:
            return
        requests, tokens = limits.requests, limits.tokens
        if requests is not None and requests.limit > 0:
            self._told = MARGIN * requests.reset_s / requests.limit
        if tokens is not None and tokens.limit > 0:
            if self._per_s:
                self._refill()
            level = tokens.remaining - self._charged_in_flight
            if not self._configured_tpm:
                rate = tokens.rate
                if rate is not None:
                    if not self._per_s:  # a budget starts where the server says it is
                        self._tokens = level
                        self._refilled = time.monotonic()
                    self._capacity = tokens.limit
                    self._per_s = max(self._per_s, rate / MARGIN)
            if self._per_s:  # the server's count wins over an optimistic one of ours
                self._tokens = min(self._tokens, level)

    def answered(self) -> None:
        """A request got an answer: remember when, and relax the learned spacing."""
        self._answers.append(time.monotonic())
        self._refused_last = False
        if self._adaptive:
            self._adaptive *= _RELAX
        if self._widened > 1.0:  # jitter that has passed: narrow back, slowly
            self._widened = max(1.0, self._widened * _NARROW)

    def rate_limited(self, pause_s: float) -> None:
        """The server said 429: pause everyone and, unless it states its rate, learn one.

        A lone 429 while requests are spaced only widens the spacing a little.
        """
        lone = not self._refused_last and bool(self._fixed or self._told or self._adaptive)
        self._refused_last = True
        if lone:
            if self._told:
                self._widened = min(self._widened * 1.02, _MAX_WIDEN)
            else:
                self._adaptive *= _WIDEN
            return
        self.pause(pause_s)
        if self._told or (self._per_s and not self._configured_tpm):
            return  # a server that states its rate is believed
        now = time.monotonic()
        recent = [t for t in self._answers if t >= now - _WINDOW_S]
        if len(recent) >= 2:  # with no recent answers there is nothing to learn from
            # the server took len(recent) requests over the time since the first of them,
            # and wants no more until the pause is over
            span = max(now - recent[0], _MIN_SPAN_S) + pause_s
            self._adaptive = max(self._adaptive, MARGIN * span / len(recent))

    async def acquire(self, estimated_tokens: int = 0) -> int:
        """Wait until a request may be sent; return the tokens charged for it.

        Pass the returned charge to :meth:`settle` once the request is over.
        """
        while True:
            await self._wait_pause()
            interval = self.interval
            if interval:
                now = time.monotonic()
                slot = max(now, self._next_slot)
                self._next_slot = slot + interval
                if slot > now:
                    await asyncio.sleep(slot - now)
            # a pause that began meanwhile: queue again behind it, spaced, rather
            # than go out together with everyone else who waited for it
            if self._paused_until <= time.monotonic():
                break
        charge = 0
        if self._per_s:
            charge = self.calibrated(estimated_tokens)
            await self._take_tokens(charge)
        await self._wait_pause()
        self._in_flight += 1
        self._charged_in_flight += charge
        return charge

    def calibrated(self, estimate: int) -> int:
        """The estimate scaled by the usage reported so far for earlier estimates."""
        if not estimate or not self._estimated or not self._used:
            return estimate
        return max(1, math.ceil(estimate * self._used / self._estimated))

    async def _wait_pause(self) -> None:
        while (left := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(left)

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(self._capacity, self._tokens + (now - self._refilled) * self._per_s)
        self._refilled = now

    async def _take_tokens(self, charge: int) -> None:
        self._refill()
        need_level = min(charge, self._capacity)
        while self._tokens < 0 or (charge and self._tokens < need_level):
            need = max(-self._tokens, need_level - self._tokens)
            if self._returned is None:
                self._returned = asyncio.Event()
            returned = self._returned
            # wake when the budget has refilled, or sooner when a request gives tokens back
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(returned.wait(), max(need / self._per_s, 0.001))
            self._refill()
        self._tokens -= charge

    def settle(
        self, charged_tokens: int, used_tokens: int | None, estimated_tokens: int | None = None
    ) -> None:
        """A request is over: correct the token budget with what the provider reported.

        ``estimated_tokens`` (the estimate before calibration) teaches the calibration.
        """
        self._in_flight = max(0, self._in_flight - 1)
        self._charged_in_flight = max(0, self._charged_in_flight - charged_tokens)
        if used_tokens is not None and estimated_tokens:
            self._estimated += estimated_tokens
            self._used += used_tokens
        if self._per_s and used_tokens is not None:
            self._tokens += charged_tokens - used_tokens
            if charged_tokens > used_tokens and self._returned is not None:
                self._returned.set()  # waiters look at the budget again
                self._returned = None

"""Stub servers that enforce rate limits the way providers do: 429 with Retry-After.

Three limiters, each counted at the moment the server decides on a request:

- :class:`WindowLimitedStub`: at most ``limit`` requests in any rolling window
  of ``window_s`` seconds. A refused request counts for nothing; its
  Retry-After is the time until the oldest accepted request leaves the window.
- :class:`BucketLimitedStub`: a token bucket of ``capacity`` requests refilled
  at ``per_minute`` requests a minute (a provider's "requests per minute").
- :class:`TokenLimitedStub`: a bucket of ``per_minute`` tokens refilled
  continuously; each request costs the tokens its reply reports as used
  (input plus output), as providers count them.

Each keeps ``accepted``, ``rejected`` and ``violations`` (always 0 for a
correct limiter: a test can check the limiter itself).

Like the providers, each states its limit on every answer, accepted or
refused: ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` with the
reset as a duration (``850ms``, ``1.2s``, ``6m0s``), or on the Anthropic
endpoint ``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}``
with the reset as an RFC 3339 time. The reset is when the limit is full
again. ``headers=False`` sends none (a server that only answers 429);
``whole_seconds=True`` rounds Retry-After up to whole seconds, as HTTP's
delay-seconds are, and as many servers send it.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from toolproof.testing._script import RateLimit, Step
from toolproof.testing._stub import StubServer

__all__ = ["BucketLimitedStub", "TokenLimitedStub", "WindowLimitedStub"]


def _retry_after(seconds: float, whole_seconds: bool) -> RateLimit:
    seconds = max(seconds, 0.001)
    if whole_seconds:  # as HTTP says: delay-seconds is an integer
        return RateLimit(retry_after=str(math.ceil(seconds)))
    return RateLimit(retry_after=f"{seconds:.3f}", retry_after_ms=str(math.ceil(seconds * 1000)))


def duration(seconds: float) -> str:
    """A duration as OpenAI writes its resets: ``20ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1.0:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60.0)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


def _limit_headers(
    fmt: str, kind: str, limit: float, remaining: float, reset_s: float
) -> dict[str, str]:
    left = str(max(0, math.floor(remaining)))
    if fmt == "anthropic":
        when = datetime.now(UTC) + timedelta(seconds=reset_s)
        prefix = f"anthropic-ratelimit-{kind}-"
        return {
            prefix + "limit": str(math.floor(limit)),
            prefix + "remaining": left,
            prefix + "reset": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
    return {
        f"x-ratelimit-limit-{kind}": str(math.floor(limit)),
        f"x-ratelimit-remaining-{kind}": left,
        f"x-ratelimit-reset-{kind}": duration(max(reset_s, 0.0)),
    }


class _Limited(StubServer):
    def __init__(self, *, whole_seconds: bool = False, headers: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.whole_seconds = whole_seconds
        self.headers = headers
        self.accepted = 0
        self.rejected = 0
        self._lock = threading.RLock()

    def reset_counters(self) -> None:
        super().reset_counters()
        self.accepted = self.rejected = 0

    def _decide(self, fmt: str) -> tuple[Step | None, dict[str, str]]:
        with self._lock:
            now = time.monotonic()
            wait = self._admit(now)
            headers = self._state(now, fmt) if self.headers else {}
            if wait is not None:
                self.rejected += 1
                return _retry_after(wait, self.whole_seconds), headers
            self.accepted += 1
            return self._next_step(), headers

    def _admit(self, now: float) -> float | None:
        """None to accept the request, else the seconds until it could be."""
        raise NotImplementedError

    def _state(self, now: float, fmt: str) -> dict[str, str]:
        """The rate-limit headers after this decision."""
        raise NotImplementedError


class WindowLimitedStub(_Limited):
    """At most ``limit`` requests in any rolling window of ``window_s`` seconds."""

    def __init__(self, *, limit: int = 10, window_s: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = limit
        self.window_s = window_s
        self._times: collections.deque[float] = collections.deque()
        self.violations = 0

    def _admit(self, now: float) -> float | None:
        while self._times and self._times[0] <= now - self.window_s:
            self._times.popleft()
        if len(self._times) >= self.limit:
            return self._times[0] + self.window_s - now
        self._times.append(now)
        if len(self._times) > self.limit:  # pragma: no cover - a broken limiter
            self.violations += 1
        return None

    def _state(self, now: float, fmt: str) -> dict[str, str]:
        # full again once the newest request in the window has left it
        reset = self._times[-1] + self.window_s - now if self._times else 0.0
        return _limit_headers(fmt, "requests", self.limit, self.limit - len(self._times), reset)


class BucketLimitedStub(_Limited):
    """A token bucket of ``capacity`` requests, refilled at ``per_minute`` a minute."""

    def __init__(self, *, per_minute: float = 600, capacity: float | None = None, **kw: Any):
        super().__init__(**kw)
        self.rate = per_minute / 60.0
        self.capacity = capacity if capacity is not None else max(1.0, self.rate)
        self._tokens = self.capacity
        self._stamp = time.monotonic()

    def _admit(self, now: float) -> float | None:
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        return (1.0 - self._tokens) / self.rate

    def _state(self, now: float, fmt: str) -> dict[str, str]:
        reset = (self.capacity - self._tokens) / self.rate
        return _limit_headers(fmt, "requests", self.capacity, self._tokens, reset)


class TokenLimitedStub(_Limited):
    """A bucket of ``per_minute`` tokens; a request costs its prompt and reply tokens."""

    def __init__(self, *, per_minute: float = 60_000, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = per_minute / 60.0
        self.capacity = per_minute
        self._tokens = float(per_minute)
        self._stamp = time.monotonic()
        self.cost_of_next = 0
        self.tokens_accepted = 0

    def _admit(self, now: float) -> float | None:
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        cost = self.cost_of_next
        if self._tokens >= cost:
            self._tokens -= cost
            self.tokens_accepted += cost
            return None
        return (cost - self._tokens) / self.rate

    def _state(self, now: float, fmt: str) -> dict[str, str]:
        reset = (self.capacity - self._tokens) / self.rate
        return _limit_headers(fmt, "tokens", self.capacity, self._tokens, reset)

    def _decide(self, fmt: str) -> tuple[Step | None, dict[str, str]]:
        with self._lock:
            step = self.script[0] if self.script else self.default
            used = (getattr(step, "input_tokens", 0) or 0) + (
                getattr(step, "output_tokens", 0) or 0
            )
            self.cost_of_next = used
            return super()._decide(fmt)

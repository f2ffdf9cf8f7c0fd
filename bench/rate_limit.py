"""Rate limits: a stub that answers 429 + Retry-After above R requests/second.

Runs N requests twice: once with the client told the limit (``rpm``), once
with no client-side limit, relying on 429 and Retry-After alone. Prints the
records lost (attempts that ended without an answer), the 429s the stub sent,
and wall / (N/R), the ratio to the fastest time the limit allows.

    python bench/rate_limit.py [--requests 300] [--rate 50] [--concurrency 8]

Target: 0 lost at <= 1.10x.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from overhead import StubProcess, bench_suite, openai_target

from toolproof.run import RunOptions, run_suite
from toolproof.testing import RateLimit, StubServer
from toolproof.testing._script import Step


class RateLimitedStub(StubServer):
    """Answers normally while under ``rate`` requests/s, else 429 + Retry-After.

    A token bucket refilled at ``rate`` per second, holding at most ``burst``
    tokens (5 by default: 100 ms worth at 50/s). A refused request takes no
    token; Retry-After says when the next token comes.
    """

    def __init__(self, *, rate: float = 50.0, burst: float = 5.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = rate
        self.burst = burst
        self._tokens = burst
        self._stamp = time.monotonic()
        self._lock = threading.Lock()
        self.rejected = 0

    def _next_step(self) -> Step | None:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return super()._next_step()
            wait = (1.0 - self._tokens) / self.rate
            self.rejected += 1
        return RateLimit(retry_after=f"{wait:.3f}")

    def reset_counters(self) -> None:
        super().reset_counters()
        self.rejected = 0


def run_once(
    base_url: str, requests: int, concurrency: int, rpm: float | None
) -> tuple[float, int, int]:
    suite = bench_suite(requests)
    settings: dict[str, Any] = {"concurrency": concurrency}
    if rpm is not None:
        settings["rpm"] = rpm
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = run_suite(
            suite,
            [openai_target(base_url, **settings)],
            RunOptions(out=Path(tmp) / "r", cache=False),
        )
        wall = time.perf_counter() - started
    lost = sum(r.outcome.value != "ok" for r in result.records)
    return wall, lost, result.manifest.counts.get("retries", 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0, help="the stub's limit, requests/s")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    ideal = args.requests / args.rate
    print(f"N={args.requests} requests, stub limit R={args.rate:g}/s, N/R={ideal:.2f} s")
    for label, rpm in (("client rpm = R", args.rate * 60), ("no client limit", None)):
        with StubProcess(0.0, RateLimitedStub, rate=args.rate) as stub:
            wall, lost, retries = run_once(stub.base_url, args.requests, args.concurrency, rpm)
            seen = stub.report()
        print(
            f"{label:16s} lost {lost}  retries {retries}  stub requests {seen['requests']}  "
            f"wall {wall:.2f} s  wall/(N/R) {wall / ideal:.3f}x   (target 0 lost, <= 1.10x)"
        )


if __name__ == "__main__":
    main()

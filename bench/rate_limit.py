"""Rate limits: toolproof against stubs that answer 429 + Retry-After beyond a limit.

Scenarios (each: records lost, 429s drawn, wall time against the bound):

1. a rolling window: at most R requests in any 1-second window, N requests at
   concurrency C; bound N/R; once with ``rpm`` set to the true limit, once with
   no client limit (toolproof follows the server's rate-limit headers), once
   with no client limit from a server that sends no such headers (toolproof
   learns from the 429s and their Retry-After);
2. the same with whole-second Retry-After headers, as many servers send;
3. a per-minute token bucket (a provider's "requests per minute");
4. a tokens-per-minute limit, with ``tpm`` set to it, and with no client limit.

The stubs state their limits the way OpenAI does (``x-ratelimit-*``) unless
the label says "no headers". Each line also gives the load average, as the
machine may be shared.

    python bench/rate_limit.py [--requests 200] [--rate 10] [--concurrency 16] [--only TEXT]

Targets: 0 lost, wall <= 1.10x the bound.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from overhead import StubProcess, bench_suite, openai_target

from toolproof.run import RunOptions, run_suite
from toolproof.testing import BucketLimitedStub, TokenLimitedStub, WindowLimitedStub


def run_once(base_url: str, requests: int, concurrency: int, **limits: Any) -> tuple[float, int]:
    suite = bench_suite(requests)
    settings: dict[str, Any] = {"concurrency": concurrency, **limits}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = run_suite(
            suite,
            [openai_target(base_url, **settings)],
            RunOptions(out=Path(tmp) / "r", cache=False),
        )
        wall = time.perf_counter() - started
    lost = sum(r.outcome.value != "ok" for r in result.records)
    return wall, lost


def scenario(label: str, server: Any, bound: float, args: argparse.Namespace, **kw: Any) -> None:
    limits = kw.pop("limits", {})
    with StubProcess(args.latency, server, **kw) as stub:
        wall, lost = run_once(stub.base_url, args.requests, args.concurrency, **limits)
        seen = stub.report()
    print(
        f"{label:52s} lost {lost}  429s {seen.get('rejected', 0):4d}  wall {wall:6.2f} s  "
        f"bound {bound:6.2f} s  ratio {wall / bound:.3f}x  load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rate", type=float, default=10.0, help="the limit, requests/s")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1, help="the stub's latency, s")
    parser.add_argument("--only", default="", help="run only scenarios whose label has this")
    args = parser.parse_args()
    n, r = args.requests, args.rate
    bound = n / r
    print(
        f"N={n} requests, limit R={r:g}/s, concurrency {args.concurrency}, "
        f"latency {args.latency:g} s, N/R={bound:.2f} s"
    )
    window = {"limit": int(r), "window_s": 1.0}
    per_minute = r * 60
    capacity = r  # a bucket that starts full lets this many through at once
    tokens = 12 + 7  # what each stub reply reports as used (input + output)
    # a tokens-per-minute bucket starts full: size it so the run needs N/R seconds beyond that
    tpm = n * tokens * 60 / (bound + 60)
    bare = {"headers": False}
    whole = {"whole_seconds": True}
    runs: list[tuple[str, Any, float, dict[str, Any]]] = [
        (
            "rolling window, rpm = R",
            WindowLimitedStub,
            bound,
            {"limits": {"rpm": per_minute}, **window},
        ),
        ("rolling window, no client limit", WindowLimitedStub, bound, dict(window)),
        (
            "rolling window, no client limit, no headers",
            WindowLimitedStub,
            bound,
            {**window, **bare},
        ),
        ("rolling window, whole-second Retry-After", WindowLimitedStub, bound, {**window, **whole}),
        (
            "rolling window, whole-second Retry-After, no headers",
            WindowLimitedStub,
            bound,
            {**window, **whole, **bare},
        ),
        (
            "per-minute bucket, rpm = R",
            BucketLimitedStub,
            (n - capacity) / r,
            {"per_minute": per_minute, "capacity": capacity, "limits": {"rpm": per_minute}},
        ),
        (
            "per-minute bucket, no client limit",
            BucketLimitedStub,
            (n - capacity) / r,
            {"per_minute": per_minute, "capacity": capacity},
        ),
        (
            "tokens per minute, tpm = limit",
            TokenLimitedStub,
            (n * tokens - tpm) / (tpm / 60),
            {"per_minute": tpm, "limits": {"tpm": tpm}},
        ),
        (
            "tokens per minute, no client limit",
            TokenLimitedStub,
            (n * tokens - tpm) / (tpm / 60),
            {"per_minute": tpm},
        ),
    ]
    for label, server, scenario_bound, kw in runs:
        if args.only in label:
            scenario(label, server, scenario_bound, args, **kw)


if __name__ == "__main__":
    main()

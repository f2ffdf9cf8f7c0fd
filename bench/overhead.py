"""Harness overhead: 2,000 requests with 3 tools each against a 100 ms stub, concurrency 64.

The OpenAI-compatible stub runs in its own process, so its CPU is not
counted. Prints the wall time, the ideal N·L/C, their ratio, the runner's
CPU time per request (the whole client process: adapter, transport, runner,
records writer) and the peak number of requests the stub saw in flight.

    python bench/overhead.py [--requests 2000] [--latency 0.1] [--concurrency 64]

Targets: wall ≤ 1.25 × ideal, CPU ≤ 0.5 ms per request.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from toolproof.providers import ModelSettings
from toolproof.run import RunOptions, Target, run_suite
from toolproof.testing import Reply, StubServer
from toolproof.types import Case, Expect, Suite, SuiteTool

ANSWER = Reply.call("lookup_order", {"order_id": "ORD-104821"})
DUMMY_KEY = "sk-bench-not-a-real-key"


def _serve(conn: Connection, latency_s: float, server_class: Any, kwargs: dict[str, Any]) -> None:
    server = server_class(default=ANSWER, latency_s=latency_s, **kwargs)
    server.start_in_thread()
    conn.send(server.base_url("openai"))
    while conn.recv() == "report":
        conn.send(
            {
                "requests": server.request_count,
                "peak_in_flight": server.peak_in_flight,
                "rejected": getattr(server, "rejected", 0),
            }
        )
    server.stop_thread()


class StubProcess:
    """A stub server in a child process: its CPU is not the harness's."""

    def __init__(
        self, latency_s: float = 0.0, server_class: Any = StubServer, **kwargs: Any
    ) -> None:
        self._conn, child = mp.Pipe()
        ctx = mp.get_context("spawn")
        self._proc = ctx.Process(
            target=_serve, args=(child, latency_s, server_class, kwargs), daemon=True
        )

    def __enter__(self) -> StubProcess:
        self._proc.start()
        self.base_url: str = self._conn.recv()
        return self

    def report(self) -> dict[str, int]:
        self._conn.send("report")
        stats: dict[str, int] = self._conn.recv()
        return stats

    def __exit__(self, *exc: object) -> None:
        self._conn.send("stop")
        self._proc.join(10)


def bench_suite(cases: int, tools: int = 3) -> Suite:
    """A suite of ``cases`` single-turn cases, each offered ``tools`` tools."""
    names = ["lookup_order", "search_orders", "cancel_order", "refund_order", "get_customer"]
    offered = [
        SuiteTool(
            name=names[i % len(names)] + (f"_{i}" if i >= len(names) else ""),
            description=f"Tool number {i}: does one thing to an order.",
            parameters={
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
                    "reason": {"type": "string", "enum": ["duplicate", "damaged", "other"]},
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        )
        for i in range(tools)
    ]
    return Suite(
        name="bench",
        system="You are a support assistant. Use the tools.",
        tools=offered,
        cases=[
            Case(
                id=f"case-{i:05d}",
                prompt=f"Where is order ORD-{i:06d}?",
                expect=Expect(call="lookup_order", args={"order_id": f"ORD-{i:06d}"}),
            )
            for i in range(cases)
        ],
    )


def openai_target(base_url: str, **settings: Any) -> Target:
    os.environ.setdefault("OPENAI_API_KEY", DUMMY_KEY)
    values = {"base_url": base_url, **settings}
    return Target("openai:gpt-4.1-mini", settings=ModelSettings.model_validate(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--tools", type=int, default=3)
    args = parser.parse_args()

    suite = bench_suite(args.requests, args.tools)
    with StubProcess(args.latency) as stub, tempfile.TemporaryDirectory() as tmp:
        target = openai_target(stub.base_url, concurrency=args.concurrency)
        opts = RunOptions(out=Path(tmp) / "run", cache=False)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = run_suite(suite, [target], opts)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        seen = stub.report()

    ideal = args.requests * args.latency / args.concurrency
    ok = sum(r.outcome.value == "ok" for r in result.records)
    print(f"requests            {args.requests} ({ok} ok), {args.tools} tools each")
    print(f"latency, concurrency {args.latency * 1000:.0f} ms, {args.concurrency}")
    print(f"wall time           {wall:.3f} s")
    print(f"ideal N*L/C         {ideal:.3f} s")
    ratio = f"{wall / ideal:.3f}x" if ideal else "n/a"
    print(f"ratio               {ratio}   (target <= 1.25)")
    print(f"harness CPU/request {cpu / args.requests * 1000:.3f} ms   (target <= 0.5)")
    print(f"stub peak in-flight {seen['peak_in_flight']}   (stub saw {seen['requests']} requests)")
    print(f"python              {sys.version.split()[0]}")


if __name__ == "__main__":
    main()

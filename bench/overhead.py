"""Harness overhead: 2,000 requests with 3 tools each against a 100 ms stub, concurrency 64.

The OpenAI-compatible stub runs in its own process, so its CPU is not
counted. Prints, against the ideal N·L/C:

- the raw-HTTP floor: the same requests with bare httpx and bare aiohttp at the
  same concurrency (what any client in this Python pays);
- ``run_suite`` in-process: the wall time, the runner's CPU time per request
  (adapter, transport, runner, records writer) and the peak number of requests
  the stub saw in flight;
- the whole ``toolproof run`` command as a user types it (``--whole``, the
  default): a fresh process with start-up, suite loading, the run, scoring and
  the report, timed from outside; and its three phases, from the times the stub
  saw its first request and sent its last answer: start to first request, the
  requests, last answer to exit.

    python bench/overhead.py [--requests 2000] [--latency 0.1] [--concurrency 64]
                             [--only floor,inproc,whole] [--clients httpx,aiohttp]
                             [--repeat 3] [--profile FILE]

``--repeat N`` measures each part N times, back to back, and prints every
figure with the load average before it, then the median.
``--profile FILE`` runs the whole command under cProfile and writes the stats.

Targets: whole command ≤ 1.25 × ideal; in-process CPU ≤ 0.5 ms per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import subprocess
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


class TimedStub(StubServer):
    """The stub, noting (wall clock) when it saw its first request and sent its last answer
    since the last report."""

    first_request_at = 0.0
    last_answer_at = 0.0

    async def _handle(self, request: Any) -> Any:
        if not self.first_request_at:
            self.first_request_at = time.time()
        try:
            return await super()._handle(request)
        finally:
            self.last_answer_at = time.time()


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
                "first_request_at": getattr(server, "first_request_at", 0.0),
                "last_answer_at": getattr(server, "last_answer_at", 0.0),
            }
        )
        if isinstance(server, TimedStub):
            server.first_request_at = server.last_answer_at = 0.0
    server.stop_thread()


class StubProcess:
    """A stub server in a child process: its CPU is not the harness's."""

    def __init__(
        self, latency_s: float = 0.0, server_class: Any = TimedStub, **kwargs: Any
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

    def report(self) -> dict[str, Any]:
        """What the stub saw; the first request's and last answer's times start afresh."""
        self._conn.send("report")
        stats: dict[str, Any] = self._conn.recv()
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


def suite_file(suite: Suite, path: Path) -> Path:
    """The suite as a file, as a user keeps it (JSON is YAML)."""
    data = {
        "format": 1,
        "suite": suite.name,
        "system": suite.system,
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in suite.tools
        ],
        "cases": [
            {
                "id": c.id,
                "prompt": c.prompt,
                "expect": {"call": c.expect.call, "args": c.expect.args},
            }
            for c in suite.cases
        ],
    }
    path.write_text(json.dumps(data, indent=1))
    return path


def raw_floor(base_url: str, suite: Suite, concurrency: int, client: str) -> float:
    """Seconds for the same requests sent with a bare HTTP client at ``concurrency``."""
    url = base_url + "/chat/completions"
    tools = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in suite.tools
    ]
    bodies = [
        json.dumps(
            {
                "model": "gpt-4.1-mini",
                "messages": [
                    {"role": "system", "content": suite.system},
                    {"role": "user", "content": c.prompt},
                ],
                "tools": tools,
            }
        ).encode()
        for c in suite.cases
    ]
    headers = {"content-type": "application/json", "authorization": f"Bearer {DUMMY_KEY}"}

    async def go() -> float:
        queue = iter(bodies)
        started = time.perf_counter()
        if client == "httpx":
            import httpx

            limits = httpx.Limits(max_connections=concurrency)
            async with httpx.AsyncClient(limits=limits, timeout=60) as http:

                async def worker() -> None:
                    for body in queue:
                        response = await http.post(url, content=body, headers=headers)
                        json.loads(response.content)

                await asyncio.gather(*(worker() for _ in range(concurrency)))
        else:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=concurrency)
            async with aiohttp.ClientSession(connector=connector) as session:

                async def worker() -> None:
                    for body in queue:
                        async with session.post(url, data=body, headers=headers) as response:
                            json.loads(await response.read())

                await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started

    return asyncio.run(go())


def whole_command(
    base_url: str, suite: Suite, concurrency: int, tmp: Path, profile: str | None, n: int = 0
) -> tuple[float, int, float, float]:
    """Seconds for ``toolproof run`` as a user types it, in a fresh process; its exit code;
    the wall-clock times it started and ended."""
    path = suite_file(suite, tmp / "suite.yaml")
    config = tmp / "toolproof.yaml"
    config.write_text(json.dumps({"models": {"openai:gpt-4.1-mini": {"base_url": base_url}}}))
    prefix = [sys.executable]
    if profile:
        prefix += ["-m", "cProfile", "-o", profile]
    argv = [
        *prefix,
        "-m",
        "toolproof",
        "run",
        str(path),
        "--model",
        "openai:gpt-4.1-mini",
        "--config",
        str(config),
        "--concurrency",
        str(concurrency),
        "--no-cache",
        "--quiet",
        "--out",
        str(tmp / f"run-{n}"),
    ]
    env = {**os.environ, "OPENAI_API_KEY": DUMMY_KEY}
    started_at = time.time()
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=tmp, capture_output=True, text=True)
    wall = time.perf_counter() - started
    ended_at = time.time()
    if done.returncode not in (0, 1):  # 1: some cases failed their checks
        sys.exit(f"toolproof run exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, done.returncode, started_at, ended_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--tools", type=int, default=3)
    parser.add_argument("--only", default="floor,inproc,whole")
    parser.add_argument("--profile", default=None, help="cProfile the whole command into FILE")
    parser.add_argument("--repeat", type=int, default=1, help="measure each part N times")
    parser.add_argument("--clients", default="httpx,aiohttp", help="raw clients for the floor")
    args = parser.parse_args()
    only = set(args.only.split(","))

    suite = bench_suite(args.requests, args.tools)
    ideal = args.requests * args.latency / args.concurrency
    print(f"requests            {args.requests}, {args.tools} tools each")
    print(f"latency, concurrency {args.latency * 1000:.0f} ms, {args.concurrency}")
    print(f"ideal N*L/C         {ideal:.3f} s")
    print(f"python              {sys.version.split()[0]}")

    def ratio(wall: float) -> str:
        return f"{wall / ideal:.3f}x" if ideal else "n/a"

    def load() -> str:
        return f"load {os.getloadavg()[0]:.1f}"

    def median(name: str, walls: list[float]) -> None:
        if len(walls) > 1:
            mid = statistics.median(walls)
            print(f"{name:20s} {mid:.3f} s  {ratio(mid)}   (median of {len(walls)})")

    with StubProcess(args.latency) as stub, tempfile.TemporaryDirectory() as tmp:
        if "floor" in only:
            for client in args.clients.split(","):
                walls = []
                for _ in range(args.repeat):
                    before = load()
                    wall = raw_floor(stub.base_url, suite, args.concurrency, client)
                    walls.append(wall)
                    print(f"raw floor, {client:8s} {wall:.3f} s  {ratio(wall)}   ({before})")
                median(f"raw floor, {client}", walls)
        if "inproc" in only:
            target = openai_target(stub.base_url, concurrency=args.concurrency)
            walls = []
            for n in range(args.repeat):
                opts = RunOptions(out=Path(tmp) / f"inproc-{n}", cache=False)
                before = load()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                result = run_suite(suite, [target], opts)
                wall = time.perf_counter() - wall0
                cpu = time.process_time() - cpu0
                walls.append(wall)
                ok = sum(r.outcome.value == "ok" for r in result.records)
                print(f"run_suite in-process {wall:.3f} s  {ratio(wall)}   ({ok} ok; {before})")
                print(
                    f"  harness CPU/request {cpu / args.requests * 1000:.3f} ms   (target <= 0.5)"
                )
            median("run_suite in-process", walls)
        if "whole" in only:
            walls = []
            phases: list[tuple[float, float, float]] = []
            for n in range(args.repeat):
                stub.report()
                before = load()
                wall, code, started_at, ended_at = whole_command(
                    stub.base_url, suite, args.concurrency, Path(tmp), args.profile, n
                )
                seen = stub.report()
                walls.append(wall)
                print(
                    f"toolproof run, whole {wall:.3f} s  {ratio(wall)}   "
                    f"(exit {code}; {before}; target <= 1.25)"
                )
                first, last = seen["first_request_at"], seen["last_answer_at"]
                if first and last:
                    phase = (first - started_at, last - first, ended_at - last)
                    phases.append(phase)
                    print(
                        f"  phases: start to first request {phase[0]:.3f} s; requests "
                        f"{phase[1]:.3f} s ({ratio(phase[1])}); last answer to exit {phase[2]:.3f} s"
                    )
            median("toolproof run, whole", walls)
            if len(phases) > 1:
                mids = [statistics.median(p[i] for p in phases) for i in range(3)]
                print(
                    f"  phases (medians): start to first request {mids[0]:.3f} s; requests "
                    f"{mids[1]:.3f} s ({ratio(mids[1])}); last answer to exit {mids[2]:.3f} s"
                )
        seen = stub.report()
    print(f"stub peak in-flight {seen['peak_in_flight']}   (stub saw {seen['requests']} requests)")
    print(f"load after          {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

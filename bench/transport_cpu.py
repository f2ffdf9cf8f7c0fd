"""Client CPU time per request: httpx vs aiohttp vs toolproof's HttpTransport.

A local aiohttp server (in its own process) answers every POST with a fixed
OpenAI chat-completions body. The client process sends N requests at a given
concurrency and reports ``time.process_time`` of the client process per
request: the harness overhead a run pays on top of the model's latency.

    python bench/transport_cpu.py [--requests 2000] [--concurrency 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import httpx
from aiohttp import web

from toolproof.providers._http import HttpTransport

BODY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1764400000,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "lookup_order",
                                "arguments": '{"order_id":"ORD-104821"}',
                            },
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
    }
).encode()

PAYLOAD: dict[str, Any] = {
    "model": "gpt-4.1-mini",
    "messages": [{"role": "user", "content": "Where is order ORD-104821?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Look up an order by ID.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            },
        }
    ],
}


def _serve(port_queue: Any) -> None:
    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=BODY, content_type="application/json")

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port_queue.put(runner.addresses[0][1])
        await asyncio.Event().wait()

    asyncio.run(main())


Send = Callable[[], Awaitable[Any]]


async def _drive(send: Send, n: int, concurrency: int) -> tuple[float, float]:
    """Send n requests, at most `concurrency` at once; return (CPU s, wall s)."""
    sem = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with sem:
            await send()

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.process_time() - cpu0, time.perf_counter() - wall0


async def _bench_httpx(url: str, n: int, conc: int, rounds: int) -> list[tuple[float, float]]:
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client:

        async def send() -> Any:
            resp = await client.post(url, json=PAYLOAD, headers={"authorization": "Bearer x"})
            resp.raise_for_status()
            return resp.json()

        await _drive(send, 200, conc)
        return [await _drive(send, n, conc) for _ in range(rounds)]


async def _bench_aiohttp(url: str, n: int, conc: int, rounds: int) -> list[tuple[float, float]]:
    connector = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def send() -> Any:
            async with session.post(
                url, json=PAYLOAD, headers={"authorization": "Bearer x"}
            ) as resp:
                resp.raise_for_status()
                return json.loads(await resp.read())

        await _drive(send, 200, conc)
        return [await _drive(send, n, conc) for _ in range(rounds)]


async def _bench_transport(url: str, n: int, conc: int, rounds: int) -> list[tuple[float, float]]:
    transport = HttpTransport(max_connections=conc)

    async def send() -> Any:
        return await transport.post_json(url, PAYLOAD, {"authorization": "Bearer x"}, 30.0)

    try:
        await _drive(send, 200, conc)
        return [await _drive(send, n, conc) for _ in range(rounds)]
    finally:
        await transport.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    ctx = mp.get_context("spawn")
    ports = ctx.Queue()
    server = ctx.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=30)}/v1/chat/completions"
    benches = {
        "httpx.AsyncClient": _bench_httpx,
        "aiohttp.ClientSession": _bench_aiohttp,
        "toolproof HttpTransport": _bench_transport,
    }
    print(f"{args.requests} requests x {args.rounds} rounds, concurrency {args.concurrency}")
    print(f"{'client':<26}{'CPU ms/req (median)':>20}{'min':>8}{'max':>8}{'req/s':>9}")
    try:
        for name, bench in benches.items():
            runs = asyncio.run(bench(url, args.requests, args.concurrency, args.rounds))
            per_req = [cpu * 1000 / args.requests for cpu, _ in runs]
            rate = statistics.median(args.requests / wall for _, wall in runs)
            print(
                f"{name:<26}{statistics.median(per_req):>20.3f}"
                f"{min(per_req):>8.3f}{max(per_req):>8.3f}{rate:>9.0f}"
            )
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()

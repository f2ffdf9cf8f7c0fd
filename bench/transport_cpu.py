"""Client CPU time per request: httpx vs aiohttp vs toolproof's transport and adapters.

A local aiohttp server (in its own process) answers every POST with a fixed
OpenAI chat-completions body. The client process sends N requests at a given
concurrency and reports ``time.process_time`` of the client process per
request: the harness overhead a run pays on top of the model's latency.

The second table runs each provider adapter end to end (build the payload,
send it, parse the answer into a canonical Response with two tool calls)
against toolproof's StubServer, also in its own process.

    python bench/transport_cpu.py [--requests 2000] [--concurrency 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import httpx
from aiohttp import web

from toolproof.providers import ModelSettings, ProviderRequest, create_provider
from toolproof.providers._http import HttpTransport
from toolproof.testing import Call, Reply, StubServer
from toolproof.types import Message, Tool

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


def _serve_stub(port_queue: Any) -> None:
    calls = (Call("lookup_order", {"order_id": "ORD-1"}), Call("lookup_order", {"order_id": "X"}))

    async def serve() -> None:
        async with StubServer(default=Reply(calls=calls)) as stub:
            port_queue.put(stub.port)
            await asyncio.Event().wait()

    asyncio.run(serve())


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


PROVIDERS = {
    "openai": ("openai:gpt-4.1-mini", "/v1"),
    "openai-responses": ("openai-responses:gpt-5-mini", "/v1"),
    "anthropic": ("anthropic:claude-sonnet-4-5", "/v1"),
    "gemini": ("gemini:gemini-2.5-flash", ""),
}
TOOL = Tool(
    name="lookup_order",
    description="Look up an order by ID.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
)


async def _bench_provider(
    spec: str, base_url: str, n: int, conc: int, rounds: int
) -> list[tuple[float, float]]:
    transport = HttpTransport(max_connections=conc)
    settings = ModelSettings(base_url=base_url, max_tokens=256)
    provider = create_provider(spec, settings, transport)
    request = ProviderRequest(
        model=spec,
        messages=[
            Message(role="system", content="You are a support agent."),
            Message(role="user", content="Where is order ORD-1?"),
        ],
        tools=[TOOL],
        settings=settings,
    )

    async def send() -> Any:
        return await provider.generate(request)

    try:
        await _drive(send, 200, conc)
        return [await _drive(send, n, conc) for _ in range(rounds)]
    finally:
        await transport.aclose()


def _row(name: str, runs: list[tuple[float, float]], n: int) -> str:
    per_req = [cpu * 1000 / n for cpu, _ in runs]
    rate = statistics.median(n / wall for _, wall in runs)
    return (
        f"{name:<26}{statistics.median(per_req):>20.3f}"
        f"{min(per_req):>8.3f}{max(per_req):>8.3f}{rate:>9.0f}"
    )


def _start(target: Callable[[Any], None]) -> tuple[Any, int]:
    ctx = mp.get_context("spawn")
    ports = ctx.Queue()
    server = ctx.Process(target=target, args=(ports,), daemon=True)
    server.start()
    return server, int(ports.get(timeout=30))


def _fake_keys() -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        os.environ.setdefault(name, "bench-key")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    header = f"{'client':<26}{'CPU ms/req (median)':>20}{'min':>8}{'max':>8}{'req/s':>9}"
    print(f"{args.requests} requests x {args.rounds} rounds, concurrency {args.concurrency}")

    server, port = _start(_serve)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    benches = {
        "httpx.AsyncClient": _bench_httpx,
        "aiohttp.ClientSession": _bench_aiohttp,
        "toolproof HttpTransport": _bench_transport,
    }
    print("\nHTTP client only (fixed chat-completions body):")
    print(header)
    try:
        for name, bench in benches.items():
            runs = asyncio.run(bench(url, args.requests, args.concurrency, args.rounds))
            print(_row(name, runs, args.requests))
    finally:
        server.terminate()
        server.join()

    _fake_keys()
    server, port = _start(_serve_stub)
    print("\nProvider adapter end to end (payload, transport, canonical Response):")
    print(header)
    try:
        for name, (spec, path) in PROVIDERS.items():
            base = f"http://127.0.0.1:{port}{path}"
            runs = asyncio.run(
                _bench_provider(spec, base, args.requests, args.concurrency, args.rounds)
            )
            print(_row(name, runs, args.requests))
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()

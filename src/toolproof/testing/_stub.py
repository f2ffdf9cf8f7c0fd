"""A local HTTP server that speaks the providers' wire formats, for tests and benchmarks.

It listens on 127.0.0.1 on an ephemeral port and answers each request with
the next step of its script, rendered in the format of the endpoint called:

    POST .../chat/completions                   OpenAI Chat Completions (and compatibles)
    POST .../responses                          OpenAI Responses
    POST .../messages                           Anthropic Messages
    POST .../models/{model}:generateContent     Gemini

Use it from async code::

    async with StubServer([Reply.call("lookup_order", {"order_id": "A1"})]) as stub:
        settings = ModelSettings(base_url=stub.base_url("openai"))

or from sync code, where it runs in a background thread::

    with StubServer(default=Reply.say("ok"), latency_s=0.05) as stub:
        ...
"""

from __future__ import annotations

import asyncio
import collections
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from toolproof.testing._render import RENDERERS, wire_format
from toolproof.testing._script import (
    Delay,
    RateLimit,
    RawReply,
    Reply,
    ServerError,
    Step,
    Truncated,
)

__all__ = ["StubRequest", "StubServer"]

_BASE_PATHS = {
    "openai": "/v1",
    "openai-responses": "/v1",
    "openrouter": "/api/v1",
    "openai-compatible": "/v1",
    "anthropic": "/v1",
    "gemini": "",
}


@dataclass(frozen=True, slots=True)
class StubRequest:
    """One request the stub received."""

    path: str
    format: str | None
    headers: dict[str, str]
    body: Any


class StubServer:
    """Canned provider answers and injected faults over real HTTP on 127.0.0.1."""

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        default: Step | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self.script: collections.deque[Step] = collections.deque(script)
        self.default = default
        self.latency_s = latency_s
        self.requests: list[StubRequest] = []
        self.request_count = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- addresses ---------------------------------------------------------------

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the stub server is not running")
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, provider: str = "openai") -> str:
        """The ``settings.base_url`` that points a provider at this server."""
        return self.url + _BASE_PATHS.get(provider, "/v1")

    # -- script ------------------------------------------------------------------

    def add(self, *steps: Step) -> None:
        """Append steps to the script."""
        self.script.extend(steps)

    def reset_counters(self) -> None:
        self.requests.clear()
        self.request_count = 0
        self.peak_in_flight = self.in_flight

    def _next_step(self) -> Step | None:
        if self.script:
            return self.script.popleft()
        return self.default

    # -- serving -----------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.request_count += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        fmt = wire_format(request.path)
        self.requests.append(StubRequest(request.path, fmt, dict(request.headers), body))
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if fmt is None:
            return web.json_response({"error": {"message": "unknown endpoint"}}, status=404)
        step, headers = self._decide(fmt)
        if step is None:
            message = {"error": {"message": "stub script exhausted", "type": "stub"}}
            return web.json_response(message, status=500)
        return await self._perform(request, step, fmt, _model(request.path, body), headers)

    def _decide(self, fmt: str) -> tuple[Step | None, dict[str, str]]:
        """The step that answers this request, and headers to add to a reply or a 429."""
        return self._next_step(), {}

    async def _perform(
        self, request: web.Request, step: Step, fmt: str, model: str, headers: dict[str, str]
    ) -> web.StreamResponse:
        if isinstance(step, Delay):
            await asyncio.sleep(step.seconds)
            return await self._perform(request, step.then, fmt, model, headers)
        if isinstance(step, Reply):
            return web.json_response(RENDERERS[fmt](step, model), headers=headers or None)
        if isinstance(step, RawReply):
            return _raw(step)
        if isinstance(step, RateLimit):
            return _rate_limited(step, headers)
        if isinstance(step, ServerError):
            return web.Response(status=step.status, text=step.body, content_type="application/json")
        return await _truncated(request, step, RENDERERS[fmt](step.reply, model))

    # -- lifecycle: async --------------------------------------------------------

    async def start(self) -> StubServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=2048)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        self._runner = None

    async def __aenter__(self) -> StubServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- lifecycle: background thread, for sync code -----------------------------

    def start_in_thread(self) -> StubServer:
        """Serve from a daemon thread with its own event loop; returns once listening."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the caller below
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="toolproof-stub", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop_thread(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> StubServer:
        return self.start_in_thread()

    def __exit__(self, *exc: object) -> None:
        self.stop_thread()


def _model(path: str, body: Any) -> str:
    if path.endswith(":generateContent"):
        return path.rsplit("/", 1)[-1].removesuffix(":generateContent")
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    return "stub-model"


def _raw(step: RawReply) -> web.Response:
    headers = dict(step.headers)
    if isinstance(step.body, bytes):
        headers.setdefault("Content-Type", "application/json")
        return web.Response(status=step.status, body=step.body, headers=headers)
    return web.json_response(step.body, status=step.status, headers=headers)


def _rate_limited(step: RateLimit, extra: dict[str, str]) -> web.Response:
    headers: dict[str, str] = dict(extra)
    if step.retry_after is not None:
        headers["Retry-After"] = step.retry_after
    if step.retry_after_ms is not None:
        headers["retry-after-ms"] = step.retry_after_ms
    body = {"error": {"message": "rate limited by the stub", "type": "rate_limit_error"}}
    return web.json_response(body, status=429, headers=headers)


async def _truncated(request: web.Request, step: Truncated, body: Any) -> web.StreamResponse:
    data = json.dumps(body).encode()
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    resp.content_length = len(data)
    await resp.prepare(request)
    await resp.write(data[: max(1, int(len(data) * step.keep))])
    if request.transport is not None:
        request.transport.close()
    return resp

"""The network transport every HTTP provider shares: a lean aiohttp client.

It never retries: the runner owns retries, and it needs every failure to
count it. ``bench/transport_cpu.py`` measures why this is aiohttp and not
httpx or a vendor SDK. Failure classification is shared by every transport
(:mod:`toolproof.providers._transport`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiohttp

from toolproof.providers._base import TransportError
from toolproof.providers._transport import (
    HttpRequest,
    HttpResponse,
    Transport,
    classify_status,
    parse_retry_after,
)
from toolproof.types import Outcome

__all__ = ["HttpTransport", "classify_status", "parse_retry_after"]


class HttpTransport(Transport):
    """A shared, connection-pooled JSON-over-HTTP client.

    At most ``max_connections`` requests are in flight at once; the others
    wait for a free slot. ``timeout_s`` and the reported latency start once
    a request has its slot, so time spent queueing here is never counted
    against the provider. The session is opened on first use, in the running
    event loop.
    """

    def __init__(self, *, max_connections: int = 256) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> tuple[aiohttp.ClientSession, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._loop = loop
            connector = aiohttp.TCPConnector(limit=self.max_connections, limit_per_host=0)
            self._session = aiohttp.ClientSession(
                connector=connector, json_serialize=json.dumps, trust_env=False
            )
            self._slots = asyncio.Semaphore(self.max_connections)
        assert self._slots is not None
        return self._session, self._slots

    def slot(self) -> contextlib.AbstractAsyncContextManager[object]:
        return self._client()[1]

    async def send(self, request: HttpRequest) -> HttpResponse:
        session, _ = self._client()
        timeout = aiohttp.ClientTimeout(total=request.timeout_s)
        try:
            async with session.post(
                request.url, data=request.body, headers=dict(request.headers), timeout=timeout
            ) as resp:
                body = await resp.read()
                return HttpResponse(
                    resp.status, body, {k.lower(): v for k, v in resp.headers.items()}
                )
        except TimeoutError as exc:
            raise TransportError(
                Outcome.timeout, f"no answer within {request.timeout_s:g} s from {request.url}"
            ) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise TransportError(
                Outcome.network, f"{type(exc).__name__} from {request.url}: {exc}"
            ) from exc

    async def aclose(self) -> None:
        """Close the pooled connections. The transport may be used again afterwards."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

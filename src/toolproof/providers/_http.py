"""The one HTTP client every provider shares.

A lean aiohttp session that POSTs JSON and classifies every failure into a
:class:`~toolproof.providers.TransportError` carrying an infrastructure
:class:`~toolproof.types.Outcome`:

    HTTP 429                      rate_limited  (``retry_after`` from the headers)
    HTTP 5xx (incl. 529)          server_error
    no answer within timeout_s    timeout
    connection failure,
    truncated or non-JSON body    network
    any other HTTP 4xx            rejected

It never retries: the runner owns retries, and it needs every failure to
count it. ``bench/transport_cpu.py`` measures why this is aiohttp and not
httpx or a vendor SDK.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp

from toolproof.providers._base import TransportError
from toolproof.types import Outcome

__all__ = ["HttpTransport", "classify_status", "parse_retry_after"]

_MAX_ERROR_BODY = 64 * 1024
_JSON_HEADERS = {"content-type": "application/json", "accept": "application/json"}


def classify_status(status: int) -> Outcome:
    """The outcome of an HTTP error status."""
    if status == 429:
        return Outcome.rate_limited
    if status >= 500:
        return Outcome.server_error
    return Outcome.rejected


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


class HttpTransport:
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

    async def post_json(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], timeout_s: float
    ) -> tuple[Any, float]:
        """POST JSON; return (parsed body, latency in ms). Raise a classified TransportError."""
        data = _json_bytes(payload)
        all_headers = {**_JSON_HEADERS, **headers}
        session, slots = self._client()
        async with slots:
            started = time.perf_counter()
            status, resp_headers, body = await self._send(
                session, url, data, all_headers, timeout_s, payload
            )
            latency_ms = (time.perf_counter() - started) * 1000.0
        if status >= 400:
            raise _status_error(url, status, resp_headers, body, payload)
        return _parse_body(url, status, resp_headers, body, payload), latency_ms

    async def _send(
        self,
        session: aiohttp.ClientSession,
        url: str,
        data: bytes,
        headers: dict[str, str],
        timeout_s: float,
        payload: Any,
    ) -> tuple[int, dict[str, str], bytes]:
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        try:
            async with session.post(url, data=data, headers=headers, timeout=timeout) as resp:
                body = await resp.read()
                return resp.status, {k.lower(): v for k, v in resp.headers.items()}, body
        except TimeoutError as exc:
            raise TransportError(
                Outcome.timeout, f"no answer within {timeout_s:g} s from {url}", request=payload
            ) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise TransportError(
                Outcome.network, f"{type(exc).__name__} from {url}: {exc}", request=payload
            ) from exc

    async def aclose(self) -> None:
        """Close the pooled connections. The transport may be used again afterwards."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def __aenter__(self) -> HttpTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _json_bytes(payload: Any) -> bytes:
    """The request body; a lone surrogate (echoed from a model's answer) is sent escaped."""
    text = json.dumps(payload, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True).encode()


def _text(body: bytes) -> str:
    return body[:_MAX_ERROR_BODY].decode("utf-8", errors="replace")


def _status_error(
    url: str, status: int, headers: dict[str, str], body: bytes, payload: Any
) -> TransportError:
    outcome = classify_status(status)
    return TransportError(
        outcome,
        f"HTTP {status} from {url}",
        status=status,
        body=_text(body),
        headers=headers,
        retry_after=parse_retry_after(headers),
        request=payload,
    )


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _parse_body(url: str, status: int, headers: dict[str, str], body: bytes, payload: Any) -> Any:
    try:
        return json.loads(body, parse_constant=_not_json)  # NaN, Infinity: not JSON
    except ValueError as exc:
        raise TransportError(
            Outcome.network,
            f"unreadable JSON body from {url} ({len(body)} bytes): {exc}",
            status=status,
            body=_text(body),
            headers=headers,
            request=payload,
        ) from exc

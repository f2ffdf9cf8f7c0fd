"""The transport interface every HTTP provider speaks through, and its shared rules.

A :class:`Transport` has one method to implement, :meth:`Transport.send`: one
HTTP exchange, bytes in and bytes out. Everything else is shared and lives
here: JSON encoding, latency, and the classification of every failure into a
:class:`~toolproof.providers.TransportError` with an infrastructure
:class:`~toolproof.types.Outcome`::

    HTTP 429                      rate_limited  (``retry_after`` from the headers)
    HTTP 5xx (incl. 529)          server_error
    no answer within timeout_s    timeout
    connection failure,
    truncated or non-JSON body    network
    any other HTTP 4xx            rejected

A body that is JSON but holds a number toolproof cannot keep as it was sent
(an integer beyond Python's digit limit, a float beyond a double), or an object
that names a key twice, is not an infrastructure failure: the model may have
written it in its arguments. Such a body comes back as an :class:`UnreadableBody`,
each such number an :class:`UnreadableNumber` holding its text, each such object a
:class:`RepeatedKeys` holding its pairs, for the adapter to read as usual
(:func:`~toolproof.providers._common.call_from_object` then counts the call
the model's invalid output).

:class:`~toolproof.providers.HttpTransport` sends over the network (aiohttp);
:class:`~toolproof.testing.MockTransport` answers from a function, in memory.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from toolproof.providers._base import Allowance, RateLimits, TransportError
from toolproof.types import Outcome

__all__ = [
    "HttpRequest",
    "HttpResponse",
    "RepeatedKeys",
    "Transport",
    "UnreadableBody",
    "UnreadableNumber",
    "classify_status",
    "parse_rate_limits",
    "parse_retry_after",
]

_MAX_ERROR_BODY = 64 * 1024
_JSON_HEADERS = {"content-type": "application/json", "accept": "application/json"}


@dataclass(frozen=True)
class HttpRequest:
    """One POST as it goes on the wire."""

    url: str
    headers: Mapping[str, str]
    body: bytes
    timeout_s: float

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class HttpResponse:
    """One answer as it came off the wire (header names in lower case)."""

    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(
        cls, data: Any, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> HttpResponse:
        return cls(
            status, json.dumps(data).encode(), {k.lower(): v for k, v in (headers or {}).items()}
        )


class Transport:
    """Sends a provider's JSON requests. Subclasses implement :meth:`send`.

    ``send`` raises :class:`TransportError` for a timeout (``Outcome.timeout``)
    or a failed connection (``Outcome.network``); HTTP errors and unreadable
    bodies are classified here, the same way for every transport.
    """

    async def send(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError

    def slot(self) -> contextlib.AbstractAsyncContextManager[object]:
        """Held while a request is in flight; latency is measured inside it."""
        return contextlib.nullcontext()

    async def post_json(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], timeout_s: float
    ) -> tuple[Any, float]:
        """POST JSON; return (parsed body, latency in ms). Raise a classified TransportError."""
        body, latency_ms, _ = await self.post_json_headers(url, payload, headers, timeout_s)
        return body, latency_ms

    async def post_json_headers(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], timeout_s: float
    ) -> tuple[Any, float, dict[str, str]]:
        """:meth:`post_json`, with the answer's headers (names in lower case)."""
        request = HttpRequest(
            url=url,
            headers={**_JSON_HEADERS, **headers},
            body=_json_bytes(payload),
            timeout_s=timeout_s,
        )
        async with self.slot():
            started = time.perf_counter()
            try:
                response = await self.send(request)
            except TransportError as exc:
                if exc.request is None:
                    exc.request = payload
                raise
            latency_ms = (time.perf_counter() - started) * 1000.0
        headers_ = {k.lower(): v for k, v in response.headers.items()}
        if response.status >= 400:
            raise _status_error(url, response.status, headers_, response.body, payload)
        body = _parse_body(url, response.status, headers_, response.body, payload)
        return body, latency_ms, headers_

    async def aclose(self) -> None:
        """Release connections. The transport may be used again afterwards."""

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


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


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float | None:
    """Seconds in a duration as OpenAI writes them (``6m0s``, ``1.5s``, ``20ms``), or None."""
    text = text.strip()
    try:
        return max(float(text), 0.0)  # bare seconds
    except ValueError:
        pass
    total, end = 0.0, 0
    for part in _DURATION_PART.finditer(text):
        if part.start() != end:
            return None
        total += float(part.group(1)) * _UNIT_S[part.group(2)]
        end = part.end()
    return total if end and end == len(text) else None


def _reset_s(value: str, now: datetime | None) -> float | None:
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:  # an RFC 3339 time, as Anthropic sends
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _allowance(
    headers: Mapping[str, str], limit: str, remaining: str, reset: str, now: datetime | None
) -> Allowance | None:
    left = headers.get(remaining)
    if left is None:
        return None
    try:
        total = float(headers.get(limit, ""))
        left_n = float(left)
    except ValueError:
        return None
    seconds = _reset_s(headers.get(reset, ""), now)
    if seconds is None:
        return None
    return Allowance(limit=total, remaining=left_n, reset_s=seconds)


def parse_rate_limits(headers: Mapping[str, str], now: datetime | None = None) -> RateLimits | None:
    """The rate-limit headers of an answer (lower-case names), or None when it has none.

    OpenAI and compatibles: ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``,
    the reset a duration (``1s``, ``6m0s``, ``20ms``). Anthropic:
    ``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}``, the reset an
    RFC 3339 time. A header that does not parse is ignored.
    """
    if "x-ratelimit-remaining-requests" in headers or "x-ratelimit-remaining-tokens" in headers:
        requests = _allowance(
            headers,
            "x-ratelimit-limit-requests",
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
            now,
        )
        tokens = _allowance(
            headers,
            "x-ratelimit-limit-tokens",
            "x-ratelimit-remaining-tokens",
            "x-ratelimit-reset-tokens",
            now,
        )
    elif (
        "anthropic-ratelimit-requests-remaining" in headers
        or "anthropic-ratelimit-tokens-remaining" in headers
    ):
        prefix = "anthropic-ratelimit-"
        requests = _allowance(
            headers,
            prefix + "requests-limit",
            prefix + "requests-remaining",
            prefix + "requests-reset",
            now,
        )
        tokens = _allowance(
            headers,
            prefix + "tokens-limit",
            prefix + "tokens-remaining",
            prefix + "tokens-reset",
            now,
        )
    else:
        return None
    if requests is None and tokens is None:
        return None
    return RateLimits(requests=requests, tokens=tokens)


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


def _json_bytes(payload: Any) -> bytes:
    """The request body; a lone surrogate (echoed from a model's answer) is sent escaped."""
    text = json.dumps(payload, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True).encode()


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


class UnreadableNumber(str):
    """The text of a number toolproof cannot keep as it was sent (see the module)."""

    __slots__ = ()


class RepeatedKeys(dict[str, Any]):
    """An object that names a key twice: read as its last value, ``pairs`` as sent."""

    pairs: list[tuple[str, Any]]


class UnreadableBody(dict[str, Any]):
    """A body object holding :class:`UnreadableNumber` values; ``text`` is the body received."""

    text: str


def _parse_body(url: str, status: int, headers: dict[str, str], body: bytes, payload: Any) -> Any:
    unreadable: list[object] = []

    def number(text: str, kind: type[float] | type[int]) -> Any:
        try:
            value = kind(text)
        except ValueError:  # an integer beyond the digit limit
            value = None
        if value is None or (kind is float and not math.isfinite(value)):
            unreadable.append(UnreadableNumber(text))
            return unreadable[-1]
        return value

    def obj(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if len(value) == len(pairs):
            return value
        repeated = RepeatedKeys(value)
        repeated.pairs = pairs
        unreadable.append(repeated)
        return repeated

    try:
        value = json.loads(
            body,
            parse_constant=_not_json,  # NaN, Infinity: not JSON
            parse_int=lambda text: number(text, int),
            parse_float=lambda text: number(text, float),
            object_pairs_hook=obj,
        )
        if not unreadable:
            return value
        if not isinstance(value, dict):
            raise ValueError("a number toolproof cannot read, in a body that is not an object")
        kept = UnreadableBody(value)
        kept.text = body.decode("utf-8", errors="replace")
        return kept
    except ValueError as exc:
        raise TransportError(
            Outcome.network,
            f"unreadable JSON body from {url} ({len(body)} bytes): {exc}",
            status=status,
            body=_text(body),
            headers=headers,
            request=payload,
        ) from exc

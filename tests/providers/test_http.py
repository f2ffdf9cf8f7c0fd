"""The shared transport: failure classification and Retry-After parsing."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from toolproof.providers import HttpTransport, TransportError
from toolproof.providers._base import Allowance, RateLimits
from toolproof.providers._http import classify_status, parse_retry_after
from toolproof.providers._transport import parse_duration, parse_rate_limits
from toolproof.testing import RateLimit, RawReply, Reply, StubServer
from toolproof.types import Outcome

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "12"}, 12.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"Retry-After": "Mon, 30 Nov 2026 12:00:30 GMT"}, 30.0),
        ({"Retry-After": "Mon, 30 Nov 2026 11:59:00 GMT"}, 0.0),
        ({"Retry-After": "12", "retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "nonsense", "Retry-After": "3"}, 3.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-5"}, 0.0),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("20ms", 0.02),
        ("1s", 1.0),
        ("1.5s", 1.5),
        ("6m0s", 360.0),
        ("1h2m3s", 3723.0),
        ("2.5", 2.5),
        ("", None),
        ("soon", None),
        ("1s soon", None),
        ("ms", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


def test_parse_rate_limits_reads_openai_and_anthropic_headers() -> None:
    openai = parse_rate_limits(
        {
            "x-ratelimit-limit-requests": "600",
            "x-ratelimit-remaining-requests": "590",
            "x-ratelimit-reset-requests": "1s",
            "x-ratelimit-limit-tokens": "40000",
            "x-ratelimit-remaining-tokens": "18000",
            "x-ratelimit-reset-tokens": "6m0s",
        }
    )
    assert openai == RateLimits(Allowance(600, 590, 1.0), Allowance(40000, 18000, 360.0))
    assert openai.requests is not None and openai.requests.rate == 10.0
    anthropic = parse_rate_limits(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "anthropic-ratelimit-requests-reset": "2026-11-30T12:00:01.200Z",
        },
        now=NOW,
    )
    assert anthropic == RateLimits(requests=Allowance(50, 49, 1.2))
    garbled = {"x-ratelimit-remaining-requests": "many", "x-ratelimit-limit-requests": "9"}
    assert parse_rate_limits(garbled) is None
    assert parse_rate_limits({"content-type": "application/json"}) is None
    full = parse_rate_limits(
        {
            "x-ratelimit-limit-requests": "9",
            "x-ratelimit-remaining-requests": "9",
            "x-ratelimit-reset-requests": "0s",
        }
    )
    assert full is not None and full.requests is not None and full.requests.rate is None


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (429, Outcome.rate_limited),
        (500, Outcome.server_error),
        (502, Outcome.server_error),
        (529, Outcome.server_error),
        (400, Outcome.rejected),
        (401, Outcome.rejected),
        (404, Outcome.rejected),
        (422, Outcome.rejected),
    ],
)
def test_classify_status(status: int, outcome: Outcome) -> None:
    assert classify_status(status) is outcome


async def test_returns_body_and_latency(stub: StubServer, transport: HttpTransport) -> None:
    stub.add(RawReply({"ok": True}))
    body, latency_ms = await transport.post_json(stub.url + "/v1/chat/completions", {"a": 1}, {}, 5)
    assert body == {"ok": True}
    assert latency_ms > 0
    assert stub.requests[-1].body == {"a": 1}
    assert stub.requests[-1].headers["Content-Type"] == "application/json"


async def test_retry_after_ms_header(stub: StubServer, transport: HttpTransport) -> None:
    stub.add(RateLimit(retry_after="10", retry_after_ms="1500"))
    with pytest.raises(TransportError) as info:
        await transport.post_json(stub.url + "/v1/messages", {}, {}, 5)
    assert info.value.retry_after == 1.5
    assert info.value.headers["retry-after"] == "10"


async def test_connection_refused_is_a_network_failure(transport: HttpTransport) -> None:
    with socket.socket() as sock:  # find a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(TransportError) as info:
        await transport.post_json(f"http://127.0.0.1:{port}/v1/x", {}, {}, 5)
    assert info.value.outcome is Outcome.network
    assert info.value.retryable


async def test_usable_after_close(stub: StubServer) -> None:
    transport = HttpTransport()
    stub.add(Reply.say("a"), Reply.say("b"))
    url = stub.base_url("openai") + "/chat/completions"
    await transport.post_json(url, {"model": "m"}, {}, 5)
    await transport.aclose()
    body, _ = await transport.post_json(url, {"model": "m"}, {}, 5)
    assert body["choices"][0]["message"]["content"] == "b"
    await transport.aclose()


async def test_connection_limit_bounds_concurrency(stub: StubServer) -> None:
    import asyncio

    stub.default = Reply.say("ok")
    stub.latency_s = 0.05
    url = stub.base_url("openai") + "/chat/completions"
    async with HttpTransport(max_connections=3) as limited:
        await asyncio.gather(*(limited.post_json(url, {}, {}, 5) for _ in range(12)))
    assert stub.request_count == 12
    assert stub.peak_in_flight == 3


async def test_waiting_for_a_connection_does_not_count_against_the_timeout(
    stub: StubServer,
) -> None:
    import asyncio

    stub.default = Reply.say("ok")
    stub.latency_s = 0.3
    url = stub.base_url("openai") + "/chat/completions"
    async with HttpTransport(max_connections=1) as single:
        results = await asyncio.gather(*(single.post_json(url, {}, {}, 0.6) for _ in range(3)))
    assert len(results) == 3
    assert all(latency_ms < 600 for _, latency_ms in results)
    assert stub.peak_in_flight == 1

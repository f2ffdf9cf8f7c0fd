"""Every HTTP provider, as shipped, against the stub server: answers, malformed calls, faults."""

from __future__ import annotations

import json

import pytest
from providers_support import SPECS, TEXT_ARGUMENT_PROVIDERS, ask, provider_for

from toolproof.providers import HttpTransport, TransportError
from toolproof.testing import (
    Call,
    Delay,
    RateLimit,
    RawReply,
    Reply,
    ServerError,
    StubServer,
    Truncated,
)
from toolproof.types import Outcome

ALL = list(SPECS)


@pytest.mark.parametrize("name", ALL)
async def test_single_call(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Reply.call("lookup_order", {"order_id": "ORD-1"}, id="c-1"))
    exchange = await provider.generate(ask(settings))
    (call,) = exchange.response.tool_calls
    assert call.name == "lookup_order"
    assert call.arguments == {"order_id": "ORD-1"}
    assert json.loads(call.raw_arguments or "") == {"order_id": "ORD-1"}
    assert call.parse_error is None
    assert call.id == "c-1"
    assert exchange.response.text is None
    assert exchange.response.refusal is None
    assert exchange.response.usage is not None
    assert exchange.response.usage.input_tokens == 12
    assert exchange.response.latency_ms is not None and exchange.response.latency_ms > 0


@pytest.mark.parametrize("name", ALL)
async def test_request_is_the_exact_payload_sent(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Reply.say("hi"))
    exchange = await provider.generate(ask(settings))
    assert stub.requests[-1].body == exchange.request


@pytest.mark.parametrize("name", ALL)
async def test_raw_is_the_unmodified_body(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    body = _body_for(name)
    stub.add(RawReply(body))
    exchange = await provider.generate(ask(settings))
    assert exchange.response.raw == body


@pytest.mark.parametrize("name", ALL)
async def test_parallel_calls_keep_their_order(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    calls = (
        Call("lookup_order", {"order_id": "B"}),
        Call("cancel_order", {"order_id": "A"}),
        Call("lookup_order", {"order_id": "C"}),
    )
    stub.add(Reply(calls=calls))
    exchange = await provider.generate(ask(settings))
    got = [(c.name, c.arguments) for c in exchange.response.tool_calls]
    assert got == [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("name", ALL)
async def test_text_only(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Reply.say("Which order do you mean?"))
    exchange = await provider.generate(ask(settings))
    assert exchange.response.text == "Which order do you mean?"
    assert exchange.response.tool_calls == []
    assert exchange.response.refusal is None


@pytest.mark.parametrize("name", ALL)
async def test_refusal(name: str, stub: StubServer, transport: HttpTransport, keys: object) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Reply.refuse("I can't help with that."))
    exchange = await provider.generate(ask(settings))
    assert exchange.response.refusal
    assert exchange.response.tool_calls == []


@pytest.mark.parametrize("name", TEXT_ARGUMENT_PROVIDERS)
async def test_invalid_json_arguments_are_kept_raw(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    broken = '{"order_id": "ORD-1",, }'
    stub.add(Reply(calls=(Call("lookup_order", broken), Call("lookup_order", '{"order_id":"X"}'))))
    exchange = await provider.generate(ask(settings))
    bad, good = exchange.response.tool_calls
    assert bad.raw_arguments == broken
    assert bad.arguments is None
    assert bad.parse_error
    assert good.arguments == {"order_id": "X"} and good.parse_error is None


@pytest.mark.parametrize("name", TEXT_ARGUMENT_PROVIDERS)
async def test_arguments_text_is_kept_byte_for_byte(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    text = '{ "order_id" : "ORD-1",\n  "note": "Nov\\u00e1k", "n": 1.50 }'
    stub.add(Reply(calls=(Call("lookup_order", text),)))
    exchange = await provider.generate(ask(settings))
    (call,) = exchange.response.tool_calls
    assert call.raw_arguments == text
    assert call.arguments == {"order_id": "ORD-1", "note": "Novák", "n": 1.5}


@pytest.mark.parametrize("name", ALL)
async def test_unknown_tool_name_is_kept(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Reply.call("delete_everything", {"really": True}))
    exchange = await provider.generate(ask(settings))
    (call,) = exchange.response.tool_calls
    assert call.name == "delete_everything"
    assert call.arguments == {"really": True}


@pytest.mark.parametrize("name", ALL)
async def test_rate_limit_with_retry_after(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(RateLimit(retry_after="7"))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    assert info.value.outcome is Outcome.rate_limited
    assert info.value.status == 429
    assert info.value.retry_after == 7.0
    assert info.value.retryable
    assert info.value.request == stub.requests[-1].body


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("status", [500, 503, 529])
async def test_server_error(
    name: str, status: int, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(ServerError(status))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    assert info.value.outcome is Outcome.server_error
    assert info.value.status == status
    assert "stub server error" in (info.value.body or "")


@pytest.mark.parametrize("name", ALL)
async def test_client_error_is_rejected(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(RawReply({"error": {"message": "bad tool schema"}}, status=400))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    assert info.value.outcome is Outcome.rejected
    assert not info.value.retryable
    assert "bad tool schema" in (info.value.body or "")


@pytest.mark.parametrize("name", ALL)
async def test_timeout(name: str, stub: StubServer, transport: HttpTransport, keys: object) -> None:
    provider, settings = provider_for(name, stub, transport, timeout_s=0.2)
    stub.add(Delay(1.0))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    assert info.value.outcome is Outcome.timeout


@pytest.mark.parametrize("name", ALL)
async def test_truncated_body_is_a_network_failure(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Truncated(), Reply.say("after the cut"))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    assert info.value.outcome is Outcome.network
    exchange = await provider.generate(ask(settings))  # the pool recovers
    assert exchange.response.text == "after the cut"


@pytest.mark.parametrize("name", ALL)
async def test_non_json_body_is_a_network_failure(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(RawReply(b'{"choices": [{"message": '))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    assert info.value.outcome is Outcome.network


@pytest.mark.parametrize("name", ALL)
async def test_keys_never_appear_in_request_or_raw(
    name: str, stub: StubServer, transport: HttpTransport, keys: dict[str, str]
) -> None:
    provider, settings = provider_for(name, stub, transport)
    stub.add(Reply.call("lookup_order", {"order_id": "ORD-1"}), RateLimit())
    exchange = await provider.generate(ask(settings))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(settings))
    sent_headers = " ".join(stub.requests[0].headers.values())
    assert any(key in sent_headers for key in keys.values())  # the key was sent, as a header
    stored = json.dumps([exchange.request, exchange.response.raw, info.value.request])
    stored += str(info.value) + (info.value.body or "") + json.dumps(info.value.headers)
    stored += exchange.response.model_dump_json()
    for key in keys.values():
        assert key not in stored


def _body_for(name: str) -> dict[str, object]:
    from toolproof.testing._render import RENDERERS

    fmt = {"openai-responses": "openai-responses", "anthropic": "anthropic", "gemini": "gemini"}
    return RENDERERS[fmt.get(name, "openai-chat")](Reply.call("lookup_order", {"x": 1}), "m-1")

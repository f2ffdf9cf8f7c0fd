"""The OpenAI Responses wire format."""

from __future__ import annotations

from typing import Any

import pytest
from providers_support import ask, multi_turn, provider_for

from toolproof.providers import HttpTransport
from toolproof.testing import RawReply, Reply, StubServer


async def _sent(stub: StubServer, transport: HttpTransport, **settings: object) -> dict[str, Any]:
    provider, s = provider_for("openai-responses", stub, transport, **settings)
    stub.add(Reply.say("ok"))
    exchange = await provider.generate(ask(s, multi_turn()))
    return exchange.request  # type: ignore[no-any-return]


async def test_payload(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    sent = await _sent(
        stub, transport, max_tokens=400, reasoning_effort="minimal", parallel_tool_calls=True
    )
    assert stub.requests[-1].path == "/v1/responses"
    assert sent["model"] == "gpt-5-mini"
    assert sent["max_output_tokens"] == 400
    assert sent["reasoning"] == {"effort": "minimal"}
    assert sent["parallel_tool_calls"] is True
    assert sent["store"] is False
    lookup, cancel = sent["tools"]
    assert lookup == {
        "type": "function",
        "name": "lookup_order",
        "description": "Look up an order by its ID.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
        "strict": False,
    }
    assert cancel["strict"] is True


async def test_input_items(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    sent = await _sent(stub, transport)
    assert sent["input"] == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "Cancel A and look up B."},
        {"role": "assistant", "content": "Doing both."},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "cancel_order",
            "arguments": '{"order_id":"A"}',
        },
        {
            "type": "function_call",
            "call_id": "c2",
            "name": "lookup_order",
            "arguments": '{"order_id": "B"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": "cancelled"},
        {"type": "function_call_output", "call_id": "c2", "output": '{"status": "shipped"}'},
        {"role": "user", "content": "Thanks. And C?"},
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ({"tool": "cancel_order"}, {"type": "function", "name": "cancel_order"}),
    ],
)
async def test_tool_choice(
    choice: object, wire: object, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent(stub, transport, tool_choice=choice)
    assert sent["tool_choice"] == wire


async def test_output_items(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    provider, s = provider_for("openai-responses", stub, transport)
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Looking it up.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_9",
                "name": "lookup_order",
                "arguments": '{"order_id":"ORD-1"}',
            },
        ],
        "usage": {"input_tokens": 50, "output_tokens": 20},
    }
    stub.add(RawReply(body))
    response = (await provider.generate(ask(s))).response
    assert response.text == "Looking it up."
    (call,) = response.tool_calls
    assert (call.id, call.name, call.raw_arguments) == (
        "call_9",
        "lookup_order",
        '{"order_id":"ORD-1"}',
    )
    assert response.model == "gpt-5-mini-2025-08-07"
    assert response.stop_reason == "completed"
    assert response.usage is not None and response.usage.output_tokens == 20


async def test_incomplete_reports_the_reason(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai-responses", stub, transport)
    stub.add(Reply(text="Looking", stop_reason="max_output_tokens"))
    response = (await provider.generate(ask(s))).response
    assert response.stop_reason == "max_output_tokens"
    assert response.text == "Looking"


async def test_refusal_part(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    provider, s = provider_for("openai-responses", stub, transport)
    stub.add(Reply.refuse("No."))
    response = (await provider.generate(ask(s))).response
    assert response.refusal == "No."
    assert response.text is None

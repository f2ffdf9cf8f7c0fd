"""The Anthropic Messages wire format."""

from __future__ import annotations

from typing import Any

import pytest
from providers_support import ask, multi_turn, provider_for

from toolproof.errors import UserError
from toolproof.providers import HttpTransport, ModelSettings, create_provider
from toolproof.testing import RawReply, Reply, StubServer
from toolproof.types import Message


async def _sent(
    stub: StubServer,
    transport: HttpTransport,
    messages: list[Message] | None = None,
    **settings: object,
) -> dict[str, Any]:
    provider, s = provider_for("anthropic", stub, transport, **settings)
    stub.add(Reply.say("ok"))
    exchange = await provider.generate(ask(s, messages or multi_turn()))
    return exchange.request  # type: ignore[no-any-return]


async def test_payload_and_headers(
    stub: StubServer, transport: HttpTransport, keys: dict[str, str]
) -> None:
    sent = await _sent(stub, transport, temperature=0.2)
    req = stub.requests[-1]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == keys["ANTHROPIC_API_KEY"]
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in req.headers
    assert sent["model"] == "claude-sonnet-4-5"
    assert sent["max_tokens"] == 1024
    assert sent["system"] == "You are a support agent."
    assert sent["temperature"] == 0.2
    lookup, cancel = sent["tools"]
    assert lookup == {
        "name": "lookup_order",
        "description": "Look up an order by its ID.",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    }
    assert cancel["strict"] is True
    assert sent["tool_choice"] == {"type": "auto"}


async def test_messages_merge_tool_results_into_one_user_turn(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    messages = multi_turn()
    messages[4] = messages[4].model_copy(update={"is_error": True})
    sent = await _sent(stub, transport, messages)
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Cancel A and look up B."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Doing both."},
                {
                    "type": "tool_use",
                    "id": "c1",
                    "name": "cancel_order",
                    "input": {"order_id": "A"},
                },
                {
                    "type": "tool_use",
                    "id": "c2",
                    "name": "lookup_order",
                    "input": {"order_id": "B"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "cancelled"},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": '{"status": "shipped"}',
                    "is_error": True,
                },
                {"type": "text", "text": "Thanks. And C?"},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ({"tool": "cancel_order"}, None, {"type": "tool", "name": "cancel_order"}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", True, {"type": "any", "disable_parallel_tool_use": False}),
        ("none", False, {"type": "none"}),
    ],
)
async def test_tool_choice(
    choice: object,
    parallel: bool | None,
    wire: object,
    stub: StubServer,
    transport: HttpTransport,
    keys: object,
) -> None:
    sent = await _sent(stub, transport, tool_choice=choice, parallel_tool_calls=parallel)
    assert sent["tool_choice"] == wire


async def test_max_tokens_and_effort(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent(stub, transport, max_tokens=333, reasoning_effort="medium")
    assert sent["max_tokens"] == 333
    assert sent["output_config"] == {"effort": "medium"}


def test_unsupported_effort_is_a_user_error(transport: HttpTransport, keys: object) -> None:
    with pytest.raises(UserError, match="reasoning_effort"):
        create_provider("anthropic:claude", ModelSettings(reasoning_effort="minimal"), transport)


async def test_response_blocks(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    provider, s = provider_for("anthropic", stub, transport)
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "thinking", "thinking": "...", "signature": "x"},
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "lookup_order",
                "input": {"order_id": "ORD-1", "n": [1, 2.5]},
            },
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 30},
    }
    stub.add(RawReply(body))
    response = (await provider.generate(ask(s))).response
    assert response.text == "Let me check."
    (call,) = response.tool_calls
    assert call.raw_arguments == '{"order_id":"ORD-1","n":[1,2.5]}'
    assert call.arguments == {"order_id": "ORD-1", "n": [1, 2.5]}
    assert response.stop_reason == "tool_use"
    assert response.model == "claude-sonnet-4-5-20250929"


async def test_refusal_stop_reason(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("anthropic", stub, transport)
    stub.add(Reply.refuse("I won't do that."))
    response = (await provider.generate(ask(s))).response
    assert response.stop_reason == "refusal"
    assert response.refusal == "I won't do that."


def test_missing_key_names_the_variable(
    transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        create_provider("anthropic:claude", ModelSettings(), transport)

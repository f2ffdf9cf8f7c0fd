"""The Chat Completions wire format: OpenAI, OpenRouter and OpenAI-compatible servers."""

from __future__ import annotations

from typing import Any

import pytest
from providers_support import ask, multi_turn, provider_for

from toolproof.errors import UserError
from toolproof.providers import HttpTransport, ModelSettings, create_provider
from toolproof.testing import RawReply, Reply, StubServer
from toolproof.types import Message, ToolCall


async def _sent(
    name: str, stub: StubServer, transport: HttpTransport, **settings: object
) -> dict[str, Any]:
    provider, s = provider_for(name, stub, transport, **settings)
    stub.add(Reply.say("ok"))
    exchange = await provider.generate(ask(s, multi_turn()))
    return exchange.request  # type: ignore[no-any-return]


async def test_openai_payload(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    sent = await _sent(
        "openai",
        stub,
        transport,
        temperature=0.0,
        max_tokens=300,
        reasoning_effort="low",
        parallel_tool_calls=False,
    )
    assert stub.requests[-1].path == "/v1/chat/completions"
    assert sent["model"] == "gpt-4.1-mini"
    assert sent["max_completion_tokens"] == 300
    assert "max_tokens" not in sent
    assert sent["reasoning_effort"] == "low"
    assert sent["parallel_tool_calls"] is False
    assert sent["temperature"] == 0.0
    assert sent["tool_choice"] == "auto"
    lookup, cancel = sent["tools"]
    assert lookup == {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
            "description": "Look up an order by its ID.",
        },
    }
    assert "strict" not in lookup["function"]
    assert cancel["function"]["strict"] is True


async def test_openai_multi_turn_messages(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent("openai", stub, transport)
    assert sent["messages"] == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "Cancel A and look up B."},
        {
            "role": "assistant",
            "content": "Doing both.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "cancel_order", "arguments": '{"order_id":"A"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order_id": "B"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "cancelled"},
        {"role": "tool", "tool_call_id": "c2", "content": '{"status": "shipped"}'},
        {"role": "user", "content": "Thanks. And C?"},
    ]
    assert stub.requests[-1].headers["Authorization"] == f"Bearer {keys['OPENAI_API_KEY']}"  # type: ignore[index]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ({"tool": "cancel_order"}, {"type": "function", "function": {"name": "cancel_order"}}),
    ],
)
async def test_openai_tool_choice(
    choice: object, wire: object, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent("openai", stub, transport, tool_choice=choice)
    assert sent["tool_choice"] == wire


async def test_no_tools_sends_no_tool_fields(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai", stub, transport, parallel_tool_calls=True)
    stub.add(Reply.say("hello"))
    exchange = await provider.generate(ask(s, tools=[]))
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(exchange.request)


async def test_ids_are_filled_for_a_conversation_written_without_them(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai", stub, transport)
    messages = [
        Message(role="user", content="Look up A."),
        Message(
            role="assistant",
            tool_calls=[ToolCall(name="lookup_order", arguments={"order_id": "A"})],
        ),
        Message(role="tool", content="shipped"),
    ]
    stub.add(Reply.say("It shipped."))
    sent = (await provider.generate(ask(s, messages))).request
    call_id = sent["messages"][1]["tool_calls"][0]["id"]
    assert call_id
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"order_id": "A"}'
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": call_id, "content": "shipped"}


async def test_openrouter_routing(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    sent = await _sent(
        "openrouter",
        stub,
        transport,
        provider={"order": ["anthropic"], "allow_fallbacks": False},
        require_parameters=True,
        max_tokens=200,
        reasoning_effort="high",
    )
    assert stub.requests[-1].path == "/api/v1/chat/completions"
    assert sent["model"] == "anthropic/claude-sonnet-4.5"
    assert sent["provider"] == {
        "order": ["anthropic"],
        "allow_fallbacks": False,
        "require_parameters": True,
    }
    assert sent["max_tokens"] == 200
    assert sent["reasoning"] == {"effort": "high"}
    assert "reasoning_effort" not in sent


async def test_openrouter_error_inside_a_200_is_not_a_model_answer(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    from toolproof.providers import TransportError
    from toolproof.types import Outcome

    provider, s = provider_for("openrouter", stub, transport)
    stub.add(RawReply({"error": {"code": 502, "message": "upstream failed"}}))
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(s))
    assert info.value.outcome is Outcome.server_error
    assert info.value.status == 502


async def test_compatible_tolerates_missing_ids_and_object_arguments(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai-compatible", stub, transport)
    body = {
        "model": "qwen3-8b",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "function": {
                                "name": "lookup_order",
                                "arguments": {"order_id": "Nov\u00e1k"},
                            }
                        },
                        {"type": "function", "function": {"name": "cancel_order"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    stub.add(RawReply(body))
    exchange = await provider.generate(ask(s))
    first, second = exchange.response.tool_calls
    assert first.id is None
    assert first.raw_arguments == '{"order_id":"Novák"}'
    assert first.arguments == {"order_id": "Novák"}
    assert second.arguments is None and second.parse_error
    assert exchange.response.text is None
    assert exchange.response.raw == body


async def test_compatible_without_key_env_sends_no_key(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    settings = ModelSettings(base_url=stub.base_url("openai-compatible"), max_tokens=50)
    provider = create_provider("openai-compatible:llama3", settings, transport)
    stub.add(Reply.say("hi"))
    await provider.generate(ask(settings))
    assert "Authorization" not in stub.requests[-1].headers
    assert stub.requests[-1].body["max_tokens"] == 50
    assert "max_completion_tokens" not in stub.requests[-1].body


def test_compatible_needs_a_base_url(transport: HttpTransport) -> None:
    with pytest.raises(UserError, match="base_url"):
        create_provider("openai-compatible:llama3", ModelSettings(), transport)


def test_compatible_named_key_must_be_set(
    transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_VLLM_KEY", raising=False)
    settings = ModelSettings(base_url="http://127.0.0.1:9/v1", api_key_env="MY_VLLM_KEY")
    with pytest.raises(UserError, match="MY_VLLM_KEY"):
        create_provider("openai-compatible:llama3", settings, transport)


async def test_extra_body_is_merged_as_written(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent("openai", stub, transport, extra_body={"seed": 7, "service_tier": "flex"})
    assert sent["seed"] == 7 and sent["service_tier"] == "flex"


async def test_reported_model_version(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai", stub, transport)
    assert provider.model_version() is None
    body = {
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    stub.add(RawReply(body))
    exchange = await provider.generate(ask(s))
    assert exchange.response.model == "gpt-4.1-mini-2025-04-14"
    assert provider.model_version() == "gpt-4.1-mini-2025-04-14"
    assert exchange.response.stop_reason == "stop"


async def test_content_filter_is_a_refusal(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai", stub, transport)
    body = {
        "model": "gpt-4.1-mini",
        "choices": [
            {"message": {"role": "assistant", "content": None}, "finish_reason": "content_filter"}
        ],
    }
    stub.add(RawReply(body))
    response = (await provider.generate(ask(s))).response
    assert response.refusal == "content_filter"
    assert response.stop_reason == "content_filter"

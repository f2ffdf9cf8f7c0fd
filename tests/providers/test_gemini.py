"""The Gemini generateContent wire format."""

from __future__ import annotations

from typing import Any

import pytest
from providers_support import ask, multi_turn, provider_for

from toolproof.errors import UserError
from toolproof.providers import HttpTransport, ModelSettings, create_provider
from toolproof.testing import Call, RawReply, Reply, StubServer
from toolproof.types import Message


async def _sent(stub: StubServer, transport: HttpTransport, **settings: object) -> dict[str, Any]:
    provider, s = provider_for("gemini", stub, transport, **settings)
    stub.add(Reply.say("ok"))
    exchange = await provider.generate(ask(s, multi_turn()))
    return exchange.request  # type: ignore[no-any-return]


async def test_payload_and_headers(
    stub: StubServer, transport: HttpTransport, keys: dict[str, str]
) -> None:
    sent = await _sent(stub, transport, temperature=0.0, max_tokens=256)
    req = stub.requests[-1]
    assert req.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert req.headers["x-goog-api-key"] == keys["GEMINI_API_KEY"]
    assert "model" not in sent
    assert sent["systemInstruction"] == {"parts": [{"text": "You are a support agent."}]}
    (tools,) = sent["tools"]
    lookup, cancel = tools["functionDeclarations"]
    assert lookup == {
        "name": "lookup_order",
        "description": "Look up an order by its ID.",
        "parametersJsonSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    }
    assert "parameters" not in cancel
    assert sent["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert sent["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 256}


async def test_contents(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    sent = await _sent(stub, transport)
    assert sent["contents"] == [
        {"role": "user", "parts": [{"text": "Cancel A and look up B."}]},
        {
            "role": "model",
            "parts": [
                {"text": "Doing both."},
                {
                    "functionCall": {"name": "cancel_order", "args": {"order_id": "A"}, "id": "c1"},
                    "thoughtSignature": "skip_thought_signature_validator",
                },
                {"functionCall": {"name": "lookup_order", "args": {"order_id": "B"}, "id": "c2"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "cancel_order",
                        "response": {"result": "cancelled"},
                        "id": "c1",
                    }
                },
                {
                    "functionResponse": {
                        "name": "lookup_order",
                        "response": {"status": "shipped"},
                        "id": "c2",
                    }
                },
            ],
        },
        {"role": "user", "parts": [{"text": "Thanks. And C?"}]},
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        ({"tool": "cancel_order"}, {"mode": "ANY", "allowedFunctionNames": ["cancel_order"]}),
    ],
)
async def test_tool_choice(
    choice: object, wire: object, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent(stub, transport, tool_choice=choice)
    assert sent["toolConfig"] == {"functionCallingConfig": wire}


async def test_thought_signatures_go_back_with_their_calls(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("gemini", stub, transport)
    stub.add(
        Reply(
            calls=(Call("lookup_order", {"order_id": "A"}), Call("lookup_order", {"order_id": "B"}))
        )
    )
    first = await provider.generate(ask(s))
    signature = first.response.raw["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    calls = first.response.tool_calls
    history = [
        Message(role="user", content="Where are A and B?"),
        Message(role="assistant", tool_calls=calls),
        Message(role="tool", name="lookup_order", content="shipped"),
        Message(role="tool", name="lookup_order", content="lost"),
    ]
    stub.add(Reply.say("A shipped, B is lost."))
    sent = (await provider.generate(ask(s, history))).request
    model_parts = sent["contents"][1]["parts"]
    assert model_parts[0]["thoughtSignature"] == signature
    assert "thoughtSignature" not in model_parts[1]
    assert "id" not in model_parts[0]["functionCall"]  # Gemini gave no ids, none are invented
    responses = [p["functionResponse"] for p in sent["contents"][2]["parts"]]
    assert [r["name"] for r in responses] == ["lookup_order", "lookup_order"]
    assert [r["response"] for r in responses] == [{"result": "shipped"}, {"result": "lost"}]


async def test_safety_finish_is_a_refusal(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("gemini", stub, transport)
    stub.add(Reply.refuse())
    response = (await provider.generate(ask(s))).response
    assert response.refusal == "SAFETY"
    assert response.stop_reason == "SAFETY"


async def test_blocked_prompt_is_a_refusal(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("gemini", stub, transport)
    body = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "modelVersion": "gemini-2.5-flash",
    }
    stub.add(RawReply(body))
    response = (await provider.generate(ask(s))).response
    assert response.refusal == "PROHIBITED_CONTENT"
    assert response.tool_calls == []


async def test_response_parts(stub: StubServer, transport: HttpTransport, keys: object) -> None:
    provider, s = provider_for("gemini", stub, transport)
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "thinking...", "thought": True},
                        {"text": "Checking "},
                        {"text": "now."},
                        {"functionCall": {"name": "lookup_order", "args": {"order_id": "ORD-1"}}},
                        {"functionCall": {"name": "list_orders"}},
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 40,
            "candidatesTokenCount": 10,
            "thoughtsTokenCount": 5,
        },
        "modelVersion": "gemini-2.5-flash-001",
    }
    stub.add(RawReply(body))
    response = (await provider.generate(ask(s))).response
    assert response.text == "Checking now."
    first, second = response.tool_calls
    assert first.raw_arguments == '{"order_id":"ORD-1"}'
    assert second.name == "list_orders" and second.arguments == {}
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (40, 15)
    assert response.model == "gemini-2.5-flash-001"


def test_google_api_key_is_accepted(
    transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    create_provider("gemini:gemini-2.5-flash", ModelSettings(), transport)


def test_missing_key_names_both_variables(
    transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(UserError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        create_provider("gemini:gemini-2.5-flash", ModelSettings(), transport)


def test_parallel_calls_cannot_be_turned_off(transport: HttpTransport, keys: object) -> None:
    with pytest.raises(UserError, match="parallel"):
        create_provider(
            "gemini:gemini-2.5-flash", ModelSettings(parallel_tool_calls=False), transport
        )


async def test_reasoning_effort_is_a_thinking_level(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    sent = await _sent(stub, transport, reasoning_effort="low")
    assert sent["generationConfig"] == {"thinkingConfig": {"thinkingLevel": "low"}}


def test_reasoning_effort_none_is_a_user_error(transport: HttpTransport, keys: object) -> None:
    with pytest.raises(UserError, match="reasoning_effort"):
        create_provider("gemini:gemini-3-pro", ModelSettings(reasoning_effort="none"), transport)

"""Helpers for the provider tests: fake keys, tools, and providers pointed at a stub server."""

from __future__ import annotations

from typing import Any

from toolproof.providers import HttpTransport, ModelSettings, Provider, ProviderRequest
from toolproof.providers import create_provider as _create
from toolproof.testing import StubServer
from toolproof.types import Message, Tool, ToolCall

FAKE_KEYS = {
    "OPENAI_API_KEY": "sk-test-openai-0123456789secret",
    "OPENROUTER_API_KEY": "sk-or-test-0123456789secret",
    "ANTHROPIC_API_KEY": "sk-ant-test-0123456789secret",
    "GEMINI_API_KEY": "AIza-test-0123456789secret",
    "LOCAL_SERVER_KEY": "local-test-0123456789secret",
}

#: Every HTTP provider, with the model it is tried with.
SPECS = {
    "openai": "openai:gpt-4.1-mini",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.5",
    "openai-compatible": "openai-compatible:qwen3-8b",
    "openai-responses": "openai-responses:gpt-5-mini",
    "anthropic": "anthropic:claude-sonnet-4-5",
    "gemini": "gemini:gemini-2.5-flash",
}

#: Providers whose wire format carries arguments as text (so invalid JSON can arrive).
TEXT_ARGUMENT_PROVIDERS = ("openai", "openrouter", "openai-compatible", "openai-responses")

LOOKUP = Tool(
    name="lookup_order",
    description="Look up an order by its ID.",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
)
CANCEL = Tool(
    name="cancel_order",
    description="Cancel an order.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
    strict=True,
)
TOOLS = [LOOKUP, CANCEL]


def settings_for(name: str, stub: StubServer, **extra: Any) -> ModelSettings:
    """Settings that point provider ``name`` at the stub server."""
    extra.setdefault("timeout_s", 5.0)
    if name == "openai-compatible":
        extra.setdefault("api_key_env", "LOCAL_SERVER_KEY")
    return ModelSettings(base_url=stub.base_url(name), **extra)


def provider_for(
    name: str, stub: StubServer, transport: HttpTransport, **extra: Any
) -> tuple[Provider, ModelSettings]:
    settings = settings_for(name, stub, **extra)
    return _create(SPECS[name], settings, transport), settings


def ask(
    settings: ModelSettings,
    messages: list[Message] | None = None,
    tools: list[Tool] | None = None,
) -> ProviderRequest:
    if messages is None:
        messages = [
            Message(role="system", content="You are a support agent."),
            Message(role="user", content="Where is order ORD-1?"),
        ]
    return ProviderRequest(
        model="unused",
        messages=messages,
        tools=TOOLS if tools is None else tools,
        settings=settings,
    )


def multi_turn() -> list[Message]:
    """A conversation with two parallel calls answered by two tool results, then a user turn."""
    return [
        Message(role="system", content="You are a support agent."),
        Message(role="user", content="Cancel A and look up B."),
        Message(
            role="assistant",
            content="Doing both.",
            tool_calls=[
                ToolCall(
                    id="c1",
                    name="cancel_order",
                    raw_arguments='{"order_id":"A"}',
                    arguments={"order_id": "A"},
                ),
                ToolCall(
                    id="c2",
                    name="lookup_order",
                    raw_arguments='{"order_id": "B"}',
                    arguments={"order_id": "B"},
                ),
            ],
        ),
        Message(role="tool", tool_call_id="c1", name="cancel_order", content="cancelled"),
        Message(
            role="tool",
            tool_call_id="c2",
            name="lookup_order",
            content='{"status": "shipped"}',
            is_error=False,
        ),
        Message(role="user", content="Thanks. And C?"),
    ]

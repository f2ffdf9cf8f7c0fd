"""The real local model, end to end: server started, three prompts, server stopped.

Runs only where ``toolproof[local]`` is installed (the llama.cpp runtime and
the model's parts); it is skipped otherwise. No network: the server listens on
127.0.0.1. About 10-30 s on two CPU cores.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolproof._shared.install_hint import install_hint
from toolproof.errors import UserError
from toolproof.providers import HttpTransport, ModelSettings, ProviderRequest, create_provider
from toolproof.providers._local import LocalProvider, local_model_available
from toolproof.types import Message, Response, Tool

pytestmark = pytest.mark.skipif(
    not local_model_available(),
    reason=f"the local model is not installed ({install_hint('local')})",
)

ORDER_ID = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "description": "e.g. ORD-104821"}},
    "required": ["order_id"],
}
TOOLS = [
    Tool(
        name="lookup_order", description="Get one order by its exact order ID.", parameters=ORDER_ID
    ),
    Tool(
        name="cancel_order",
        description="Cancel an order that has not shipped.",
        parameters=ORDER_ID,
    ),
]
SETTINGS = ModelSettings(temperature=0, max_tokens=128, timeout_s=120)


def _request(prompt: str) -> ProviderRequest:
    messages = [
        Message(role="system", content="You are the support assistant of an online shop."),
        Message(role="user", content=prompt),
    ]
    return ProviderRequest(
        model="qwen2.5-coder-0.5b-instruct", messages=messages, tools=TOOLS, settings=SETTINGS
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_three_prompts_through_the_real_model() -> None:
    async with HttpTransport() as transport:
        provider = create_provider("local:qwen2.5-coder-0.5b-instruct", SETTINGS, transport)
        assert isinstance(provider, LocalProvider)
        try:
            answers: list[Response] = []
            for prompt in (
                "Where is order ORD-104821?",
                "Hello! What can you help me with?",
                "What is 2 + 2? Answer in one word.",
            ):
                exchange = await provider.generate(_request(prompt))
                assert exchange.request["messages"][-1]["content"] == prompt
                answers.append(exchange.response)
            assert provider.server is not None
            pid = provider.server.pid
            assert pid is not None and _alive(pid)
        finally:
            await provider.aclose()
    assert not _alive(pid), "the server outlived aclose()"

    for answer in answers:
        assert answer.text or answer.tool_calls, answer
        assert answer.usage is not None and answer.usage.output_tokens
        assert answer.raw is not None
        assert all(call.name in {"lookup_order", "cancel_order"} for call in answer.tool_calls)
    lookup = answers[0]
    assert [c.name for c in lookup.tool_calls] == ["lookup_order"], lookup
    assert lookup.tool_calls[0].arguments == {"order_id": "ORD-104821"}
    assert provider.model_version() is not None
    assert "1d9614638d18024d" in (provider.model_version() or "")


async def test_a_broken_gguf_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 64)
    async with HttpTransport() as transport:
        provider = create_provider(f"local:{bad}", SETTINGS, transport)
        try:
            with pytest.raises(UserError, match=r"exited with code 1(.|\n)*failed to load model"):
                await provider.generate(_request("Where is order ORD-104821?"))
        finally:
            await provider.aclose()

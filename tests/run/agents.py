"""Agents used as --target in tests."""

from __future__ import annotations

import asyncio
from typing import Any

from toolproof.providers import ProviderRequest


def openai_style(request: ProviderRequest) -> dict[str, Any]:
    prompt = request.messages[-1].content or ""
    order = prompt.split()[-1].rstrip("?")
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": f'{{"order_id": "{order}"}}'},
            }
        ],
    }


async def anthropic_style(request: ProviderRequest) -> list[dict[str, Any]]:
    await asyncio.sleep(0)
    return [
        {"type": "text", "text": "Looking it up."},
        {"type": "tool_use", "id": "tu_1", "name": "lookup_order", "input": {"order_id": "X"}},
    ]


def crashes(request: ProviderRequest) -> Any:
    raise ValueError("agent bug")


def nonsense(request: ProviderRequest) -> Any:
    return 42


async def slow(request: ProviderRequest) -> str:
    await asyncio.sleep(5)
    return "late"


CALLS = {"n": 0}


def counted(request: ProviderRequest) -> str:
    CALLS["n"] += 1
    return "ok"


async def echo_slow(request: ProviderRequest) -> dict[str, Any]:
    """Answers right after a short wait, deterministically: for kill-and-resume tests."""
    await asyncio.sleep(0.02)
    return openai_style(request)


#: What ``current_attempt()`` said inside an agent: (case, attempt from the request) → info.
SEEN: dict[tuple[str, int, str], Any] = {}


def _deeper(kind: str, request: ProviderRequest) -> None:
    """Code of the agent that does not see the request (a tool wrapper, its logging)."""
    from toolproof.run import current_attempt

    SEEN[(kind, request.attempt, request.case_id or "")] = current_attempt()


def asks_attempt(request: ProviderRequest) -> dict[str, Any]:
    _deeper("sync", request)
    return {"role": "assistant", "content": "ok"}


async def asks_attempt_async(request: ProviderRequest) -> dict[str, Any]:
    await asyncio.sleep(0)
    _deeper("async", request)
    return {"role": "assistant", "content": "ok"}


async def talk_slow(request: ProviderRequest) -> dict[str, Any]:
    """A conversation agent: answers each user message in text after a short wait."""
    await asyncio.sleep(0.03)
    said = request.messages[-1].content or ""
    return {"role": "assistant", "content": f"Noted: {said[:40]}. Anything else?"}

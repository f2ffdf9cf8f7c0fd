from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.providers import Exchange, Provider, ProviderRequest, TransportError
from toolproof.run import current_attempt
from toolproof.suite import load_suite
from toolproof.types import Outcome, Response, Suite, ToolCall

SUITE = {
    "format": 1,
    "suite": "mini",
    "system": "You help with orders.",
    "tools": [
        {
            "name": "lookup_order",
            "description": "Get one order by ID.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        }
    ],
    "cases": [
        {
            "id": f"case-{i}",
            "prompt": f"Where is order ORD-{i:06d}?",
            "expect": {"call": "lookup_order", "args": {"order_id": f"ORD-{i:06d}"}},
        }
        for i in range(6)
    ],
}


def write_suite(folder: Path, data: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data or SUITE, sort_keys=False), "utf-8")
    return path


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite")


@pytest.fixture
def suite(suite_path: Path) -> Suite:
    return load_suite(suite_path)


def right_answer(case_id: str) -> Response:
    number = int(case_id.split("-")[1])
    raw = f'{{"order_id": "ORD-{number:06d}"}}'
    return Response(tool_calls=[ToolCall(name="lookup_order", raw_arguments=raw)])


class FakeProvider(Provider):
    """A provider for runner tests: answers right, counts calls, can fail on demand."""

    name = "fake"

    def __init__(
        self,
        *,
        delay: float = 0.0,
        failures: dict[str, list[TransportError | Exception]] | None = None,
    ) -> None:
        self.delay = delay
        self.failures = {k: list(v) for k, v in (failures or {}).items()}
        self.calls: list[tuple[str, int]] = []
        self.in_flight = 0
        self.peak = 0

    async def generate(self, request: ProviderRequest) -> Exchange:
        assert request.case_id is not None
        assert current_attempt() is not None  # still set for user agents
        case_id = request.case_id
        self.calls.append((case_id, request.attempt))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            pending = self.failures.get(case_id)
            if pending:
                raise pending.pop(0)
        finally:
            self.in_flight -= 1
        sent = {"messages": len(request.messages), "tools": [t.name for t in request.tools]}
        return Exchange(request=sent, response=right_answer(case_id))


def rate_limited(retry_after: float | None = None) -> TransportError:
    return TransportError(Outcome.rate_limited, "HTTP 429", status=429, retry_after=retry_after)


def server_error() -> TransportError:
    return TransportError(Outcome.server_error, "HTTP 500", status=500, body="boom")

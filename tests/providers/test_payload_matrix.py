"""The exact bytes each HTTP adapter sends, for a matrix of generation settings.

A local server on 127.0.0.1 records every request body as bytes. Each cell of
the matrix (provider × settings × with or without tools) is compared with
``data/payload_matrix.json``, recorded from the adapters as they were before the
settings-to-payload code was shared; a refused setting is recorded as its
error message. Run this file as a script to record the table again::

    python tests/providers/test_payload_matrix.py --write
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from providers_support import FAKE_KEYS, SPECS, TOOLS, multi_turn

from toolproof.errors import UserError
from toolproof.providers import HttpTransport, ModelSettings, ProviderRequest, create_provider

GOLDEN = Path(__file__).parent / "data" / "payload_matrix.json"

#: A minimal valid answer per endpoint, so that every request completes.
_ANSWERS: dict[str, Any] = {
    "chat/completions": {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]},
    "responses": {"output": [], "status": "completed"},
    "messages": {"type": "message", "content": [{"type": "text", "text": "ok"}]},
    "generateContent": {"candidates": [{"content": {"parts": [{"text": "ok"}]}}]},
}

_CHOICES: list[Any] = ["auto", "required", "none", {"tool": "lookup_order"}]

_EFFORTS = ["none", "minimal", "low", "medium", "high"]


def _cells() -> dict[str, dict[str, Any]]:
    """Named settings, each a dict of ModelSettings fields (without the base URL)."""
    cells: dict[str, dict[str, Any]] = {"defaults": {}}
    cells["temperature"] = {"temperature": 0.3}
    cells["temperature-zero"] = {"temperature": 0.0}
    cells["seed"] = {"seed": 7}
    cells["max-tokens"] = {"max_tokens": 256}
    for effort in _EFFORTS:
        cells[f"effort-{effort}"] = {"reasoning_effort": effort}
    for choice in _CHOICES:
        for parallel in (None, True, False):
            name = f"choice-{json.dumps(choice, sort_keys=True)}-parallel-{parallel}"
            cells[name] = {"tool_choice": choice, "parallel_tool_calls": parallel}
    cells["routing"] = {"provider": {"order": ["a", "b"], "allow_fallbacks": False}}
    cells["routing-empty"] = {"provider": {}}
    cells["require-parameters"] = {"require_parameters": True}
    cells["require-parameters-false"] = {"require_parameters": False}
    cells["routing-and-require"] = {"provider": {"order": ["a"]}, "require_parameters": True}
    cells["extra-body"] = {"extra_body": {"top_p": 0.5, "stop": ["\n"], "temperature": 1.5}}
    cells["everything"] = {
        "temperature": 0.7,
        "seed": 11,
        "max_tokens": 512,
        "reasoning_effort": "low",
        "tool_choice": {"tool": "cancel_order"},
        "parallel_tool_calls": True,
        "provider": {"order": ["a"]},
        "require_parameters": True,
        "extra_body": {"top_p": 0.9},
    }
    return cells


class _Recorder:
    """A local server that answers every POST and keeps the exact bytes of each body."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        self.bodies.append(await request.read())
        for suffix, answer in _ANSWERS.items():
            if request.path.endswith(suffix):
                return web.json_response(answer)
        return web.json_response({"error": {"message": "unknown endpoint"}}, status=404)

    async def __aenter__(self) -> _Recorder:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


async def _one(
    recorder: _Recorder, transport: HttpTransport, name: str, fields: dict[str, Any], tools: bool
) -> str:
    """The body sent for one cell, as text, or ``refused: MESSAGE``."""
    base = recorder.url if name == "gemini" else recorder.url + "/v1"
    key_env = {"api_key_env": "LOCAL_SERVER_KEY"} if name == "openai-compatible" else {}
    settings = ModelSettings(base_url=base, timeout_s=5.0, **key_env, **fields)
    try:
        provider = create_provider(SPECS[name], settings, transport)
        request = ProviderRequest(
            model="unused",
            messages=multi_turn(),
            tools=TOOLS if tools else [],
            settings=settings,
        )
        before = len(recorder.bodies)
        await provider.generate(request)
    except UserError as exc:
        return f"refused: {exc}"
    assert len(recorder.bodies) == before + 1
    return recorder.bodies[-1].decode("utf-8")


async def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    async with _Recorder() as recorder, HttpTransport(max_connections=4) as transport:
        for name in SPECS:
            for cell, fields in _cells().items():
                for tools in (True, False):
                    key = f"{name} | {cell} | {'tools' if tools else 'no tools'}"
                    table[key] = await _one(recorder, transport, name, fields, tools)
    return table


@pytest.fixture
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
async def table(_keys: None) -> AsyncIterator[dict[str, str]]:
    yield await _table()


async def test_every_cell_sends_the_recorded_bytes(table: dict[str, str]) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(table) == sorted(golden)
    differing = [key for key in table if table[key] != golden[key]]
    assert differing == [], differing[:5]


async def test_the_matrix_exercises_every_setting(table: dict[str, str]) -> None:
    """The table is not vacuous: settings reach the body, and some are refused."""
    sent = {k: v for k, v in table.items() if not v.startswith("refused: ")}
    refused = {k: v for k, v in table.items() if v.startswith("refused: ")}
    assert len(sent) > 300
    assert any("anthropic" in k and "effort-none" in k for k in refused)
    assert any("gemini" in k and "parallel-False" in k for k in refused)
    assert '"seed":7' in sent["openai | seed | tools"].replace(" ", "")
    assert sent["openai | seed | tools"] != sent["openai | defaults | tools"]
    assert sent["gemini | max-tokens | tools"] != sent["gemini | defaults | tools"]
    assert "disable_parallel_tool_use" in sent['anthropic | choice-"auto"-parallel-False | tools']


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/providers/test_payload_matrix.py --write")
    import os

    os.environ.pop("GOOGLE_API_KEY", None)
    os.environ.update(FAKE_KEYS)
    GOLDEN.parent.mkdir(exist_ok=True)
    result = asyncio.run(_table())
    GOLDEN.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(result)} cells to {GOLDEN}")

"""The exact bytes each HTTP adapter sends, for a matrix of generation settings.

A local server on 127.0.0.1 records every request body as bytes. Each cell of
the matrix (provider × settings × with or without tools) is compared with
``data/payload_matrix.json``, recorded from the adapters as they were before the
settings-to-payload code was shared: the SHA-256 of the exact bytes, and,
readable, the body without the conversation and the tools (the same in every cell).
A refused setting is recorded as its error message. Run this file as a script
to record the table again::

    python tests/providers/test_payload_matrix.py --write
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from providers_support import FAKE_KEYS, SPECS, TOOLS, multi_turn

from toolproof.errors import UserError
from toolproof.providers import (
    HttpTransport,
    ModelSettings,
    ProviderRequest,
    Transport,
    create_provider,
)

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
    recorder: _Recorder, transport: Transport, name: str, fields: dict[str, Any], tools: bool
) -> str:
    """The body sent for one cell, as text, or ``refused: MESSAGE``."""
    base = recorder.url if name == "gemini" else recorder.url + "/v1"
    given: dict[str, Any] = {"base_url": base, "timeout_s": 5.0, **fields}
    if name == "openai-compatible":
        given["api_key_env"] = "LOCAL_SERVER_KEY"
    settings = ModelSettings.model_validate(given)
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


#: The conversation and the tools, in each wire format: the same in every cell (with tools),
#: so only their bytes are kept (in the hash).
_SAME = ("messages", "input", "contents", "system", "systemInstruction", "tools")


def _entry(sent: str) -> Any:
    """A cell as the table keeps it: the refusal, or the body's hash and its settings."""
    if sent.startswith("refused: "):
        return sent
    body = json.loads(sent)
    rest = {k: v for k, v in body.items() if k not in _SAME}
    return {"sha256": hashlib.sha256(sent.encode("utf-8")).hexdigest(), "fields": rest}


async def _table() -> dict[str, Any]:
    table: dict[str, Any] = {}
    async with _Recorder() as recorder, HttpTransport(max_connections=4) as transport:
        for name in SPECS:
            for cell, fields in _cells().items():
                for tools in (True, False):
                    key = f"{name} | {cell} | {'tools' if tools else 'no tools'}"
                    table[key] = _entry(await _one(recorder, transport, name, fields, tools))
    return table


@pytest.fixture
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)


#: The table, made once for the tests of this module.
_MADE: dict[str, Any] = {}


@pytest.fixture
async def table(_keys: None) -> AsyncIterator[dict[str, Any]]:
    if not _MADE:
        _MADE.update(await _table())
    yield dict(_MADE)


async def test_every_cell_sends_the_recorded_bytes(table: dict[str, Any]) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(table) == sorted(golden)
    for key in table:
        assert table[key] == golden[key], key  # the fields differ, or only the bytes


async def test_the_matrix_exercises_every_setting(table: dict[str, Any]) -> None:
    """The table is not vacuous: settings reach the body, and some are refused."""
    sent = {k: v["fields"] for k, v in table.items() if not isinstance(v, str)}
    refused = {k: v for k, v in table.items() if isinstance(v, str)}
    assert len(sent) > 300 and len(refused) > 5
    assert all(v.startswith("refused: provider ") for v in refused.values())
    assert any("anthropic" in k and "effort-none" in k for k in refused)
    assert any("gemini" in k and "parallel-False" in k for k in refused)
    assert sent["openai | seed | tools"]["seed"] == 7
    assert "seed" not in sent["openai | defaults | tools"]
    assert sent["gemini | max-tokens | tools"]["generationConfig"] == {"maxOutputTokens": 256}
    choice = sent['anthropic | choice-"auto"-parallel-False | tools']["tool_choice"]
    assert choice == {"type": "auto", "disable_parallel_tool_use": True}
    assert sent["openrouter | routing-and-require | tools"]["provider"] == {
        "order": ["a"],
        "require_parameters": True,
    }


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

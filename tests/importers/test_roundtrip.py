"""Import, send through each provider adapter to the stub server, and read the wire back.

The tools on the wire must be the source's tools: exactly the source JSON when
the adapter speaks the source's own format, and the same name, description and
schema through every other adapter.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolproof.importers import import_tools, read_definitions
from toolproof.providers import HttpTransport, ModelSettings, ProviderRequest, create_provider
from toolproof.suite._yaml import load_yaml
from toolproof.testing import Reply, StubServer
from toolproof.types import Message, SuiteTool

DATA = Path(__file__).parent / "data"

#: adapter -> (model spec, the format its wire speaks)
ADAPTERS = {
    "openai": ("openai:gpt-4.1-mini", "openai-chat"),
    "openai-responses": ("openai-responses:gpt-5-mini", "openai-responses"),
    "anthropic": ("anthropic:claude-sonnet-4-5", "anthropic"),
    "gemini": ("gemini:gemini-2.5-flash", "gemini"),
}
SOURCES = [
    "openai_chat.json",
    "openai_responses.json",
    "anthropic.yaml",
    "gemini.json",
    "gemini_json_schema.json",
    "mcp_tools_list.json",
]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "test-key-0123456789")


@pytest.fixture
async def stub() -> AsyncIterator[StubServer]:
    async with StubServer(default=Reply.say("ok")) as server:
        yield server


async def _wire(adapter: str, tools: list[SuiteTool], stub: StubServer) -> dict[str, Any]:
    spec, _ = ADAPTERS[adapter]
    settings = ModelSettings(base_url=stub.base_url(adapter), timeout_s=5.0)
    async with HttpTransport(max_connections=2) as transport:
        provider = create_provider(spec, settings, transport)
        await provider.generate(
            ProviderRequest(
                model="unused",
                messages=[Message(role="user", content="hi")],
                tools=[t.canonical() for t in tools],
                settings=settings,
            )
        )
    body: dict[str, Any] = stub.requests[-1].body
    return body


def _source(name: str) -> Any:
    data, _ = load_yaml((DATA / name).read_text(encoding="utf-8"), name)
    return data


@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.parametrize("name", SOURCES)
async def test_tools_on_the_wire_are_the_imported_tools(
    name: str, adapter: str, stub: StubServer
) -> None:
    imported = import_tools(str(DATA / name)).tools
    body = await _wire(adapter, imported, stub)
    back = read_definitions(body, "wire", ADAPTERS[adapter][1]).tools
    assert [(t.name, t.description, t.parameters) for t in back] == [
        (t.name, t.description, t.parameters) for t in imported
    ]
    if adapter in ("openai", "anthropic"):
        assert [t.strict for t in back] == [t.strict for t in imported]
    elif adapter == "openai-responses":  # always sends strict, true only when asked
        assert [t.strict for t in back] == [t.strict is True for t in imported]


@pytest.mark.parametrize(
    ("name", "adapter"),
    [
        ("openai_chat.json", "openai"),
        ("openai_responses.json", "openai-responses"),
        ("anthropic.yaml", "anthropic"),
    ],
)
async def test_same_format_wire_equals_the_source_exactly(
    name: str, adapter: str, stub: StubServer
) -> None:
    source = _source(name)
    body = await _wire(adapter, import_tools(str(DATA / name)).tools, stub)
    expected = source["tools"] if isinstance(source, dict) else source
    assert body["tools"] == expected


async def test_gemini_json_schema_wire_equals_the_source_exactly(stub: StubServer) -> None:
    source = _source("gemini_json_schema.json")
    body = await _wire("gemini", import_tools(str(DATA / "gemini_json_schema.json")).tools, stub)
    assert body["tools"] == [source]


async def test_gemini_subset_wire_is_its_json_schema_translation(stub: StubServer) -> None:
    source = _source("gemini.json")["tools"][0]["functionDeclarations"]
    body = await _wire("gemini", import_tools(str(DATA / "gemini.json")).tools, stub)
    sent = body["tools"][0]["functionDeclarations"]
    assert [(d["name"], d["description"]) for d in sent] == [
        (d["name"], d["description"]) for d in source
    ]
    assert sent[0]["parametersJsonSchema"] == {
        "type": "object",
        "properties": {
            "location": {
                "type": "string",
                "description": "City and country, e.g. Paris, France.",
                "examples": ["Paris, France"],
            },
            "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", None]},
        },
        "required": ["location"],
    }
    assert json.dumps(sent[1]["parametersJsonSchema"]).count('"null"') == 1

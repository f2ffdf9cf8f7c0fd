"""Finding providers through the toolproof.providers entry-point group."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from tests.subprocess_support import fresh_python

from toolproof.errors import UserError
from toolproof.providers import (
    Exchange,
    HttpTransport,
    ModelSettings,
    Provider,
    ProviderRequest,
    _registry,
    create_provider,
    provider_names,
)
from toolproof.providers._anthropic import AnthropicProvider
from toolproof.providers._gemini import GeminiProvider
from toolproof.providers._openai_chat import (
    OpenAIChatProvider,
    OpenAICompatibleProvider,
    OpenRouterProvider,
)
from toolproof.providers._openai_responses import OpenAIResponsesProvider
from toolproof.types import Response


class EchoProvider(Provider):
    """A third-party provider, registered only for this test."""

    name = "echo"

    def __init__(self, model: str, settings: ModelSettings, transport: HttpTransport) -> None:
        self.model = model

    async def generate(self, request: ProviderRequest) -> Exchange:
        return Exchange(request={}, response=Response(text=self.model))


def test_builtins_are_registered() -> None:
    names = provider_names()
    for name in (
        "openai",
        "openai-responses",
        "anthropic",
        "gemini",
        "openrouter",
        "openai-compatible",
    ):
        assert name in names


@pytest.mark.parametrize(
    ("spec", "cls", "model"),
    [
        ("openai:gpt-4.1-mini", OpenAIChatProvider, "gpt-4.1-mini"),
        ("openai-responses:gpt-5", OpenAIResponsesProvider, "gpt-5"),
        ("anthropic:claude-sonnet-4-5", AnthropicProvider, "claude-sonnet-4-5"),
        ("gemini:gemini-2.5-flash", GeminiProvider, "gemini-2.5-flash"),
        ("openrouter:qwen/qwen3-coder:free", OpenRouterProvider, "qwen/qwen3-coder:free"),
    ],
)
def test_spec_picks_the_class(
    spec: str, cls: type, model: str, transport: HttpTransport, keys: object
) -> None:
    provider = create_provider(spec, ModelSettings(), transport)
    assert type(provider) is cls
    assert provider.model == model  # type: ignore[attr-defined]


def test_compatible(transport: HttpTransport) -> None:
    settings = ModelSettings(base_url="http://127.0.0.1:8000/v1")
    provider = create_provider("openai-compatible:llama3.1:8b", settings, transport)
    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.model == "llama3.1:8b"


def test_unknown_name_lists_the_known_ones(transport: HttpTransport) -> None:
    with pytest.raises(UserError) as info:
        create_provider("mistral:large", ModelSettings(), transport)
    assert "'mistral'" in str(info.value)
    assert "anthropic" in str(info.value) and "openai-responses" in str(info.value)


@pytest.mark.parametrize("spec", ["gpt-4.1", "openai:", ":gpt-4.1", ""])
def test_malformed_spec(spec: str, transport: HttpTransport) -> None:
    with pytest.raises(UserError, match="NAME:MODEL"):
        create_provider(spec, ModelSettings(), transport)


def test_missing_key_names_the_variable(
    transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        create_provider("openai:gpt-4.1", ModelSettings(), transport)
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(UserError, match="OPENROUTER_API_KEY"):
        create_provider("openrouter:x/y", ModelSettings(), transport)


def test_third_party_entry_point(transport: HttpTransport, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _registry._entry_points()
    extra = EntryPoint(name="echo", value=f"{__name__}:EchoProvider", group="toolproof.providers")
    monkeypatch.setattr(_registry, "_entry_points", lambda: {**real, "echo": extra})
    assert "echo" in provider_names()
    provider = create_provider("echo:hello", ModelSettings(), transport)
    assert isinstance(provider, EchoProvider) and provider.model == "hello"


def test_entry_point_that_is_not_a_provider(
    transport: HttpTransport, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = EntryPoint(name="bad", value="json:dumps", group="toolproof.providers")
    monkeypatch.setattr(_registry, "_entry_points", lambda: {"bad": bad})
    with pytest.raises(UserError, match="not a toolproof Provider"):
        create_provider("bad:x", ModelSettings(), transport)


def test_provider_modules_are_imported_lazily() -> None:

    code = (
        "import sys, toolproof.providers as p; p.provider_names(); "
        "print(sorted(m for m in sys.modules if m.startswith(('toolproof.providers._op', "
        "'toolproof.providers._an', 'toolproof.providers._ge', 'aiohttp'))))"
    )
    out = fresh_python(code)
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", ["toolproof.providers", "toolproof.testing"])
def test_all_is_complete(module: str) -> None:
    import importlib
    from types import ModuleType

    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert getattr(mod, name) is not None
    public = {
        n
        for n, value in vars(mod).items()
        if not n.startswith("_") and n != "annotations" and not isinstance(value, ModuleType)
    }  # a submodule (testing.assertions) is an attribute once imported, not an export
    public -= {"TYPE_CHECKING", "Any"}
    assert public <= set(mod.__all__), public - set(mod.__all__)

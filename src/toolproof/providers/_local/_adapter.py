"""The ``local:`` provider: a GGUF model run by llama.cpp, behind the OpenAI-compatible adapter.

``local:`` runs the bundled Qwen2.5-Coder-0.5B-Instruct (see ``_gguf``);
``local:/path/model.gguf`` runs any GGUF file. The server runs in a child
process (see ``_server``); requests go to it through
:class:`OpenAICompatibleProvider` like to any other OpenAI-compatible endpoint.

Small models often print a tool call as JSON instead of emitting a structured
call; the adapter recovers such calls with ``_textcalls`` and marks them
``extracted_from_text``.

Environment:
    TOOLPROOF_CACHE           cache root; assembled models go to ``$TOOLPROOF_CACHE/models``
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
from collections.abc import Callable, Collection, Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from toolproof._shared.install_hint import install_hint
from toolproof.errors import UserError
from toolproof.providers._base import Exchange, ModelSettings, Provider, ProviderRequest
from toolproof.providers._local._gguf import (
    BUNDLED_MODEL,
    ModelMissingError,
    bundled_model_path,
    check_gguf_file,
    ensure_bundled_model,
    locate_parts,
)
from toolproof.providers._local._server import (
    RUNTIME,
    LocalServer,
    ServerOptions,
    default_threads,
)
from toolproof.providers._textcalls import extract_text_calls
from toolproof.types import Response

if TYPE_CHECKING:
    from toolproof.providers._transport import Transport

__all__ = ["LocalProvider", "local_model_available", "with_text_calls"]


def _runtime_installed() -> bool:
    return importlib.util.find_spec(RUNTIME) is not None


def local_model_available() -> bool:
    """True when the ``local`` extra is installed: the runtime and every part of the model."""
    if not _runtime_installed():
        return False
    if bundled_model_path().is_file():
        return True
    try:
        locate_parts()
    except ModelMissingError:
        return False
    return True


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(4 * 1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


class LocalProvider(Provider):
    """A GGUF model run by llama.cpp on this machine, with no key and no network."""

    name = "local"
    #: Deterministic and bounded by default, all overridable like any setting:
    #: greedy decoding with a fixed seed, 256 output tokens (what the README's
    #: figures were measured with), a request timeout above the slowest first
    #: answer measured on a busy 2-core machine, and a per-attempt budget so that
    #: a model looping over tool calls cannot hold a run for many minutes.
    default_settings: ClassVar[Mapping[str, Any]] = {
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": 256,
        "timeout_s": 300.0,
        "max_retries": 2,
        "attempt_seconds": 180.0,
        "attempt_tokens": 40_000,
    }

    def __init__(self, model: str, settings: ModelSettings, transport: Transport) -> None:
        _check_spec(model.strip())
        if not _runtime_installed():
            raise UserError(
                f"the local provider needs the {RUNTIME} package; "
                f"install the local model with: {install_hint('local')}"
            )
        self.model = model.strip()
        self.settings = settings
        self.transport = transport
        self.bundled = self.model in ("", BUNDLED_MODEL.name)
        # A missing part or file is a clear error now, not at the first request.
        if self.bundled and not bundled_model_path().is_file():
            locate_parts()
        elif not self.bundled:
            check_gguf_file(Path(self.model).expanduser())
        self.threads = default_threads()
        self.server: LocalServer | None = None
        self._inner: Provider | None = None
        self._version: str | None = None
        self._lock = asyncio.Lock()

    def _model_file(self) -> Path:
        runtime = f"{RUNTIME} {metadata.version(RUNTIME)}"
        if self.bundled:
            path = ensure_bundled_model()
            self._version = f"{BUNDLED_MODEL.filename} sha256:{BUNDLED_MODEL.sha256} ({runtime})"
            return path
        path = check_gguf_file(Path(self.model).expanduser())
        self._version = f"{path.name} sha256:{_file_sha256(path)} ({runtime})"
        return path

    def _options(self, model_path: Path) -> ServerOptions:
        # One slot, whatever the run's concurrency: concurrent requests queue in the
        # server and all reuse one cached prompt prefix (system prompt and tools).
        # Measured on 2 cores: 11 calls took 25.7 s with one slot, 53.4 s with two.
        return ServerOptions(model_path=model_path, threads=self.threads, slots=1)

    def _start(self) -> LocalServer:
        options = self._options(self._model_file())
        server = LocalServer(options.argv(), start_timeout_s=options.start_timeout_s)
        server.start()
        return server

    async def _adapter(self) -> Provider:
        async with self._lock:
            if self._inner is None:
                self.server = await asyncio.to_thread(self._start)
                self._inner = self._make_adapter(self.server)
            return self._inner

    def _make_adapter(self, server: LocalServer) -> Provider:
        from toolproof.providers._openai_chat import OpenAICompatibleProvider

        assert server.base_url is not None
        settings = self.settings.model_copy(
            update={"base_url": server.base_url + "/v1", "api_key_env": None}
        )
        adapter: Provider = OpenAICompatibleProvider(self.model_id, settings, self.transport)
        return adapter

    @property
    def model_id(self) -> str:
        return BUNDLED_MODEL.name if self.bundled else Path(self.model).name

    async def prepare(self, note: Callable[[str], None]) -> None:
        """Assemble or verify the model and start the server, saying so."""
        if self._inner is not None:
            return
        note("starting the model server and loading the model…")
        await self._adapter()
        loaded = self.server.load_seconds if self.server is not None else None
        took = f" in {loaded:.0f} s" if loaded is not None else ""
        note(f"model loaded{took}; the first answer reads the prompt and tools (slowest)…")

    async def generate(self, request: ProviderRequest) -> Exchange:
        adapter = await self._adapter()
        exchange = await adapter.generate(request)
        exchange.response = with_text_calls(exchange.response, [t.name for t in request.tools])
        return exchange

    async def aclose(self) -> None:
        server, self.server = self.server, None
        self._inner = None
        if server is not None:
            await asyncio.to_thread(server.stop)

    def model_version(self) -> str | None:
        return self._version


def _check_spec(model: str) -> None:
    """``local:`` takes nothing, the bundled model's name, or a path to a .gguf file."""
    if model in ("", BUNDLED_MODEL.name) or model.endswith(".gguf") or "/" in model:
        return
    if Path(model).expanduser().is_file():
        return
    raise UserError(
        f"local:{model} names no model: 'local:' takes nothing (the bundled model), "
        f"'local:{BUNDLED_MODEL.name}' (the same), or a path to a GGUF file "
        "('local:/models/my-model.gguf')"
    )


def with_text_calls(response: Response, tools: Collection[str]) -> Response:
    """The response with the calls it printed as text recovered, when it has no structured ones."""
    if response.tool_calls or not response.text:
        return response
    found = extract_text_calls(response.text, tools)
    if not found.calls:
        return response
    return response.model_copy(update={"tool_calls": found.calls, "text": found.text})

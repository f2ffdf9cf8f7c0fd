"""The response cache: one small JSON file per (fingerprint, slot), sharded.

The cache lives in the user's cache folder by default
(``$TOOLPROOF_CACHE/responses``, else ``$XDG_CACHE_HOME/toolproof/responses``,
else ``~/.cache/toolproof/responses``), never in the checkout: suite files and
records come from pull requests, and a pull request that could write cache
entries could make a failing model pass without a call. Outside the checkout,
only toolproof writes entries, and only with answers it received. (Signing
entries with a per-machine key would also stop forgery, but it adds a key to
create, keep and rotate, and a cache inside the checkout would still be
deleted or bloated by a pull request. ``--cache-dir`` can still point anywhere,
by the user's own choice.)

A fingerprint is the sha256 of the canonical request (messages and tools),
the model spec, and the settings that change what the model generates. Rate
limits, concurrency, timeouts and retries do not. Repeat ``i`` of a case uses
slot ``i``, so repeats stay separate calls. Files are written to a temporary
name and renamed, so several runs may share one cache safely. Only the
payload sent (which never holds credentials) and the answer are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from toolproof._shared.json_text import dump_model
from toolproof._shared.loaded_keys import redactor
from toolproof.providers import Exchange, ModelSettings, ProviderRequest
from toolproof.providers._base import GENERATION_FIELDS
from toolproof.types import Message, Response, Tool

__all__ = [
    "GENERATION_FIELDS",
    "Fingerprinter",
    "ResponseCache",
    "default_cache_dir",
    "fingerprint",
]


CACHE_FORMAT = "toolproof.cache/1"



def default_cache_dir() -> Path:
    """The user cache folder for answers (see the module docstring); never the checkout."""
    root = os.environ.get("TOOLPROOF_CACHE")
    if root:
        return Path(root).expanduser() / "responses"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "toolproof" / "responses"


def fingerprint(spec: str, request: ProviderRequest) -> str:
    """sha256 of the canonical request, the model spec and the generation settings."""
    return Fingerprinter(spec, request.settings)(request)


class Fingerprinter:
    """:func:`fingerprint` for one target, with the settings and tool parts hashed once."""

    def __init__(self, spec: str, settings: ModelSettings) -> None:
        self._head = _dumps({"spec": spec, "settings": _generation_settings(settings)})
        self._tools: dict[int, tuple[list[Tool], str]] = {}

    def __call__(self, request: ProviderRequest) -> str:
        entry = self._tools.get(id(request.tools))
        if entry is None or entry[0] is not request.tools:
            entry = (request.tools, _dumps(_tools_part(request.tools)))
            self._tools[id(request.tools)] = entry
        messages = _dumps(_messages_part(request.messages))
        blob = f'{{"head":{self._head},"tools":{entry[1]},"messages":{messages}}}'
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _tools_part(tools: list[Tool]) -> list[Any]:
    return [t.model_dump(mode="json", exclude_defaults=True) for t in tools]


def _messages_part(messages: list[Message]) -> list[Any]:
    return [m.model_dump(mode="json", exclude_defaults=True) for m in messages]


def _generation_settings(settings: ModelSettings) -> dict[str, Any]:
    dumped = settings.model_dump(mode="json", include=set(GENERATION_FIELDS), exclude_none=True)
    return dumped


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = CACHE_FORMAT
    key: str
    slot: int
    request: Any = None
    response: Response


class ResponseCache:
    """Answers already received, keyed by fingerprint and slot."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, key: str, slot: int) -> Path:
        return self.root / key[:2] / f"{key}-{slot}.json"

    def get(self, key: str, slot: int) -> Exchange | None:
        """The cached exchange, or ``None`` (a damaged entry counts as a miss)."""
        try:
            data = self._path(key, slot).read_bytes()
            entry = _Entry.model_validate_json(data)
        except (OSError, ValidationError):
            return None
        return Exchange(request=entry.request, response=entry.response)

    def put(self, key: str, slot: int, exchange: Exchange) -> None:
        """Store an answer atomically; a failure to cache never fails the run."""
        path = self._path(key, slot)
        entry = _Entry(key=key, slot=slot, request=exchange.request, response=exchange.response)
        entry = redactor().model(entry)  # never a loaded API key on disk
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "wb") as fh:
                fh.write(dump_model(entry, exclude_none=True).encode())
            os.replace(tmp, path)
        except OSError:
            return

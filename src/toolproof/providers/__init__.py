"""Model providers: one module each, behind one small async interface.

``HttpTransport`` is imported on first use, so that importing this package
(and starting the command line) does not pay for the HTTP client; so are
``TextEmbedder`` and ``load_embedder``, the sentence embeddings of the
``semantic`` matcher.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolproof.providers._base import (
    Exchange,
    ModelSettings,
    Provider,
    ProviderRequest,
    ToolChoice,
    TransportError,
)
from toolproof.providers._registry import create_provider, provider_names
from toolproof.providers._transport import HttpRequest, HttpResponse, Transport

if TYPE_CHECKING:
    from toolproof.providers._embedding import TextEmbedder, load_embedder
    from toolproof.providers._http import HttpTransport

__all__ = [
    "Exchange",
    "HttpRequest",
    "HttpResponse",
    "HttpTransport",
    "ModelSettings",
    "Provider",
    "ProviderRequest",
    "TextEmbedder",
    "ToolChoice",
    "Transport",
    "TransportError",
    "create_provider",
    "load_embedder",
    "provider_names",
]


def __getattr__(name: str) -> Any:
    if name == "HttpTransport":
        from toolproof.providers._http import HttpTransport

        return HttpTransport
    if name in ("TextEmbedder", "load_embedder"):
        from toolproof.providers import _embedding

        return getattr(_embedding, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

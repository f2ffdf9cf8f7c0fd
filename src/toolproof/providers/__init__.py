"""Model providers: one module each, behind one small async interface."""

from toolproof.providers._base import (
    Exchange,
    ModelSettings,
    Provider,
    ProviderRequest,
    ToolChoice,
    TransportError,
)

__all__ = [
    "Exchange",
    "ModelSettings",
    "Provider",
    "ProviderRequest",
    "ToolChoice",
    "TransportError",
]

"""The bundled local model: GGUF assembly, the llama.cpp server process, the provider.

- ``_gguf``: find the model's parts, assemble and verify the file once;
- ``_server``: run llama.cpp in a supervised child process on 127.0.0.1;
- ``_adapter``: the ``local:`` provider, over the OpenAI-compatible adapter.
"""

from __future__ import annotations

from toolproof.providers._local._adapter import (
    LocalProvider,
    local_model_available,
    with_text_calls,
)
from toolproof.providers._local._gguf import BUNDLED_MODEL, ensure_bundled_model
from toolproof.providers._local._server import LocalServer, ServerOptions, default_threads

__all__ = [
    "BUNDLED_MODEL",
    "LocalProvider",
    "LocalServer",
    "ServerOptions",
    "default_threads",
    "ensure_bundled_model",
    "local_model_available",
    "with_text_calls",
]

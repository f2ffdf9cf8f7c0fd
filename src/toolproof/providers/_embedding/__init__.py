"""Sentence embeddings for the ``semantic`` matcher (the ``toolproof[semantic]`` extra)."""

from toolproof.providers._embedding._model import (
    EMBEDDING_MODEL,
    EmbeddingModel,
    TextEmbedder,
    load_embedder,
    locate_model,
    read_verified,
    read_vocab,
)

__all__ = [
    "EMBEDDING_MODEL",
    "EmbeddingModel",
    "TextEmbedder",
    "load_embedder",
    "locate_model",
    "read_verified",
    "read_vocab",
]

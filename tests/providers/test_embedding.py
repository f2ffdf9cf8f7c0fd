"""The semantic matcher's embedding model: real vectors, and refusal of any other bytes."""

from __future__ import annotations

import dataclasses
import gzip
import os
from importlib import resources
from pathlib import Path

import pytest

from toolproof.match import Embeddings, compile_value, context, semantic_missing
from toolproof.providers._embedding import (
    EMBEDDING_MODEL,
    TextEmbedder,
    load_embedder,
    locate_model,
    read_verified,
    read_vocab,
)
from toolproof.providers._local._gguf import ModelIntegrityError, ModelMissingError
from toolproof.types import Suite

MISSING = semantic_missing()
if MISSING is not None and os.environ.get("TOOLPROOF_REQUIRE_SEMANTIC"):
    raise RuntimeError(f"TOOLPROOF_REQUIRE_SEMANTIC is set, but {MISSING}")
needs_model = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

#: Same meaning, other words: each passes at the default minimum (0.7).
PARAPHRASES = [
    ("refund for a damaged item", "refund because the item arrived damaged"),
    ("customer wants to cancel the order", "the client would like to cancel their order"),
    ("orders from the last two weeks", "orders placed in the past 14 days"),
    ("wireless headphones under 100 dollars", "bluetooth headphones cheaper than $100"),
    ("the package was delivered to the wrong address", "the parcel went to an incorrect address"),
    ("reset the user's password", "help the user reset their password"),
    ("shipping is delayed by a week", "the delivery will be a week late"),
    ("customer asks for an invoice copy", "the customer requested a copy of the invoice"),
    ("change the delivery address to 12 Main Street", "update the shipping address to 12 Main Street"),
    ("late delivery compensation", "compensation for a delivery that arrived late"),
]
#: Another request, often with words in common: each fails at the default minimum.
OTHERS = [
    ("refund for a damaged item", "track the delivery of the order"),
    ("refund for a damaged item", "the customer changed their mind"),
    ("customer wants to cancel the order", "customer wants to add another item to the order"),
    ("orders from the last two weeks", "orders over 500 euros"),
    ("wireless headphones under 100 dollars", "gaming laptop with 32 GB of RAM"),
    ("the package was delivered to the wrong address", "the customer forgot their password"),
    ("reset the user's password", "delete the user's account"),
    ("shipping is delayed by a week", "the invoice total is wrong"),
    ("customer asks for an invoice copy", "customer asks for a discount code"),
    ("late delivery compensation", "weather forecast for Prague tomorrow"),
]


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return load_embedder()


def _matchers(table: Embeddings, pairs: list[tuple[str, str]]) -> list[str | None]:
    ctx = dataclasses.replace(context(Suite(name="t", tools=[], cases=[])), embeddings=table)
    return [compile_value({"semantic": want}, ctx).check(got) for want, got in pairs]


@needs_model
def test_paraphrases_pass_and_other_requests_fail(embedder: TextEmbedder) -> None:
    table = Embeddings()
    embedder.fill(table, [t for pair in PARAPHRASES + OTHERS for t in pair])
    passed = _matchers(table, PARAPHRASES)
    failed = _matchers(table, OTHERS)
    assert passed == [None] * len(PARAPHRASES), passed
    assert all(r is not None and r.startswith("semantic similarity") for r in failed), failed
    assert table.missing == {}


@needs_model
def test_vectors_are_unit_length_deterministic_and_computed_once(embedder: TextEmbedder) -> None:
    text = "a note to the customer about a late refund"
    before = embedder.encoded
    first, again = embedder.encode([text, text])
    assert first == again
    assert len(first) == 384
    assert sum(x * x for x in first) == pytest.approx(1.0, abs=1e-5)
    assert embedder.encoded == before + 1  # one distinct text, encoded once
    assert embedder.encode([text]) == [first]
    assert embedder.encoded == before + 1


@needs_model
def test_long_text_is_truncated_not_refused(embedder: TextEmbedder) -> None:
    (vector,) = embedder.encode(["refund " * 2000])
    assert len(vector) == 384


@needs_model
def test_the_installed_model_is_the_pinned_file() -> None:
    path = locate_model()
    data = read_verified(path, EMBEDDING_MODEL.size, EMBEDDING_MODEL.sha256)
    assert len(data) == 22_928_619


@needs_model
def test_a_tampered_model_file_is_refused(tmp_path: Path) -> None:
    data = bytearray(locate_model().read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, same size
    bad = tmp_path / "model.onnx"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError, match=r"sha256 .* expected 8199be6f.*refusing to load"):
        read_verified(bad, EMBEDDING_MODEL.size, EMBEDDING_MODEL.sha256)
    bad.write_bytes(bytes(data[:-1]))
    with pytest.raises(ModelIntegrityError, match="22928618 bytes, expected 22928619 bytes"):
        read_verified(bad, EMBEDDING_MODEL.size, EMBEDDING_MODEL.sha256)


@needs_model
def test_a_model_of_other_bytes_than_pinned_is_never_loaded() -> None:
    other = dataclasses.replace(EMBEDDING_MODEL, sha256="0" * 64)
    with pytest.raises(ModelIntegrityError, match="refusing to load it"):
        load_embedder(other)


def test_the_shipped_vocabulary_is_verified() -> None:
    shipped = resources.files("toolproof.providers._embedding").joinpath("vocab.txt.gz")
    vocab = read_vocab(EMBEDDING_MODEL.vocab_sha256)
    assert len(vocab) == 30522
    assert vocab["[PAD]"] == 0 and vocab["[CLS]"] == 101 and vocab["[SEP]"] == 102
    original = gzip.decompress(shipped.read_bytes())
    text = original.replace(b"\nthe\n", b"\nthx\n", 1)
    assert text != original
    with pytest.raises(ModelIntegrityError, match=r"vocab\.txt\.gz: sha256 .*refusing to use it"):
        read_vocab(EMBEDDING_MODEL.vocab_sha256, gzip.compress(text))


def test_a_missing_model_package_names_what_to_install() -> None:
    absent = dataclasses.replace(EMBEDDING_MODEL, distribution="toolproof-test-absent-model")
    with pytest.raises(ModelMissingError) as err:
        locate_model(absent)
    assert "toolproof-test-absent-model" in str(err.value)
    assert "pip install" in str(err.value)


@needs_model
def test_assert_tool_call_compares_by_meaning() -> None:
    from toolproof.assertions import assert_tool_call
    from toolproof.records import tool_call_from_raw

    calls = [tool_call_from_raw("add_note", '{"note": "the client would like to cancel their order"}')]
    spec = {"note": {"semantic": "customer wants to cancel the order"}}
    assert assert_tool_call(calls, tool="add_note", args=spec).name == "add_note"
    other = {"note": {"semantic": "customer wants to add another item to the order", "min": 0.9}}
    with pytest.raises(AssertionError, match=r"semantic similarity 0\.\d\d < 0\.90"):
        assert_tool_call(calls, tool="add_note", args=other)

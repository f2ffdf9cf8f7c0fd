"""The compiled grading core: used only while it matches its sources.

``python -m toolproof.native build`` compiles the modules in :data:`NATIVE` with
mypyc, beside their sources, and writes a manifest of the sources' SHA-256
digests (``toolproof/_native.json``). Python imports a compiled module in
preference to its source, so a compiled module left behind after its source
changed would run the old code. :func:`guard`, called when ``toolproof`` is
first imported, prevents that: unless every module of the set is compiled
and every source matches the manifest, the whole set is imported from its
sources (a compiled module and a plain one of the set cannot be mixed: the
compiled ones check the classes of the others), with one warning on stderr.
``TOOLPROOF_NATIVE=0`` in the environment imports the sources always.

Nothing here imports the rest of toolproof.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = [
    "GROUP",
    "MANIFEST",
    "NATIVE",
    "compiled_files",
    "group_files",
    "guard",
    "native_state",
    "source_digests",
]

#: The modules compiled together: the scorer's whole path (analysis, checks, assembly,
#: the plans, pairing) and the matchers it asks.
NATIVE = (
    "toolproof.grade._answer",
    "toolproof.grade._assemble",
    "toolproof.grade._assign",
    "toolproof.grade._checks",
    "toolproof.grade._plan",
    "toolproof.grade._score",
    "toolproof.match._bfcl",
    "toolproof.match._matchers",
)
#: The manifest beside the package's ``__init__.py``.
MANIFEST = "_native.json"
#: mypyc's group: the compiled code is one library, ``toolproof_native__mypyc``, beside the
#: package (a top-level module), which each compiled module loads.
GROUP = "toolproof_native"

_checked = False


def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def _source(root: Path, module: str) -> Path:
    return root.joinpath(*module.split(".")[1:]).with_suffix(".py")


def _extensions(folder: Path, stem: str) -> list[Path]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return [folder / n for n in names if n.startswith(stem + ".") and n.endswith(suffixes)]


def compiled_files(root: Path, module: str) -> list[Path]:
    """The compiled files of ``module`` (``_answer.cpython-311-x86_64-linux-gnu.so``...)
    in the package folder ``root``."""
    source = _source(root, module)
    return _extensions(source.parent, source.stem)


def group_files(root: Path) -> list[Path]:
    """The group's compiled library beside the package folder ``root``."""
    return _extensions(root.parent, f"{GROUP}__mypyc")


def source_digests(root: Path) -> dict[str, str]:
    """SHA-256 of each module's source, by module name."""
    return {m: hashlib.sha256(_source(root, m).read_bytes()).hexdigest() for m in NATIVE}


def native_state(root: Path | None = None) -> tuple[str, str]:
    """``("none" | "current" | "stale", why)``: whether the compiled core is there, and
    whether it may be used (every module compiled, every source as the manifest says)."""
    root = root or _package_dir()
    compiled = {m: compiled_files(root, m) for m in NATIVE}
    if not any(compiled.values()):
        return "none", "no module is compiled"
    missing = [m for m, files in compiled.items() if not files]
    if missing:
        return "stale", f"{missing[0]} is not compiled"
    if not group_files(root):
        return "stale", f"the library {GROUP}__mypyc is missing"
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        built = manifest["sources"]
        if manifest.get("cache_tag") != sys.implementation.cache_tag:
            return "stale", f"built for {manifest.get('cache_tag')}"
    except (OSError, ValueError, KeyError, TypeError):
        return "stale", f"no readable {MANIFEST}"
    try:
        now = source_digests(root)
    except OSError as exc:
        return "stale", f"a source cannot be read ({exc})"
    changed = [m for m in NATIVE if built.get(m) != now[m]]
    if changed:
        return "stale", f"{_source(root, changed[0]).relative_to(root.parent)} changed"
    return "current", "every module compiled from its present source"


class _Sources(importlib.abc.MetaPathFinder):
    """Finds the modules of the set as their sources, never as compiled files."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in NATIVE:
            return None
        source = _source(self.root, fullname)
        loader = importlib.machinery.SourceFileLoader(fullname, str(source))
        return importlib.util.spec_from_file_location(fullname, source, loader=loader)


def guard() -> None:
    """Import the set from its sources unless the compiled core is current (see the module).
    Cheap when nothing is compiled: one listing of two folders."""
    global _checked
    if _checked:
        return
    _checked = True
    root = _package_dir()
    forced = os.environ.get("TOOLPROOF_NATIVE", "") == "0"
    if not forced:
        state, why = native_state(root)
        if state != "stale":
            return
        sys.stderr.write(
            f"toolproof: the compiled grading core is out of date ({why}); grading runs as "
            "plain Python (python -m toolproof.native build compiles it again, "
            "python -m toolproof.native clean removes it)\n"
        )
    elif not any(compiled_files(root, m) for m in NATIVE):
        return
    sys.meta_path.insert(0, _Sources(root))

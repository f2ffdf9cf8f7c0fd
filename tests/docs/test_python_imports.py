"""Every name a ```python block of the docs imports from toolproof exists where it says."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _imports() -> list[tuple[str, str, str]]:
    """(page, module, name) for each toolproof import in a python block."""
    out: list[tuple[str, str, str]] = []
    for page in PAGES:
        for block in BLOCK.findall(page.read_text("utf-8")):
            lines = [line for line in block.splitlines() if line.startswith(("from ", "import "))]
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolproof"):
                    out += [(page.name, node.module or "", a.name) for a in node.names]
                elif isinstance(node, ast.Import):
                    out += [
                        (page.name, a.name, "")
                        for a in node.names
                        if a.name.startswith("toolproof")
                    ]
    return out


@pytest.mark.parametrize(("page", "module", "name"), _imports())
def test_a_documented_import_works(page: str, module: str, name: str) -> None:
    mod = importlib.import_module(module)
    if name:
        assert hasattr(mod, name), f"{page}: from {module} import {name}: no such name"

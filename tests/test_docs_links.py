"""Every Markdown file's links and named .md files exist, and README anchors resolve.

Pages the site generates when it is built (docs/_hooks/reference.py) count as existing;
the strict site build (tests/docs/test_site.py) checks the anchors inside the site.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
NAMED_MD = re.compile(r"`([\w./-]+\.md)`")


def _markdown_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / line for line in listed.stdout.splitlines() if line]


def _generated() -> set[Path]:
    hook = (ROOT / "docs" / "_hooks" / "reference.py").read_text("utf-8")
    pages = re.search(r"PAGES[^=]*=\s*\{(.*?)\}", hook, re.S)
    assert pages is not None
    return {(ROOT / "docs" / p).resolve() for p in re.findall(r'"([\w/.-]+\.md)"', pages[1])}


def _anchors(path: Path) -> set[str]:
    out = set()
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title)
            out.add(title.replace(" ", "-"))
    return out


def test_local_links_and_named_markdown_files_exist() -> None:
    broken = []
    generated = _generated()
    for doc in _markdown_files():
        text = doc.read_text("utf-8")
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if file in generated:
                continue
            if not file.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
        for named in NAMED_MD.findall(text):
            if not ((doc.parent / named).exists() or (ROOT / named).exists()):
                broken.append(f"{doc.relative_to(ROOT)}: `{named}`")
    assert broken == []

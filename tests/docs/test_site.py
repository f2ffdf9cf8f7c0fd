"""The documentation site builds strictly, lists every page, and its generated references are whole."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs.markdown import DOCS, ROOT, nav_pages

HOOK = DOCS / "_hooks" / "reference.py"


def _need_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("TOOLPROOF_REQUIRE_DOCS") == "1":
            pytest.fail("mkdocs-material is not installed: pip install -e '.[docs]'")
        pytest.skip("mkdocs-material is not installed (pip install -e '.[docs]')")


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("toolproof_docs_reference", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link, anchor or API reference fails the build."""
    _need_mkdocs()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = tmp_path / "site"
    for page in nav_pages():
        built = site / (page[: -len(".md")].removesuffix("index")) / "index.html"
        assert built.exists(), page
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("toolproof.run.run_suite", "toolproof.evaluate.evaluate", "toolproof.gate.run_gate",
                 "toolproof.store.open_store", "toolproof.testing.StubServer"):
        assert f'id="{name}"' in api, f"the Python API page does not document {name}"


def test_every_page_is_in_the_nav() -> None:
    """A page under docs/ that mkdocs.yml's nav does not list has no place in the sidebar."""
    listed = set(nav_pages())
    written = {
        p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "_hooks" not in p.parts
    }
    generated = set(_hook().PAGES)
    assert written - listed == set(), "add these pages to the nav in mkdocs.yml"
    assert listed - written - generated == set(), "the nav lists pages that do not exist"


def test_generated_pages_are_not_committed() -> None:
    for page in _hook().PAGES:
        assert not (DOCS / page).exists(), f"docs/{page} is generated when the site is built"


def test_cli_reference_has_every_command_and_option() -> None:
    hook = _hook()
    text = hook.cli_reference()
    commands = hook.cli_commands()
    assert len(commands) >= 15
    for name, options in commands:
        assert f"## `{name}`" in text, name
        section = text.split(f"## `{name}`", 1)[1].split("\n## ", 1)[0]
        for option in options:
            if option.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", section), (name, option)


def test_schema_reference_has_every_field() -> None:
    text = _hook().schema_reference()
    schema = json.loads((ROOT / "toolproof.schema.json").read_text(encoding="utf-8"))
    for name in schema["properties"]:
        assert f"| `{name}` |" in text, name
    for definition, sub in schema["$defs"].items():
        assert f"## {definition} {{#{definition.lower()}}}" in text, definition
        section = text.split(f"## {definition} ", 1)[1].split("\n## ", 1)[0]
        for name in sub.get("properties", {}):
            assert f"| `{name}` |" in section, (definition, name)


def test_metric_glossary_has_every_metric() -> None:
    from toolproof.stats._metrics import METRICS

    text = _hook().metrics_glossary()
    for metric in METRICS:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{metric.name}` |"))
        assert metric.label in row and metric.applies_to in row, metric.name

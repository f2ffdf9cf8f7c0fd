"""Every install hint names something pip can install from where the user stands."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

import pytest

from toolproof._shared import install_hint as _install
from toolproof._shared.install_hint import install_hint, source_folder

REPO = Path(__file__).resolve().parents[1]


def _extras(folder: Path) -> dict[str, list[str]]:
    data = tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))
    assert data["project"]["name"] == "toolproof"
    extras: dict[str, list[str]] = data["project"]["optional-dependencies"]
    return extras


def test_the_hint_names_this_checkout_and_an_extra_it_defines() -> None:
    folder = source_folder()
    if folder is None:
        pytest.skip("toolproof was not installed from a folder")
    hint = install_hint("local")
    words = shlex.split(hint)
    assert words[:2] == ["pip", "install"]
    target = words[-1]
    path, _, extra = target.partition("[")
    assert Path(path) == folder and extra == "local]"
    assert "local" in _extras(folder)
    assert "toolproof[" not in hint.replace(str(folder), "")  # never the index name


def test_without_a_recorded_folder_the_hint_says_to_use_the_checkout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_install, "source_folder", lambda: None)
    hint = install_hint("local")
    assert hint.startswith("pip install -e '.[local]' in the toolproof checkout")
    assert "local" in _extras(REPO)


def test_readme_install_commands_use_the_checkout() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    docs = [p.read_text("utf-8") for p in sorted((REPO / "docs").rglob("*.md"))]
    for text in (readme, *docs):
        assert "pip install 'toolproof[local]'" not in text
        assert "pip install toolproof" not in text
    for extra in ("local", "dev"):
        assert f'pip install -e ".[{extra}]"' in readme
        assert extra in _extras(REPO)

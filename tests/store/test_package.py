"""The package's names load on first use (store/__init__.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import toolproof
import toolproof.store as store

SRC = str(Path(toolproof.__file__).resolve().parents[1])


def test_asking_where_the_store_is_loads_neither_the_reader_nor_the_writer() -> None:
    code = (
        "import sys; from toolproof.store._db import resolve_location; resolve_location(None);"
        "print(sorted(m for m in sys.modules if m.startswith('toolproof.store')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": SRC},
        check=True,
    )
    assert done.stdout.strip() == "['toolproof.store', 'toolproof.store._db']"


@pytest.mark.parametrize("name", store.__all__)
def test_every_name_of_the_package_is_there(name: str) -> None:
    assert getattr(store, name) is not None


def test_the_names_are_the_modules_own() -> None:
    from toolproof.store import _read, _schema, _store

    assert store.open_store is _store.open_store
    assert store.RunRow is _read.RunRow
    assert store.SCHEMA_VERSION == _schema.LATEST


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = store.nothing  # type: ignore[attr-defined]

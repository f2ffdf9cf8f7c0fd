"""The PostgreSQL fixture may skip on a developer's machine, never in CI."""

from __future__ import annotations

import pytest

from tests.store.conftest import _no_server


def test_without_a_server_ci_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="PostgreSQL is required in CI"):
        _no_server("initdb is not installed")


def test_without_a_server_a_developer_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL server"):
        _no_server("initdb is not installed")

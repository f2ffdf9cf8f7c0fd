"""Store fixtures: a SQLite file in a temporary folder, and a real PostgreSQL server.

PostgreSQL tests use ``$TOOLPROOF_TEST_POSTGRES`` (a URL) if set, else a
throwaway server started with initdb + pg_ctl. Without a server they are
skipped, except in CI (``CI=true``), where that is a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.store.pg import Server, find_binaries

BACKENDS = ["sqlite", "postgresql"]


def _no_server(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required in CI: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database."""
    given = os.environ.get("TOOLPROOF_TEST_POSTGRES")
    if given:
        yield given
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _no_server("psycopg is not installed (pip install -e '.[dev]')")
    bindir = find_binaries()
    if bindir is None:
        _no_server("initdb and pg_ctl are not installed (apt-get install postgresql)")
    assert bindir is not None
    server = Server(bindir)
    try:
        url = server.start()
    except Exception as exc:
        server.stop()
        _no_server(str(exc))
    yield url
    server.stop()


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh, empty database on the server, dropped afterwards."""
    import psycopg

    name = f"tp_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield _with_db(pg_server, name)
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _with_db(url: str, name: str) -> str:
    head, _, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{query}" if query else "")


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "history.db")
    url: str = request.getfixturevalue("pg_url")
    return url

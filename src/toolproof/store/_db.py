"""Connections: SQLite (the standard library) and PostgreSQL (psycopg 3), one SQL dialect.

Statements are written once with ``?`` placeholders; :class:`Database` turns
them into psycopg's ``%s`` for PostgreSQL. The few type names that differ (an
auto-numbered key, a timestamp) are filled in from :attr:`Database.types`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol
from urllib.parse import urlsplit

from toolproof._shared.safe_io import UnsafePath, enter_folder
from toolproof.errors import UserError

#: Seconds a writer waits for another writer's lock before giving up (SQLite busy timeout).
BUSY_TIMEOUT_S = 60.0
#: The default store, under the working folder.
DEFAULT_PATH = Path(".toolproof") / "history.db"
#: Values of --store / TOOLPROOF_STORE that turn the store off.
OFF = frozenset({"off", "none", "no", "false", "0"})


class _Cursor(Protocol):
    def fetchall(self) -> list[Any]: ...
    def fetchone(self) -> Any: ...


class Database:
    """One open connection, SQLite or PostgreSQL. Use :func:`connect`."""

    kind: str
    url: str
    types: ClassVar[dict[str, str]]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction; SQLite takes the write lock at once (BEGIN IMMEDIATE)."""
        raise NotImplementedError
        yield  # pragma: no cover

    def lock_schema(self) -> None:
        """Inside a transaction: serialise schema migrations between processes."""

    def close(self) -> None:
        raise NotImplementedError

    def ts(self, value: datetime | None) -> Any:
        """A timestamp as this database stores it."""
        return value

    def read_ts(self, value: Any) -> datetime | None:
        return value if value is None or isinstance(value, datetime) else _parse_ts(value)

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row, or None. Every row is fetched, so the statement is finished."""
        rows = self.execute(sql, params).fetchall()
        return rows[0] if rows else None


def _parse_ts(value: str) -> datetime:
    out = datetime.fromisoformat(value)
    return out if out.tzinfo is not None else out.replace(tzinfo=UTC)


class SQLiteDatabase(Database):
    kind = "sqlite"
    types: ClassVar[dict[str, str]] = {
        "pk": "INTEGER PRIMARY KEY AUTOINCREMENT",
        "ts": "TEXT",
        "bigint": "INTEGER",
    }

    def __init__(self, path: Path) -> None:
        if sqlite3.sqlite_version_info < (3, 35):
            raise UserError(
                f"the history store needs SQLite 3.35 or later (this Python has "
                f"{sqlite3.sqlite_version})"
            )
        self.path = path
        self.url = str(path)
        _check_store_files(path)
        # Autocommit mode: transactions are opened explicitly with BEGIN IMMEDIATE.
        self._conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            _check_schema(self._conn, path)
        except BaseException:
            self._conn.close()
            raise
        self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # e.g. a file system without shared memory
            self._conn.execute("PRAGMA journal_mode = DELETE")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute("PRAGMA foreign_keys = ON")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        return self._conn.execute(sql, tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._conn.executemany(sql, rows)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()

    def ts(self, value: datetime | None) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        # One fixed width, so that text order is time order.
        return value.astimezone(UTC).isoformat(timespec="microseconds")


class PostgresDatabase(Database):
    kind = "postgresql"
    types: ClassVar[dict[str, str]] = {
        "pk": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        "ts": "TIMESTAMPTZ",
        "bigint": "BIGINT",
    }
    #: Key of the advisory lock that serialises migrations.
    _LOCK = 0x746F6F6C70726F6F  # "toolproo"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            from toolproof._shared.install_hint import install_hint

            raise UserError(
                f"a PostgreSQL store needs psycopg: {install_hint('postgres')}"
            ) from None
        self.url = _redact(url)
        try:
            self._conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"cannot open the store {self.url}: {first}") from None

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        return self._conn.execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(self._sql(sql), (tuple(r) for r in rows))  # streamed

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._conn.transaction():
            yield

    def lock_schema(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(?)", (self._LOCK,))

    def close(self) -> None:
        self._conn.close()


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _check_store_files(path: Path) -> None:
    """Refuse a store folder or file (or its journal) that is a link, or not a regular file.

    A checkout can hold ``.toolproof/history.db``: a link there would make
    SQLite create or change a database wherever it points.
    """
    try:
        enter_folder(path.parent)
        for name in (path.name, *(path.name + s for s in ("-wal", "-shm", "-journal"))):
            try:
                info = os.lstat(path.parent / name)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(info.st_mode):
                what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
                raise UnsafePath(f"'{path.parent / name}' is {what}")
    except UnsafePath as exc:
        raise UserError(f"cannot open the store {path}: {exc}") from None


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Run no SQL a store file brings with it: no triggers, no views, untrusted schema off.

    toolproof's own schema has neither, so a store that holds one was made or
    changed by something else (a database committed in a checkout, whose
    trigger could run an endless query on every insert).
    """
    conn.execute("PRAGMA trusted_schema = OFF")
    rows = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') LIMIT 1"
    ).fetchall()
    if rows:
        kind, name = rows[0]
        raise UserError(
            f"cannot open the store {path}: it holds a {kind} ({name!r}), which toolproof never "
            "creates; it was not made by toolproof, so it is not used (remove it, or choose "
            "another with --store or TOOLPROOF_STORE)"
        )


def resolve_location(store: str | None = None, *, enabled: bool = True) -> str | None:
    """Where the store is: ``store``, else ``$TOOLPROOF_STORE``, else ``.toolproof/history.db``.

    ``None`` when the store is off (``enabled`` false, or the value ``off``).
    """
    if not enabled:
        return None
    value = store if store is not None else os.environ.get("TOOLPROOF_STORE", "")
    value = value.strip()
    if not value:
        return str(DEFAULT_PATH)
    if value.lower() in OFF:
        return None
    return value


def connect(location: str) -> Database:
    """Open the store at a PostgreSQL URL, a ``sqlite:///PATH`` URL or a file path."""
    if location.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(location)
    path = location.removeprefix("sqlite:///") if location.startswith("sqlite:///") else location
    if "://" in path:
        raise UserError(
            f"--store {location}: give a file path, sqlite:///PATH or postgresql://…"
        )
    try:
        return SQLiteDatabase(Path(path))
    except (sqlite3.Error, OSError) as exc:
        raise UserError(f"cannot open the store {path}: {exc}") from None

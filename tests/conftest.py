"""Test-wide guards: no test reaches beyond this machine."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _allowed(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX
        return True
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", "127.0.0.1", "::1"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _allowed(address):
        raise RuntimeError(f"tests may not reach the network (tried {address!r})")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _allowed(address):
        raise RuntimeError(f"tests may not reach the network (tried {address!r})")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_network() -> Iterator[None]:
    """Refuse every connection that is not to the loopback interface."""
    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", _guarded_connect)
    mp.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    yield
    mp.undo()


@pytest.fixture(autouse=True, scope="session")
def _store_outside_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """run, score and gate write a history store: keep it out of the repository checkout.

    A test whose subprocess drops the variable and runs in the checkout would
    write the default ``.toolproof/history.db`` there: the session then fails.
    """
    import os
    from pathlib import Path

    default = Path(__file__).resolve().parents[1] / ".toolproof" / "history.db"
    before = default.stat().st_mtime_ns if default.exists() else None
    mp = pytest.MonkeyPatch()
    if not os.environ.get("TOOLPROOF_STORE"):
        mp.setenv("TOOLPROOF_STORE", str(tmp_path_factory.mktemp("store") / "history.db"))
    yield
    mp.undo()
    after = default.stat().st_mtime_ns if default.exists() else None
    assert after == before, f"a test wrote the history store {default} in the checkout"


@pytest.fixture(autouse=True, scope="session")
def _cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Answers cached by runs of the tests go to a folder of this session, never the user's.

    A stub server's port is part of a cache key; with the user's cache, an answer
    cached by an earlier session on the same port would stand in for the stub.
    """
    import os

    mp = pytest.MonkeyPatch()
    if not os.environ.get("TOOLPROOF_CACHE"):
        mp.setenv("TOOLPROOF_CACHE", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


@pytest.fixture(autouse=True, scope="session")
def _user_config_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user's config folder is an empty folder of this session, never the user's own.

    Settings that grant trust are read from there; the user's own would change
    what the tests see.
    """
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    mp.delenv("TOOLPROOF_CONFIG", raising=False)
    yield
    mp.undo()

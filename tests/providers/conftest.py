"""Fixtures for the provider tests: fake keys, a stub server, one shared transport."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from providers_support import FAKE_KEYS

from toolproof.providers import HttpTransport
from toolproof.testing import StubServer


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)
    return dict(FAKE_KEYS)


@pytest.fixture
async def stub() -> AsyncIterator[StubServer]:
    async with StubServer() as server:
        yield server


@pytest.fixture
async def transport() -> AsyncIterator[HttpTransport]:
    async with HttpTransport(max_connections=32) as shared:
        yield shared

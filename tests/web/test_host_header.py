"""The viewer answers only requests addressed to its own address (issue 24, item 7).

A page of another site whose name resolves to 127.0.0.1 (DNS rebinding)
reaches the viewer from the user's browser with that site's name in Host.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import Served


@pytest.fixture(scope="module")
def served(runs_dir: Path) -> Iterator[Served]:
    server = Served(runs_dir)
    yield server
    server.close()


def _get(served: Served, host: str | None) -> tuple[int, str]:
    port = int(served.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        if host is None:
            conn.putrequest("GET", "/", skip_host=True)
        else:
            conn.putrequest("GET", "/", skip_host=True)
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"])
def test_its_own_address_is_served(served: Served, name: str) -> None:
    port = served.url.rsplit(":", 1)[1]
    assert _get(served, f"{name}:{port}")[0] == 200


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example:{port}",
        "attacker.example",
        "127.0.0.1",  # the right name on another port
        "127.0.0.1:1",
        "localhost.attacker.example:{port}",
        "127.0.0.1:{port}.attacker.example",
        "",
        None,  # no Host header at all
    ],
)
def test_another_host_gets_421(served: Served, host: str | None) -> None:
    port = served.url.rsplit(":", 1)[1]
    status, body = _get(served, None if host is None else host.format(port=port))
    # without a Host header at all, aiohttp itself refuses the request (400)
    assert status == (421 if host is not None else 400), body[:200]
    assert "support" not in body  # no run of the viewer is shown

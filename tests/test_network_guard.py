import socket

import pytest


def test_connections_beyond_loopback_are_refused() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(RuntimeError, match="may not reach the network"):
            sock.connect(("192.0.2.1", 443))
    finally:
        sock.close()


def test_loopback_is_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket()
    try:
        client.connect(server.getsockname())
    finally:
        client.close()
        server.close()

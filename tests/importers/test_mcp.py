"""Live MCP servers, written with the official SDK, over stdio and Streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.importers import INSTALL_HINT, import_tools, parse_mcp_source

pytest.importorskip("mcp", reason="the mcp extra is not installed")

SERVER = Path(__file__).parent / "servers" / "mcp_server.py"
STDIO = f"mcp:stdio:{sys.executable} {SERVER} stdio"

EXPECTED = {  # name: (effect, risk) from the annotations
    "read_note": ("read", "low"),
    "write_note": ("write", "medium"),  # idempotent, closed world: stays medium
    "delete_note": ("destructive", "high"),
    "publish_note": ("write", "high"),  # open world by default
    "explode": ("destructive", "critical"),  # no annotations: cautious defaults
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "exited")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"mcp:http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _check(result_source: str) -> None:
    result = import_tools(result_source, timeout_s=60)
    tools = {t.name: t for t in result.tools}
    assert list(tools) == list(EXPECTED)  # all three pages, in order
    assert {n: (t.effect.value, t.risk.value) for n, t in tools.items()} == EXPECTED
    assert tools["write_note"].parameters == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "text": {"type": "string"}},
        "required": ["title", "text"],
    }
    comments = {item.tool.name: item.comment for item in result.items}
    assert comments["delete_note"] == (
        "MCP annotations: readOnlyHint=false, destructiveHint=true, openWorldHint=false"
    )
    assert result.format == "mcp"


def test_stdio_server_lists_every_page() -> None:
    _check(STDIO)


def test_streamable_http_server_lists_every_page(http_server: str) -> None:
    _check(http_server)


def test_server_that_dies_is_one_clear_error() -> None:
    with pytest.raises(UserError) as err:
        import_tools(f"mcp:stdio:{sys.executable} -c 'import sys; sys.exit(3)'", timeout_s=60)
    message = str(err.value)
    assert message.startswith("mcp:stdio:") and "cannot list tools" in message
    assert "\n" not in message


def test_a_server_that_dies_at_start_is_said_with_its_last_words() -> None:
    """The last line the server wrote to its stderr (a missing module, a bad flag) is in
    the one-line error, escaped: "Connection closed" alone does not say why."""
    code = "import sys; import nope_not_a_module"
    with pytest.raises(UserError) as err:
        import_tools(f'mcp:stdio:{sys.executable} -c "{code}"', timeout_s=60)
    message = str(err.value)
    assert "cannot list tools" in message and "\n" not in message
    assert message.endswith(
        "; the server's last words: ModuleNotFoundError: No module named 'nope_not_a_module'"
    ), message
    # a server that says nothing on stderr: the message is as before
    with pytest.raises(UserError) as quiet:
        import_tools(f"mcp:stdio:{sys.executable} -c 'import sys; sys.exit(3)'", timeout_s=60)
    assert "last words" not in str(quiet.value)


def test_nothing_listening_is_one_clear_error() -> None:
    with pytest.raises(UserError, match="cannot list tools"):
        import_tools(f"mcp:http://127.0.0.1:{_free_port()}/mcp", timeout_s=30)


def test_nothing_listening_leaves_no_task_whose_failure_nobody_read() -> None:
    """The session torn down by the transport failing leaves the listing's own task to end
    later; its failure is read, never logged at exit as 'Task exception was never
    retrieved' (whose logging, from the garbage collector inside Python's parser, broke a
    later parse in the same process: 'AST constructor recursion depth mismatch')."""
    code = (
        "import ast, gc\n"
        "from toolproof.errors import UserError\n"
        "from toolproof.importers import import_tools\n"
        "try:\n"
        f"    import_tools('mcp:http://127.0.0.1:{_free_port()}/mcp', timeout_s=30)\n"
        "except UserError as e:\n"
        "    print('refused:', e)\n"
        "gc.collect()\n"
        "ast.parse(open(ast.__file__).read())\n"
        "print('parsed')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "cannot list tools" in done.stdout
    assert "parsed" in done.stdout
    assert "never retrieved" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_missing_sdk_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(UserError) as err:
        import_tools(STDIO)
    assert str(err.value) == INSTALL_HINT


@pytest.mark.parametrize(
    ("text", "command", "url"),
    [
        (
            "mcp:stdio:python my_server.py --flag 'a b'",
            ("python", "my_server.py", "--flag", "a b"),
            None,
        ),
        ("mcp:https://example.test/mcp", (), "https://example.test/mcp"),
    ],
)
def test_parse_source(text: str, command: tuple[str, ...], url: str | None) -> None:
    source = parse_mcp_source(text)
    assert (source.command, source.url) == (command, url)


@pytest.mark.parametrize("text", ["mcp:stdio:", "mcp:ws://x", "mcp:stdio:python 'unclosed"])
def test_bad_source_is_a_user_error(text: str) -> None:
    with pytest.raises(UserError):
        parse_mcp_source(text)

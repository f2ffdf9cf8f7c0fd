"""Live MCP servers: ``mcp:stdio:COMMAND ARGS...`` and ``mcp:http(s)://...``.

Lists the server's tools with the official ``mcp`` SDK (the optional extra
``toolproof[mcp]``), following ``nextCursor`` until the last page, and keeps
each tool exactly as the server sent it (wire names, ``by_alias``).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

from toolproof._shared.install_hint import install_hint
from toolproof._shared.mcp_sdk import (
    ServerFault,
    ServerFaults,
    describe,
    quiet_sdk_log,
    until_fault,
)
from toolproof._shared.visible import visible
from toolproof.errors import UserError

INSTALL_HINT = f"listing an MCP server's tools needs the mcp SDK: {install_hint('mcp')}"
MAX_PAGES = 1000


@dataclass(frozen=True)
class McpSource:
    """Where an MCP server is: a command to launch (stdio) or a Streamable HTTP URL."""

    command: tuple[str, ...] = ()
    url: str | None = None

    @property
    def label(self) -> str:
        return f"mcp:{self.url}" if self.url else "mcp:stdio:" + shlex.join(self.command)


def parse_mcp_source(text: str) -> McpSource:
    """``mcp:stdio:python server.py`` or ``mcp:https://host/mcp`` (the ``mcp:`` prefix given)."""
    rest = text[len("mcp:") :]
    if rest.startswith(("http://", "https://")):
        return McpSource(url=rest)
    if rest.startswith("stdio:"):
        try:
            command = tuple(shlex.split(rest[len("stdio:") :]))
        except ValueError as exc:
            raise UserError(f"{text}: cannot split the command line ({exc})") from None
        if not command:
            raise UserError(f"{text}: give the command that starts the server after 'mcp:stdio:'")
        return McpSource(command=command)
    raise UserError(f"{text}: an MCP source is mcp:stdio:COMMAND ARGS... or mcp:http(s)://URL")


def list_mcp_tools(
    source: McpSource, *, timeout_s: float = 30.0, cwd: Path | None = None
) -> list[dict[str, Any]]:
    """Every tool the server lists, as the JSON it sent. Raises UserError on failure."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    # the server's stderr, kept to say its last line when listing fails
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with quiet_sdk_log():
                return asyncio.run(asyncio.wait_for(_list(source, cwd, errlog), timeout_s))
        except ServerFault as exc:
            raise UserError(f"{source.label}: cannot list tools: {exc}{_said(errlog)}") from None
        except TimeoutError:
            raise UserError(
                f"{source.label}: no complete tool list within {timeout_s:g} s{_said(errlog)}"
            ) from None
        except UserError:
            raise
        except Exception as exc:  # the SDK and the server can fail in many ways
            raise UserError(
                f"{source.label}: cannot list tools: {_reason(exc)}{_said(errlog)}"
            ) from None


def _said(errlog: IO[str]) -> str:
    """``; the server's last words: LINE`` (the last line of its stderr, escaped and cut
    to 300 characters), or nothing when it wrote none."""
    try:
        errlog.flush()
        size = errlog.seek(0, os.SEEK_END)
        errlog.seek(max(0, size - 4096))
        tail = errlog.read()
    except (OSError, ValueError):
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines:
        return ""
    return f"; the server's last words: {visible(lines[-1][:300])}"


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)
    if inner:
        return _reason(inner[0])
    if isinstance(exc, ServerFault | RecursionError):
        return describe(exc) if isinstance(exc, RecursionError) else str(exc)
    return f"{type(exc).__name__}: {exc}".strip(": ")


async def _list(source: McpSource, cwd: Path | None, errlog: TextIO) -> list[dict[str, Any]]:
    from mcp import ClientSession

    faults = ServerFaults()
    if source.url is not None:
        async with (
            _http_streams(source.url) as streams,
            ClientSession(streams[0], streams[1], message_handler=faults) as session,
        ):
            return await until_fault(_pages(session, source), faults)
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=source.command[0],
        args=list(source.command[1:]),
        cwd=str(cwd) if cwd else None,
        env=_passed_env(),
    )
    async with (
        stdio_client(params, errlog=errlog) as streams,
        ClientSession(streams[0], streams[1], message_handler=faults) as session,
    ):
        return await until_fault(_pages(session, source), faults)


def _passed_env() -> dict[str, str]:
    """PATH and the virtual environment, so ``python`` means the same as for the user."""
    return {k: v for k, v in os.environ.items() if k in ("PATH", "VIRTUAL_ENV", "PYTHONPATH")}


def _http_streams(url: str) -> Any:
    from mcp.client import streamable_http

    # 2.x names it streamable_http_client, 1.x streamablehttp_client
    names = vars(streamable_http)
    connect = names.get("streamable_http_client") or names["streamablehttp_client"]
    return connect(url)


async def _pages(session: Any, source: McpSource) -> list[dict[str, Any]]:
    from mcp.types import PaginatedRequestParams

    await session.initialize()
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
        wire = page.model_dump(by_alias=True, exclude_none=True, mode="json")
        tools.extend(wire.get("tools", []))
        cursor = wire.get("nextCursor")
        if not cursor:
            return tools
        if cursor in seen:
            raise UserError(f"{source.label}: the server repeated cursor {cursor!r}")
        seen.add(cursor)
    raise UserError(f"{source.label}: more than {MAX_PAGES} pages of tools")

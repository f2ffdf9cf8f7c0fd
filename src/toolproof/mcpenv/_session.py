"""A real MCP server as the environment of one attempt: its tool calls really run.

Each session copies the working folder into a fresh temporary folder, starts
the server there (stdio), answers calls with a per-call timeout, records every
call (arguments, the result as the server sent it, errors, duration), then
stops the server and deletes the copy. Running a server runs its code, so a
session refuses to start unless the caller passes ``allow_code=True`` (the
user's explicit opt-in).
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from toolproof.errors import UserError

INSTALL_HINT = "MCP environments need the mcp SDK: pip install 'toolproof[mcp]'"


@dataclass(slots=True)
class McpCall:
    """One tool call as it ran: what was sent, what came back, how long it took."""

    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    is_error: bool = False
    error: str | None = None
    timed_out: bool = False
    duration_ms: float = 0.0

    @property
    def failed(self) -> bool:
        return self.is_error or self.error is not None or self.timed_out


@dataclass
class McpEnvironmentSpec:
    """``stdio:COMMAND ARGS...`` started in a copy of ``workdir``."""

    command: tuple[str, ...]
    workdir: Path
    call_timeout_s: float = 30.0
    start_timeout_s: float = 60.0

    @classmethod
    def parse(cls, text: str, workdir: Path, **kwargs: Any) -> McpEnvironmentSpec:
        if not text.startswith("stdio:"):
            raise UserError(f"{text}: an MCP environment is 'stdio:COMMAND ARGS...'")
        try:
            command = tuple(shlex.split(text[len("stdio:") :]))
        except ValueError as exc:
            raise UserError(f"{text}: cannot split the command line ({exc})") from None
        if not command:
            raise UserError(f"{text}: give the command that starts the server")
        return cls(command=command, workdir=workdir, **kwargs)


@dataclass
class McpSession:
    """One attempt's server: ``async with McpSession(spec, allow_code=True) as env: ...``."""

    spec: McpEnvironmentSpec
    allow_code: bool = False
    calls: list[McpCall] = field(default_factory=list)
    server_log: str = ""
    folder: Path | None = None
    _stack: AsyncExitStack | None = None
    _session: Any = None

    async def __aenter__(self) -> McpSession:
        if not self.allow_code:
            raise UserError(
                f"this suite runs a real MCP server ({shlex.join(self.spec.command)}), whose "
                "tools run real code: allow it explicitly (--allow-code)"
            )
        try:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client
        except ImportError:
            raise UserError(INSTALL_HINT) from None
        self.folder = Path(tempfile.mkdtemp(prefix="toolproof-mcp-"))
        work = self.folder / "work"
        shutil.copytree(self.spec.workdir, work, symlinks=True)
        self._stack = AsyncExitStack()
        params = StdioServerParameters(
            command=self.spec.command[0], args=list(self.spec.command[1:]), cwd=str(work)
        )
        try:
            errlog = self._stack.enter_context(open(self.folder / "server.log", "w"))  # noqa: SIM115
            read, write = await self._stack.enter_async_context(stdio_client(params, errlog=errlog))
            self._session = await self._stack.enter_async_context(ClientSession(read, write))
            await asyncio.wait_for(self._session.initialize(), self.spec.start_timeout_s)
        except BaseException as exc:
            await self._close()
            if isinstance(exc, Exception):
                raise UserError(
                    f"MCP environment {shlex.join(self.spec.command)} did not start: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            raise
        return self

    async def call(self, tool: str, arguments: dict[str, Any]) -> McpCall:
        """Run one tool call on the server; failures are recorded, never raised."""
        record = McpCall(tool=tool, arguments=arguments)
        start = time.perf_counter()
        try:
            result = await asyncio.wait_for(
                self._session.call_tool(tool, arguments), self.spec.call_timeout_s
            )
        except TimeoutError:
            record.timed_out = True
            record.error = f"no answer within {self.spec.call_timeout_s:g} s"
        except Exception as exc:  # a protocol error from the server
            record.error = f"{type(exc).__name__}: {exc}"
        else:
            record.result = result.model_dump(by_alias=True, exclude_none=True, mode="json")
            record.is_error = bool(record.result.get("isError"))
        record.duration_ms = (time.perf_counter() - start) * 1000
        self.calls.append(record)
        return record

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close()

    async def _close(self) -> None:
        if self._stack is not None:
            try:
                await self._stack.aclose()
            finally:
                self._stack = None
        if self.folder is not None:
            log = self.folder / "server.log"
            if log.is_file():
                self.server_log = log.read_text(encoding="utf-8", errors="replace")
            shutil.rmtree(self.folder, ignore_errors=True)

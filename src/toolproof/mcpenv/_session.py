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
import json
import shlex
import shutil
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from toolproof._shared.install_hint import install_hint
from toolproof._shared.mcp_sdk import ServerFaults, quiet_sdk_log, until_fault
from toolproof.errors import UserError
from toolproof.match import ToolResult
from toolproof.mcpenv._sandbox import sandboxed
from toolproof.types import McpToolRun

INSTALL_HINT = f"MCP environments need the mcp SDK: {install_hint('mcp')}"
#: Seconds a tool call may take when the suite does not say.
DEFAULT_CALL_TIMEOUT_S = 30.0
#: The most of the server's stderr kept in a record (its end).
LOG_TAIL_CHARS = 64 * 1024
#: Not copied into an attempt's working folder.
_NOT_COPIED = shutil.ignore_patterns(".git", "__pycache__")


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
    purpose: str = "call"

    @property
    def failed(self) -> bool:
        return self.is_error or self.error is not None or self.timed_out

    def to_record(self) -> McpToolRun:
        """The call as a record keeps it."""
        return McpToolRun(
            tool=self.tool,
            arguments=self.arguments,
            purpose="state" if self.purpose == "state" else "call",
            result=self.result,
            is_error=self.is_error,
            error=self.error,
            timed_out=self.timed_out,
            duration_ms=round(self.duration_ms, 3),
        )

    def answer(self) -> ToolResult:
        """What the model reads: the text of each content block (others as JSON).

        A failure is a tool result too: the server's error text, or a JSON
        ``{"error": ...}`` for a timeout or a protocol error.
        """
        if self.result is None:
            fault = "timeout" if self.timed_out else "error"
            text = json.dumps({"error": f"{self.tool}: {self.error}"}, ensure_ascii=False)
            return ToolResult(text, is_error=True, fault=fault)
        parts: list[str] = []
        for block in self.result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(json.dumps(block, ensure_ascii=False, sort_keys=True))
        if not parts and "structuredContent" in self.result:
            parts.append(
                json.dumps(self.result["structuredContent"], ensure_ascii=False, sort_keys=True)
            )
        return ToolResult(
            "\n".join(parts), is_error=self.is_error, fault="error" if self.is_error else None
        )

    def state(self) -> Any:
        """The end state a state tool returned: its structured content, else its text as JSON.

        None when the call failed or returned nothing; text that is not JSON is
        kept as a string, so a comparison shows what came back.
        """
        if self.failed or self.result is None:
            return None
        structured = self.result.get("structuredContent")
        if isinstance(structured, dict):
            # the SDK wraps a return value that is not an object as {"result": value}
            if set(structured) == {"result"}:
                return structured["result"]
            return structured
        text = self.answer().content
        if not text:
            return None
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return text


@dataclass
class McpEnvironmentSpec:
    """``stdio:COMMAND ARGS...`` started in a copy of ``workdir``."""

    command: tuple[str, ...]
    workdir: Path
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
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
    sandbox: bool = False
    calls: list[McpCall] = field(default_factory=list)
    server_log: str = ""
    folder: Path | None = None
    _stack: AsyncExitStack | None = None
    _session: Any = None
    _faults: ServerFaults = field(default_factory=ServerFaults)

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
        shutil.copytree(self.spec.workdir, work, symlinks=True, ignore=_NOT_COPIED)
        self._stack = AsyncExitStack()
        argv = list(self.spec.command)
        if self.sandbox:
            argv = sandboxed(argv, work)
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(work))
        try:
            errlog = self._stack.enter_context(open(self.folder / "server.log", "w"))  # noqa: SIM115
            self._stack.enter_context(quiet_sdk_log())  # a bad line is one error, no traceback
            read, write = await self._stack.enter_async_context(stdio_client(params, errlog=errlog))
            self._session = await self._stack.enter_async_context(
                ClientSession(read, write, message_handler=self._faults)
            )
            await asyncio.wait_for(
                until_fault(self._session.initialize(), self._faults), self.spec.start_timeout_s
            )
        except BaseException as exc:
            await self._close()
            if isinstance(exc, Exception):
                raise UserError(
                    f"MCP environment {shlex.join(self.spec.command)} did not start: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            raise
        return self

    async def call(self, tool: str, arguments: dict[str, Any], *, purpose: str = "call") -> McpCall:
        """Run one tool call on the server; failures are recorded, never raised."""
        record = McpCall(tool=tool, arguments=arguments, purpose=purpose)
        start = time.perf_counter()
        try:
            self._faults.reset()  # a fault of an earlier call is that call's
            result = await asyncio.wait_for(
                until_fault(self._session.call_tool(tool, arguments), self._faults),
                self.spec.call_timeout_s,
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
                text = log.read_text(encoding="utf-8", errors="replace")
                self.server_log = text[-LOG_TAIL_CHARS:]
            shutil.rmtree(self.folder, ignore_errors=True)

"""What the MCP SDK could not read from a server: one line, at once, and no traceback.

A server's answer is untrusted input. When a line it sends is not a JSON-RPC
message the SDK can read (invalid JSON, nesting thousands of levels deep), the
SDK logs the error with a traceback to stderr and hands the exception to the
session's ``message_handler``; the request it answered then waits until its
timeout. :class:`ServerFaults` is that handler: it keeps the first fault, so
:func:`until_fault` ends the wait at once with :class:`ServerFault`, and
:func:`quiet_sdk_log` keeps the SDK's log (and its traceback) off stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

__all__ = ["ServerFault", "ServerFaults", "quiet_sdk_log", "until_fault"]

T = TypeVar("T")


class ServerFault(Exception):
    """The server sent something the SDK could not read; the message says what."""


def describe(exc: BaseException) -> str:
    """One line for a fault of the server's output."""
    text = str(exc)
    if "recursion limit" in text or isinstance(exc, RecursionError):
        return "the server sent JSON nested too deeply to read"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if "Invalid JSON" in text:
        return "the server sent a line that is not valid JSON"
    return f"the server sent a message that is not valid JSON-RPC ({first[:200]})"


class ServerFaults:
    """A ``message_handler`` for ``ClientSession`` that keeps the first transport fault."""

    def __init__(self) -> None:
        self.first: BaseException | None = None
        self._seen = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, Exception) and self.first is None:
            self.first = message
            self._seen.set()

    def reset(self) -> None:
        """Forget the faults seen so far (before the next request)."""
        self.first = None
        self._seen = asyncio.Event()

    async def wait(self) -> None:
        await self._seen.wait()


async def until_fault(work: Awaitable[T], faults: ServerFaults) -> T:
    """``work``'s result, or :class:`ServerFault` as soon as the server sends a bad line."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(faults.wait())
    # (where the session is torn down around this wait, by the transport failing, the work
    # ends on its own later: its outcome is read then, never left for the garbage collector
    # to log as an exception nobody retrieved)
    task.add_done_callback(_read_outcome)
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    assert faults.first is not None
    raise ServerFault(describe(faults.first))


def _read_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


@contextlib.contextmanager
def quiet_sdk_log() -> Iterator[None]:
    """Keep the SDK's log records (tracebacks of the server's bad lines) off stderr."""
    logger = logging.getLogger("mcp")
    handler = logging.NullHandler()
    old = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.propagate = old
        logger.removeHandler(handler)

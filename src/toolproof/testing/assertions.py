"""Assertions for your own tests: did the model call this tool with these arguments?

::

    from toolproof.assertions import assert_tool_call

    call = assert_tool_call(response, tool="get_order", args={"order_id": "ORD-104821"})
    assert_tool_call(response, tool="search", args={"q": {"use": "normalized", "value": "novák"}})

``response`` is a :class:`toolproof.types.Response`, a :class:`toolproof.types.Record`,
a list of :class:`toolproof.types.ToolCall`, or any provider payload
:func:`toolproof.run.to_response` reads (an OpenAI or Anthropic message, a dict).
``args`` takes the same literals and matchers as a suite's ``expect.args``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

from toolproof.types import Record, Response, ToolCall

__all__ = ["assert_no_tool_call", "assert_tool_call", "tool_calls_of"]


def tool_calls_of(response: Any) -> list[ToolCall]:
    """The tool calls in any answer shape toolproof reads."""
    if isinstance(response, Record):
        return list(response.response.tool_calls) if response.response else []
    if isinstance(response, Response):
        return list(response.tool_calls)
    if isinstance(response, list) and all(isinstance(c, ToolCall) for c in response):
        return list(response)
    from toolproof.providers._normalise import to_response

    return list(to_response(response).tool_calls)


def _show(calls: list[ToolCall]) -> str:
    if not calls:
        return "no tool call"
    return ", ".join(f"{c.name}({c.raw_arguments or c.arguments or ''})" for c in calls)


def assert_tool_call(
    response: Any,
    tool: str,
    args: Mapping[str, Any] | None = None,
    *,
    extra_args: bool = False,
    times: int | None = None,
    now: datetime | None = None,
    timezone: str = "UTC",
) -> ToolCall:
    """Assert that ``tool`` was called, with arguments matching ``args``; return the call.

    ``extra_args`` allows arguments ``args`` does not list; ``times`` requires that
    many calls of ``tool``; ``now``/``timezone`` anchor date matchers.
    """
    __tracebackhide__ = True  # pytest shows the user's assertion and the reason, not this
    calls = tool_calls_of(response)
    named = [c for c in calls if c.name == tool]
    if not named:
        raise AssertionError(f"expected a call to {tool}, got {_show(calls)}")
    if times is not None and len(named) != times:
        raise AssertionError(f"expected {times} call(s) to {tool}, got {len(named)}")
    if args is None:
        return named[0]
    matcher, table = _compile(args, extra_args, now, timezone)
    reasons = []
    for c in named:
        if c.parse_error is not None:
            reasons.append(f"{tool}: arguments are not JSON ({c.parse_error})")
            continue
        reason = _check(matcher, table, c.arguments)
        if reason is None:
            return c
        reasons.append(f"{tool}: {reason}")
    expected = f"{tool}({matcher.describe()})"
    raise AssertionError(
        "\n".join([*reasons, "", f"expected: {expected}", f"actual:   {_show(named)}"])
    )


def assert_no_tool_call(response: Any) -> None:
    """Assert that the answer calls no tool."""
    __tracebackhide__ = True
    calls = tool_calls_of(response)
    if calls:
        raise AssertionError(f"expected no tool call, got {_show(calls)}")


def _check(matcher: Any, table: Any, value: Any) -> str | None:
    """Check ``value``; texts compared by meaning are embedded first (here, at the edge)."""
    reason: str | None = matcher.check(value)
    while missing := table.take_missing():
        _embedder().fill(table, missing)
        reason = matcher.check(value)
    return reason


@cache
def _embedder() -> Any:
    from toolproof.providers import load_embedder

    return load_embedder()


def _compile(
    args: Mapping[str, Any], extra: bool, now: datetime | None, timezone: str
) -> tuple[Any, Any]:
    """The compiled matcher, and the table its semantic comparisons read vectors from."""
    from toolproof.match import Context, Embeddings, SpecError, compile_value, zone

    __tracebackhide__ = True  # a bad matcher: the user's call is what to show
    table = Embeddings()
    try:
        ctx = Context(now=now, tz=zone(timezone), embeddings=table)
        return compile_value(dict(args), ctx, extra), table
    except SpecError as exc:
        where = ".".join(str(p) for p in exc.path)
        raise ValueError(f"bad matcher in args{'.' + where if where else ''}: {exc}") from None

"""The raw view of an attempt: only the tool calls the model made natively.

Some adapters recover calls a model printed as text (``extracted_from_text``).
That is semantic repair: the model did not call a tool, the adapter read its
text as if it had. Scored as they are, records count those calls like native
ones (the *repaired* figures). The raw view counts them as no call: a call
printed as text is a missed call, and a printed call is no reply text either
(the adapter already took it out of the text).

A multi-step attempt without repair would have stopped at the first step whose
calls were printed: the agent loop ends when the model answers with no call.
The raw view ends the transcript there. The environment's state at that step
was not recorded (its recovered calls were answered), so when the case checks its end state,
the raw view fails that check and says why; it never compares a state the raw
attempt did not reach.

Pure functions: records in, views out. The records themselves are never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolproof.types import Message, Record, Response, ToolCall

__all__ = ["RawView", "raw_view", "recovered_calls"]


@dataclass(frozen=True, slots=True)
class RawView:
    """A record as it reads with the recovered calls taken out."""

    record: Record
    stopped_at: int | None = None
    """Multi-step: the step (from 1) the attempt would have ended at without repair; the
    recovered calls of that step were answered, so the recorded end state is not its."""


def _native(calls: list[ToolCall]) -> list[ToolCall]:
    return [c for c in calls if not c.extracted_from_text]


def recovered_calls(record: Record) -> int:
    """How many of the record's calls were recovered from text (every step)."""
    if record.transcript is not None:
        return sum(
            1
            for m in record.transcript
            if m.role == "assistant"
            for c in m.tool_calls
            if c.extracted_from_text
        )
    response = record.response
    if response is None:
        return 0
    n = 0
    for call in response.tool_calls:  # (a plain loop: this is asked of every record)
        if call.extracted_from_text:
            n += 1
    return n


def raw_view(record: Record) -> RawView | None:
    """The record with only native calls; None when none of its calls was recovered."""
    response = record.response
    if response is None or not recovered_calls(record):
        return None
    if record.transcript is None:
        view = response.model_copy(update={"tool_calls": _native(response.tool_calls)})
        return RawView(record.model_copy(update={"response": view}))
    messages = record.transcript
    step = 0
    for i, message in enumerate(messages):
        if message.role != "assistant":
            continue
        step += 1
        if not any(c.extracted_from_text for c in message.tool_calls):
            continue
        last = Message(
            role="assistant", content=message.content, tool_calls=_native(message.tool_calls)
        )
        final = Response(
            text=message.content,
            tool_calls=last.tool_calls,
            model=response.model,
        )
        update = {"transcript": [*messages[:i], last], "response": final}
        return RawView(record.model_copy(update=update), step)
    return None

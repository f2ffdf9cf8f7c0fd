"""The repaired figures: calls recovered from text counted like native calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from toolproof.stats._rates import Rate

if TYPE_CHECKING:
    from toolproof.stats._summary import Summary


class Repaired(BaseModel):
    """A target's figures with semantic repair: calls printed as text count as calls.

    The summary's own figures are raw (native tool calls only; a call printed
    as text is a missed call). These sit beside them when any call was
    recovered from text.
    """

    model_config = ConfigDict(extra="forbid")

    recovered_calls: int = Field(description="Calls recovered from text, every step counted.")
    attempts: int = Field(description="Attempts with at least one call recovered from text.")
    strict_pass: Rate
    selection: Rate
    arguments: Rate
    schema_adherence: Rate
    no_call_accuracy: Rate
    failed: int = Field(description="Scored attempts that failed.")
    unsafe_calls: int


def repaired_figures(summary: Summary, recovered_calls: int, attempts: int) -> Repaired:
    """The repaired figures of ``summary`` (a summary of the repaired verdicts)."""
    return Repaired(
        recovered_calls=recovered_calls,
        attempts=attempts,
        strict_pass=summary.strict_pass,
        selection=summary.selection,
        arguments=summary.arguments,
        schema_adherence=summary.schema_adherence,
        no_call_accuracy=summary.no_call_accuracy,
        failed=len(summary.failures),
        unsafe_calls=summary.unsafe_calls,
    )

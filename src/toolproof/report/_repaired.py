"""Raw figures with the repaired ones beside them (calls recovered from text)."""

from __future__ import annotations

from collections.abc import Callable

from toolproof.stats import Rate, Summary


def short_rate(r: Rate) -> str:
    return "–" if r.n == 0 else f"{100 * r.k / r.n:.1f}% ({r.k}/{r.n})"


def with_repaired(s: Summary, name: str, fmt: Callable[[Rate], str] = short_rate) -> str:
    """A raw rate, with its repaired value beside it when repair changes it."""
    raw: Rate = getattr(s, name)
    text = fmt(raw)
    fixed: Rate | None = getattr(s.repaired, name) if s.repaired is not None else None
    if fixed is not None and (fixed.k, fixed.n) != (raw.k, raw.n):
        text += f" · repaired {short_rate(fixed)}"
    return text


def recovered_text(s: Summary) -> str:
    """How many calls were recovered from text; the raw figures count them as missed."""
    r = s.repaired
    if r is None:
        return "0"
    calls = f"{r.recovered_calls} call{'s' if r.recovered_calls != 1 else ''}"
    return f"{calls} in {r.attempts} attempt{'s' if r.attempts != 1 else ''}, missed when raw"


def repaired_line(s: Summary) -> str:
    """The repaired headline figures in one line; "" when no call was recovered."""
    r = s.repaired
    if r is None:
        return ""
    return (
        f"strict pass {short_rate(r.strict_pass)}, tool selection {short_rate(r.selection)}, "
        f"argument accuracy {short_rate(r.arguments)} · {recovered_text(s)}"
    )

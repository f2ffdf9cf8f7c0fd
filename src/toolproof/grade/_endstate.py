"""End-state checks: compare the environment's final state with the expected one.

The expected state is either written in the case (compared partially: only the
tables, rows and fields it lists) or computed by replaying the case's gold
actions on a fresh copy of the initial state (compared in full). Any
trajectory that reaches an equal state passes, whatever the order of its
independent calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress
from operator import is_not
from typing import Any

from toolproof.match._matchers import show, strict_equal

__all__ = ["StateDiff", "compare_states", "render_state_diff"]

_MISSING = object()


@dataclass(frozen=True, slots=True)
class StateDiff:
    """One difference: where (table, row, field...), what was expected, what was found."""

    path: tuple[str, ...]
    expected: Any
    actual: Any

    def render(self) -> str:
        where = " / ".join(self.path) or "(state)"
        if self.actual is _MISSING:
            return f"{where}: expected {show(self.expected)}, missing"
        if self.expected is _MISSING:
            return f"{where}: not expected, found {show(self.actual)}"
        return f"{where}: expected {show(self.expected)}, actual {show(self.actual)}"


def compare_states(expected: Any, actual: Any, *, partial: bool) -> list[StateDiff]:
    """Every difference between two JSON states.

    ``partial``: only what ``expected`` lists is compared (mappings recursively);
    otherwise entries present only in ``actual`` are differences too.
    """
    out: list[StateDiff] = []
    _compare(expected, actual, (), partial, out)
    return out


def _compare(
    expected: Any, actual: Any, path: tuple[str, ...], partial: bool, out: list[StateDiff]
) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        keys = list(expected)
        if keys == list(actual):
            # the same keys in the same order: only values that are not the same object
            # can differ (a rebuilt state shares what did not change with the initial one)
            for key in compress(keys, map(is_not, expected.values(), actual.values())):
                _compare(expected[key], actual[key], (*path, str(key)), partial, out)
            return
        for key, value in expected.items():
            found = actual.get(key, _MISSING)
            if found is value and type(value) in _CONTAINERS:
                continue  # shared with the initial state on both sides: nothing changed here
            if found is _MISSING:
                out.append(StateDiff((*path, str(key)), value, _MISSING))
            else:
                _compare(value, found, (*path, str(key)), partial, out)
        if not partial:
            out.extend(
                StateDiff((*path, str(k)), _MISSING, v)
                for k, v in actual.items()
                if k not in expected
            )
        return
    if not strict_equal(expected, actual):
        out.append(StateDiff(path, expected, actual))


_CONTAINERS = (dict, list)


def render_state_diff(diffs: list[StateDiff], limit: int = 20) -> str:
    """The differences, one line each: table / row / field: expected ..., actual ..."""
    lines = [d.render() for d in diffs[:limit]]
    if len(diffs) > limit:
        lines.append(f"... and {len(diffs) - limit} more differences")
    return "\n".join(lines)

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, TextIO

from toolproof._jsontext import _escape_surrogates, dumps, has_surrogates
from toolproof._version import __version__
from toolproof.stats import FailureItem, Summary

if TYPE_CHECKING:
    from toolproof.gate import Comparison, GateResult

REPORT_FORMAT = "toolproof.report/1"
GATE_FORMAT = "toolproof.gate/1"
COMPARE_FORMAT = "toolproof.compare/1"


def summary_json(summaries: dict[str, Summary]) -> dict[str, Any]:
    """The report as JSON-ready data, versioned."""
    return {
        "format": REPORT_FORMAT,
        "toolproof": __version__,
        "targets": {t: s.model_dump(mode="json") for t, s in summaries.items()},
    }


def write_summary_json(out: TextIO, summaries: dict[str, Summary]) -> None:
    """Write ``dumps(summary_json(summaries), indent=2)`` and a newline, the same text,
    without building the failure lists in memory: they are written one item at a time."""
    token = secrets.token_hex(8)
    markers: dict[str, Iterable[FailureItem]] = {}
    targets: dict[str, Any] = {}
    for i, (target, s) in enumerate(summaries.items()):
        data = s.model_dump(mode="json", exclude={"failures"})
        marker = f"toolproof-failures-{token}-{i}"
        markers[marker] = s.failures
        targets[target] = {f: marker if f == "failures" else data[f] for f in Summary.model_fields}
    text = dumps({"format": REPORT_FORMAT, "toolproof": __version__, "targets": targets}, indent=2)
    start = 0
    for marker, items in markers.items():
        at = text.index(f'"failures": "{marker}"', start)
        indent = at - text.rindex("\n", 0, at) - 1
        out.write(text[start : at + len('"failures": ')])
        for chunk in _failure_list(items, indent):
            out.write(chunk)
        start = at + len(f'"failures": "{marker}"')
    out.write(text[start:])
    out.write("\n")


def _failure_list(items: Iterable[FailureItem], indent: int) -> Iterator[str]:
    """A failure list as ``dumps(..., indent=2)`` writes it at this indentation."""
    pad = " " * (indent + 2)
    inner = pad + "  "
    first = True
    for item in items:
        reasons = (
            "[\n" + ",\n".join(f"{inner}  {encode_basestring(r)}" for r in item.reasons)
            + f"\n{inner}]"
            if item.reasons
            else "[]"
        )
        text = (
            f"{',' if not first else '['}\n{pad}{{\n"
            f'{inner}"case_id": {encode_basestring(item.case_id)},\n'
            f'{inner}"attempt": {int(item.attempt)!r},\n'
            f'{inner}"risk": {encode_basestring(item.risk.value)},\n'
            f'{inner}"failure": {encode_basestring(item.failure.value)},\n'
            f'{inner}"reasons": {reasons},\n'
            f'{inner}"diff": {encode_basestring(item.diff)}\n'
            f"{pad}}}"
        )
        first = False
        yield _escape_surrogates(text) if has_surrogates(text) else text
    yield "[]" if first else "\n" + " " * indent + "]"


def gate_json(result: GateResult) -> dict[str, Any]:
    """The gate decision, every check, comparison and metric, as JSON-ready data."""
    return {"format": GATE_FORMAT, "toolproof": __version__, **result.model_dump(mode="json")}


def compare_json(comparisons: list[Comparison], warnings: list[str]) -> dict[str, Any]:
    return {
        "format": COMPARE_FORMAT,
        "toolproof": __version__,
        "warnings": warnings,
        "comparisons": [c.model_dump(mode="json") for c in comparisons],
    }

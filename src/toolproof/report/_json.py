from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolproof._version import __version__
from toolproof.stats import Summary

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

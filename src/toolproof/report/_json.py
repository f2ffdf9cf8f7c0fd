from __future__ import annotations

from typing import Any

from toolproof._version import __version__
from toolproof.stats import Summary

REPORT_FORMAT = "toolproof.report/1"


def summary_json(summaries: dict[str, Summary]) -> dict[str, Any]:
    """The report as JSON-ready data, versioned."""
    return {
        "format": REPORT_FORMAT,
        "toolproof": __version__,
        "targets": {t: s.model_dump(mode="json") for t, s in summaries.items()},
    }

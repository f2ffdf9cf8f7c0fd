"""Production traces: import, redact, replay, drift.

``import_traces`` reads OpenTelemetry GenAI (v1.28–v1.36 log events and the
v1.37+ attributes), OpenInference, OpenLLMetry and Langfuse exports and writes
a redacted replay suite with production's answers as records.
"""

from toolproof.traces._agreement import Agreement, agreement, render_agreement
from toolproof.traces._drift import Drift, Window, drift, read_window, render_drift
from toolproof.traces._emit import evaluation_logs, provenance_ids
from toolproof.traces._import import NOT_RECORDED, ImportReport, Selection, import_traces
from toolproof.traces._promote import PromoteResult, promote
from toolproof.traces._read import Problem
from toolproof.traces._redact import KINDS, Redactor, redactor_from_config

__all__ = [
    "KINDS",
    "NOT_RECORDED",
    "Agreement",
    "Drift",
    "ImportReport",
    "Problem",
    "PromoteResult",
    "Redactor",
    "Selection",
    "Window",
    "agreement",
    "drift",
    "evaluation_logs",
    "import_traces",
    "promote",
    "provenance_ids",
    "read_window",
    "redactor_from_config",
    "render_agreement",
    "render_drift",
]

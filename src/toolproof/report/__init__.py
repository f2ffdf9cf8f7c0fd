"""Reports: terminal, JSON, Markdown (PR comments) and JUnit XML."""

from toolproof.report._gate_terminal import render_comparison, render_gate
from toolproof.report._json import (
    COMPARE_FORMAT,
    GATE_FORMAT,
    REPORT_FORMAT,
    compare_json,
    gate_json,
    summary_json,
)
from toolproof.report._junit import render_junit
from toolproof.report._markdown import render_markdown
from toolproof.report._terminal import fmt_rate, render_terminal

__all__ = [
    "COMPARE_FORMAT",
    "GATE_FORMAT",
    "REPORT_FORMAT",
    "compare_json",
    "fmt_rate",
    "gate_json",
    "render_comparison",
    "render_gate",
    "render_junit",
    "render_markdown",
    "render_terminal",
    "summary_json",
]

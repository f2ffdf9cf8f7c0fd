"""Reports: terminal, JSON, Markdown (PR comments), JUnit XML and self-contained HTML."""

from toolproof.report._gate_terminal import render_comparison, render_gate
from toolproof.report._html import html_report, render_html, render_page
from toolproof.report._htmlview import RunView, run_view
from toolproof.report._json import (
    COMPARE_FORMAT,
    GATE_FORMAT,
    REPORT_FORMAT,
    compare_json,
    gate_json,
    summary_json,
    write_summary_json,
)
from toolproof.report._junit import render_junit
from toolproof.report._markdown import render_markdown
from toolproof.report._terminal import fmt_rate, render_terminal

__all__ = [
    "COMPARE_FORMAT",
    "GATE_FORMAT",
    "REPORT_FORMAT",
    "RunView",
    "compare_json",
    "fmt_rate",
    "gate_json",
    "html_report",
    "render_comparison",
    "render_gate",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_page",
    "render_terminal",
    "run_view",
    "summary_json",
    "write_summary_json",
]

"""Reports: terminal and JSON."""

from toolproof.report._json import REPORT_FORMAT, summary_json
from toolproof.report._terminal import fmt_rate, render_terminal

__all__ = ["REPORT_FORMAT", "fmt_rate", "render_terminal", "summary_json"]

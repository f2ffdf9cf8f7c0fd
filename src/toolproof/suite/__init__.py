"""Suites: loading, checking and the published JSON Schema of the format."""

from toolproof.suite._api import load_suite, load_suite_checked, suite_json_schema
from toolproof.suite._check import check_suite, expected_args_problems, tool_problems
from toolproof.suite._coverage import SuiteCoverage, ToolCoverage, suite_coverage
from toolproof.suite._load import (
    LoadedSuite,
    SuiteFile,
    load_suite_with_origin,
    load_tools_file,
    parse_state,
)

__all__ = [
    "LoadedSuite",
    "SuiteCoverage",
    "SuiteFile",
    "ToolCoverage",
    "check_suite",
    "expected_args_problems",
    "load_suite",
    "load_suite_checked",
    "load_suite_with_origin",
    "load_tools_file",
    "parse_state",
    "suite_coverage",
    "suite_json_schema",
    "tool_problems",
]

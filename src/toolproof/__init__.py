"""toolproof: measure how reliably an LLM calls tools, and gate releases on it.

The public API is re-exported here and loaded lazily, so that importing
toolproof (and starting its command line) stays fast.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType as _ModuleType  # not `types`: toolproof.types binds that name
from typing import TYPE_CHECKING, Any

from toolproof._shared.native import guard as _native_guard
from toolproof._version import __version__

# the compiled grading core only while it matches its sources (python -m toolproof.native)
_native_guard()

if TYPE_CHECKING:
    from toolproof.assertions import assert_no_tool_call, assert_tool_call
    from toolproof.errors import ProviderError, SuiteError, ToolError, ToolproofError, UserError
    from toolproof.evaluate import Evaluation, TargetEvaluation, evaluate, load_run
    from toolproof.grade import Scorer
    from toolproof.records import iter_records, read_records
    from toolproof.stats import Summary, summarize
    from toolproof.suite import load_suite, suite_json_schema
    from toolproof.types import (
        Case,
        Expect,
        FailureClass,
        Message,
        Outcome,
        Record,
        Response,
        Risk,
        Suite,
        Tool,
        ToolCall,
        Verdict,
    )

_EXPORTS = {
    "Evaluation": "toolproof.evaluate",
    "TargetEvaluation": "toolproof.evaluate",
    "evaluate": "toolproof.evaluate",
    "load_run": "toolproof.evaluate",
    "assert_no_tool_call": "toolproof.assertions",
    "assert_tool_call": "toolproof.assertions",
    "ProviderError": "toolproof.errors",
    "SuiteError": "toolproof.errors",
    "ToolError": "toolproof.errors",
    "ToolproofError": "toolproof.errors",
    "UserError": "toolproof.errors",
    "Scorer": "toolproof.grade",
    "iter_records": "toolproof.records",
    "read_records": "toolproof.records",
    "Summary": "toolproof.stats",
    "summarize": "toolproof.stats",
    "load_suite": "toolproof.suite",
    "suite_json_schema": "toolproof.suite",
    "Case": "toolproof.types",
    "Expect": "toolproof.types",
    "FailureClass": "toolproof.types",
    "Message": "toolproof.types",
    "Outcome": "toolproof.types",
    "Record": "toolproof.types",
    "Response": "toolproof.types",
    "Risk": "toolproof.types",
    "Suite": "toolproof.types",
    "Tool": "toolproof.types",
    "ToolCall": "toolproof.types",
    "Verdict": "toolproof.types",
}

__all__ = [
    "Case",
    "Evaluation",
    "Expect",
    "FailureClass",
    "Message",
    "Outcome",
    "ProviderError",
    "Record",
    "Response",
    "Risk",
    "Scorer",
    "Suite",
    "SuiteError",
    "Summary",
    "TargetEvaluation",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolproofError",
    "UserError",
    "Verdict",
    "__version__",
    "assert_no_tool_call",
    "assert_tool_call",
    "evaluate",
    "iter_records",
    "load_run",
    "load_suite",
    "read_records",
    "suite_json_schema",
    "summarize",
]


class _Package(_ModuleType):
    """The package, whose exported functions win over its subpackages of the same name.

    Importing a subpackage binds it as an attribute of its parent: once anything had
    imported ``toolproof.evaluate`` (``load_run`` does), ``from toolproof import
    evaluate`` gave that module, not the function. The module stays importable
    (``import toolproof.evaluate``, ``from toolproof.evaluate import …``); the
    attribute is the function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, _ModuleType):
            return  # the import system binding the subpackage: the export keeps the name
        super().__setattr__(name, value)


#: Exports that share their name with the subpackage that holds them.
_SHADOWED = frozenset(n for n, m in _EXPORTS.items() if m == f"{__name__}.{n}")
sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

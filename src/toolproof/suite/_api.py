from __future__ import annotations

from pathlib import Path
from typing import Any

from toolproof.errors import SuiteError, SuiteProblems
from toolproof.suite._check import check_suite
from toolproof.suite._load import LoadedSuite, SuiteFile, load_suite_with_origin
from toolproof.trust import DEFAULT_TRUST, Trust
from toolproof.types import Suite


def load_suite_checked(
    path: str | Path,
    trust: Trust = DEFAULT_TRUST,
    *,
    check_code: bool = True,
    tools: str | Path | None = None,
) -> tuple[LoadedSuite, list[SuiteError]]:
    """Load a suite and run every check; return it with the problems found.

    Problems that stop the suite from being read at all are raised as
    :class:`~toolproof.errors.SuiteProblems` (every one of them). With
    ``check_code``, a suite that runs its own Python is a problem unless
    ``trust.allow_code``. ``tools``: a tools file that replaces the suite's
    tools (``run --tools FILE``), checked with the cases that use it.
    """
    try:
        loaded = load_suite_with_origin(path, trust, tools=tools)
    except SuiteProblems as exc:
        if exc.partial is None:
            raise
        # every problem in one pass: what can still be checked in the cases that parsed
        found = {(e.file, e.line, e.column, e.detail) for e in exc.errors}
        more = [
            e
            for e in check_suite(exc.partial, None)
            if (e.file, e.line, e.column, e.detail) not in found
        ]
        every = sorted([*exc.errors, *more], key=lambda e: (e.file, e.line or 0, e.column or 0))
        raise SuiteProblems(every) from None
    return loaded, check_suite(loaded, trust if check_code else None)


def load_suite(
    path: str | Path, trust: Trust = DEFAULT_TRUST, *, tools: str | Path | None = None
) -> Suite:
    """Load and check a suite. Raises its problems as SuiteProblems.

    Whether the suite may run code is checked where code would run (``run``,
    gold-action replay), not here. ``tools``: a tools file that replaces the
    suite's tools (``run --tools FILE``).
    """
    loaded, errors = load_suite_checked(path, trust, check_code=False, tools=tools)
    if errors:
        raise SuiteProblems(errors)
    return loaded.suite


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of the suite file format, for editor completion."""
    schema = SuiteFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "toolproof suite"
    return schema

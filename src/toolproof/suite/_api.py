from __future__ import annotations

from pathlib import Path
from typing import Any

from toolproof.errors import SuiteError
from toolproof.suite._check import check_suite
from toolproof.suite._load import LoadedSuite, SuiteFile, load_suite_with_origin
from toolproof.types import Suite


def load_suite_checked(path: str | Path) -> tuple[LoadedSuite, list[SuiteError]]:
    """Load a suite and run every check; return it with the problems found."""
    loaded = load_suite_with_origin(path)
    return loaded, check_suite(loaded)


def load_suite(path: str | Path) -> Suite:
    """Load and check a suite. Raises the first problem as a SuiteError."""
    loaded, errors = load_suite_checked(path)
    if errors:
        raise errors[0]
    return loaded.suite


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of the suite file format, for editor completion."""
    schema = SuiteFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "toolproof suite"
    return schema

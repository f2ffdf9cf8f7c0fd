"""Records files: reading, and parsing a model's raw argument text."""

from toolproof.records._read import (
    TornLineWarning,
    iter_records,
    parse_arguments,
    read_records,
    tool_call_from_raw,
)

__all__ = [
    "TornLineWarning",
    "iter_records",
    "parse_arguments",
    "read_records",
    "tool_call_from_raw",
]

"""Records files: the one place that reads, writes and versions them.

A records file holds one JSON object per line, one line per attempt
(``toolproof.record/3``; ``/2`` lines, and ``/1`` lines, which hold a multi-step
attempt's whole end state rather than its changes, are still read). Writing
is append-only and durable; reading streams, skips a torn last line with a
warning and refuses any other damage with a located error;
:func:`latest_records` keeps the last record written for each (case, target,
attempt), which is what ``--resume --retry-failed`` relies on.
"""

from toolproof.records._read import (
    TornLineWarning,
    duplicate_record,
    iter_keys,
    iter_records,
    parse_arguments,
    read_records,
    tool_call_from_raw,
)
from toolproof.records._write import RecordsWriteError, RecordWriter, latest_records
from toolproof.types._record import RECORD_FORMAT

__all__ = [
    "RECORD_FORMAT",
    "RecordWriter",
    "RecordsWriteError",
    "TornLineWarning",
    "duplicate_record",
    "iter_keys",
    "iter_records",
    "latest_records",
    "parse_arguments",
    "read_records",
    "tool_call_from_raw",
]

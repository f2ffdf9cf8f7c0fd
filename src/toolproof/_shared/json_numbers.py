"""JSON text Python's ``json`` cannot read for a reason that is not its syntax.

Python refuses to convert a string of more than 4,300 digits to an integer
(``sys.get_int_max_str_digits``), and ``json.loads`` lets that ``ValueError``
out, unlocated. :func:`too_long_integer` turns it into the
``json.JSONDecodeError`` every reader already reports with its file, line
and column. :func:`no_duplicate_keys` is an ``object_pairs_hook`` that
refuses an object naming a key twice (the standard library keeps the last).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = ["DuplicateKey", "duplicate_key_error", "no_duplicate_keys", "too_long_integer"]

#: Python's default limit, as read at import (a program may have changed it).
LIMIT = sys.get_int_max_str_digits() or 4300


def too_long_integer(text: str | bytes, exc: ValueError) -> json.JSONDecodeError | None:
    """The located error for an integer beyond the digit limit, or None when ``exc`` is
    another error (which the caller re-raises)."""
    if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
        return None
    doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    found = re.search("[0-9]{" + str(LIMIT + 1) + ",}", doc)
    pos = found.start() if found is not None else 0
    return json.JSONDecodeError(
        f"an integer with more than {LIMIT:,} digits (toolproof reads up to {LIMIT:,})", doc, pos
    )


class DuplicateKey(ValueError):
    """An object names a key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for ``json.loads``: a dict, or :class:`DuplicateKey`."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


def duplicate_key_error(text: str | bytes, exc: DuplicateKey) -> json.JSONDecodeError:
    """The located error for a duplicate key: at its second appearance."""
    doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    name = json.dumps(exc.key, ensure_ascii=False)
    spots = [m.start() for m in re.finditer(re.escape(name) + r"\s*:", doc)]
    if len(spots) < 2:  # written with escapes: the object's place is not found, the key is named
        name = json.dumps(exc.key)
        spots = [m.start() for m in re.finditer(re.escape(name) + r"\s*:", doc)]
    return json.JSONDecodeError(str(exc), doc, spots[1] if len(spots) > 1 else 0)

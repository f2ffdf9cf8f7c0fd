"""The console every command prints its tables on.

On a terminal, rich fits the output to the terminal's width. Piped (a CI log, a
file), rich would assume 80 columns and squeeze wide tables into them; there
the console is :data:`PIPED_WIDTH` wide instead, unless ``COLUMNS`` says
otherwise, so CI logs show whole rows. Every table column folds what does not
fit rather than cropping it, at any width.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

__all__ = ["PIPED_WIDTH", "console"]

#: The width of output that goes to no terminal, when ``COLUMNS`` is not set.
PIPED_WIDTH = 200


def console(*, stderr: bool = False, **options: Any) -> Console:
    """A console for a command's output (``stderr``: for its messages)."""
    stream = sys.stderr if stderr else sys.stdout
    if "width" not in options and not os.environ.get("COLUMNS") and not _is_terminal(stream):
        options["width"] = PIPED_WIDTH
    return Console(stderr=stderr, **options)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False

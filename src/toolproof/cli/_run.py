"""The `run` command (owned by the runner)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the run command to the app."""

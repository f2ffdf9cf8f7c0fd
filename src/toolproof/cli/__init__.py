"""The toolproof command line: a thin layer over the library API."""

from toolproof.cli._app import app, main, program

__all__ = ["app", "main", "program"]

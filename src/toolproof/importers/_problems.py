"""A problem in a source, located by its field path; turned into a SuiteError with a line."""

from __future__ import annotations


class ImportProblem(Exception):
    """The source cannot be imported: what is wrong, and where (a field path)."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message

"""Review of generated cases: read a cases file, decide case by case, write back at once.

Each decision is written before the next case is shown (the file is replaced
whole, atomically), so a review stopped at any point resumes where it
stopped: cases already accepted, edited or rejected are not shown again.
Rejected cases move to ``<name>.rejected.jsonl`` beside the file, so a suite
that reads the cases file never runs them. An edit is saved only when it is a
valid case and, when the suite in the file's folder reads the file, when that
suite's checks (``validate``'s) find nothing new in it: a tool it defines,
arguments its schema takes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolproof.errors import SuiteError, UserError, format_path
from toolproof.types import Case

__all__ = ["ReviewFile", "read_review"]


@dataclass
class ReviewFile:
    path: Path
    cases: list[dict[str, Any]]
    rejected: list[dict[str, Any]] = field(default_factory=list)
    check: Callable[[dict[str, Any]], None] | None = None
    """Raises ValueError for an edited case the suite reading the file would refuse."""

    @property
    def rejected_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".rejected.jsonl")

    def waiting(self) -> list[int]:
        """Indexes of the cases still marked needs-review."""
        return [
            i
            for i, c in enumerate(self.cases)
            if isinstance(c.get("generated"), dict)
            and c["generated"].get("status") == "needs-review"
        ]

    def counts(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for c in self.cases:
            gen = c.get("generated")
            if isinstance(gen, dict):
                out[str(gen.get("status"))] += 1
        out["rejected"] += len(self.rejected)
        return out

    def decide(self, index: int, status: str, edits: dict[str, Any] | None = None) -> None:
        """Mark one case accepted, edited (with ``edits`` applied) or rejected, and save."""
        case = self.cases[index]
        if edits:
            updated = {**case, **edits}
            Case.model_validate(updated)  # raises ValueError for an edit that breaks the case
            if self.check is not None:
                self.check(updated)
            case = updated
        case["generated"] = {**case["generated"], "status": status}
        if status == "rejected":
            self.rejected.append(case)
            del self.cases[index]
        else:
            self.cases[index] = case
        self.save()

    def save(self) -> None:
        _write(self.path, self.cases)
        if self.rejected:
            _write(self.rejected_path, self.rejected)


def _write(path: Path, cases: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for case in cases:
            fh.write(json.dumps(case, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def _read(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(str(path), f"cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise SuiteError(str(path), f"not JSON: {exc}", line=number) from None
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            raise SuiteError(str(path), "a case is an object with a string 'id'", line=number)
        out.append(value)
    return out


def read_review(path: str | Path) -> ReviewFile:
    """A cases file to review, with the cases rejected in earlier sessions."""
    p = Path(path)
    review = ReviewFile(p, _read(p), check=_suite_check(p))
    if review.rejected_path.exists():
        review.rejected = _read(review.rejected_path)
    return review


def _suite_check(path: Path) -> Callable[[dict[str, Any]], None] | None:
    """The checks ``validate`` runs, on one case, with the suite in ``path``'s folder
    that reads ``path`` (its tools, defaults and timezone); None when no such suite
    loads (the case is then only checked to be a valid case)."""
    from toolproof.suite._check import check_suite
    from toolproof.suite._load import LoadedSuite, Origin, load_suite_with_origin

    try:
        loaded = load_suite_with_origin(path.parent)
        target = path.resolve()
        if not any(Path(where.file).resolve() == target for where, _ in loaded.origin.cases):
            return None
    except (UserError, OSError, ValueError):
        return None
    suite = loaded.suite

    def problems(cases: list[Case]) -> list[str]:
        one = LoadedSuite(suite.model_copy(update={"cases": cases}), Origin())
        return [f"{format_path(e.path)}: {e.detail}" for e in check_suite(one)]

    known = set(problems([]))  # the suite's own (its tools'), not the edit's

    def check(case: dict[str, Any]) -> None:
        new = [p for p in problems([Case.model_validate(case)]) if p not in known]
        if new:
            raise ValueError("; ".join(new))

    return check

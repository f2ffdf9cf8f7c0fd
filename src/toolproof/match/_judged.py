"""Arguments whose meaning a judge decides: ``{semantic: TEXT, judge: true}``.

Matching stays pure and never calls a judge. The matcher reads the judge's
answers from a :class:`Decisions` table filled at the edge from stored
judgements (rubric ``argument_meaning``). Every comparison it makes is noted
as a :class:`Question`; one the table has no answer for is *undecided*: the
scorer grades the rest of the call as usual and leaves the attempt neither
passed nor failed by that argument, and the caller may ask a judge.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Decisions", "Question"]

#: How the table answers: as the judge said, or as if it said "same" or "different"
#: everywhere (the scorer grades both ways to learn whether an outcome turns on the judge).
Mode = Literal["judged", "same", "different"]


@dataclass(frozen=True, slots=True)
class Question:
    """Does ``actual`` mean what ``expected`` means, as parameter ``param`` of ``tool``?"""

    tool: str
    param: str
    expected: str
    actual: str

    @property
    def subject(self) -> str:
        """A digest of the question: the key of its judgements and of its decision."""
        blob = json.dumps(
            [self.tool, self.param, self.expected, self.actual], ensure_ascii=False
        ).encode("utf-8", "surrogatepass")
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass
class Decisions:
    """The judge's answers by question subject, and the questions asked while grading."""

    answers: dict[str, bool] = field(default_factory=dict)
    asked: dict[str, Question] = field(default_factory=dict)
    mode: Mode = "judged"
    matchers: int = 0
    """How many judge-decided matchers were compiled against this table."""
    statements: dict[tuple[str | None, str, int], bool] = field(default_factory=dict)
    """The ``nl_assertion`` judge's answer (``holds``) by attempt (target, case, attempt): it
    decides the attempt's judged statements (``communicate: judged``, ``nl_assertions``)."""

    def decide(self, question: Question) -> bool | None:
        """True (same meaning), False (different), or None (no answer yet)."""
        self.asked.setdefault(question.subject, question)
        if self.mode == "same":
            return True
        if self.mode == "different":
            return False
        return self.answers.get(question.subject)

    def take_asked(self) -> list[Question]:
        """The questions asked since the last call, forgetting them."""
        out = list(self.asked.values())
        self.asked.clear()
        return out

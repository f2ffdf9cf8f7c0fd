"""What the gate and ``run`` allow of attempts without a model answer. Pure: no I/O.

An attempt that ended in a rate limit, a server error, a timeout, a network
failure or a rejected request says nothing about the model: it is not scored.
Nor is a conversation whose simulated user erred (``user_error``): it is
counted here like an infrastructure failure.
The allowance is a share of a target's attempts (``--max-infra-errors 5%``),
so it means the same for 6 attempts as for 6,000. A harness error (a fault of
toolproof's own while handling an attempt) is never allowed: the run cannot
be trusted, whatever the allowance.

A gate must also have something to judge: a target, a risk class or a
critical case whose attempts all ended without a model answer has no scored
attempt, and cannot pass (:func:`unscored`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toolproof.types import Outcome, Record, Risk, Verdict

__all__ = ["InfraAllowance", "InfraCheck", "check_infra", "unscored"]

_PERCENT = re.compile(r"\s*([0-9]{1,3}(?:\.[0-9]{1,4})?)\s*%\s*")


@dataclass(frozen=True)
class InfraAllowance:
    """The share of a target's attempts that may end without a model answer (0 to 1)."""

    share: float = 0.0

    def __post_init__(self) -> None:
        if not (0.0 <= self.share <= 1.0):
            raise ValueError("the share of attempts must be between 0 and 1")

    @classmethod
    def parse(cls, text: str) -> InfraAllowance:
        """``5%`` (or ``0``). A bare count is refused: it meant attempts, not a share.

        Raises ``ValueError`` with the message to show.
        """
        if text.strip() == "0":
            return cls(0.0)
        found = _PERCENT.fullmatch(text)
        if found is None:
            bare = text.strip().isdigit()
            hint = (
                f"; a bare count ({text.strip()}) is no longer accepted: the allowance is a "
                "share of each target's attempts (3 of 60 attempts is 5%)"
                if bare
                else ""
            )
            raise ValueError(f"expected a percentage of attempts such as 5% or 0{hint}")
        value = float(found[1])
        if value > 100:
            raise ValueError("a percentage of attempts is at most 100%")
        return cls(value / 100.0)

    def allowed(self, attempts: int) -> int:
        """How many of ``attempts`` may go without a model answer."""
        return math.floor(self.share * attempts + 1e-9)

    def __str__(self) -> str:
        return f"{100 * self.share:g}%"


@dataclass(frozen=True)
class InfraCheck:
    """One target's attempts without a model answer, against the allowance."""

    target: str
    attempts: int
    unanswered: int
    """Infrastructure outcomes: rate limited, server error, timeout, network, rejected."""
    harness_errors: int
    allowance: InfraAllowance
    user_errors: int = 0
    """Of ``unanswered``: conversations whose simulated user erred (``user_error``)."""

    @property
    def over(self) -> bool:
        return self.unanswered > self.allowance.allowed(self.attempts)

    @property
    def failed(self) -> bool:
        """Over the allowance, or any harness error: the run cannot be judged (exit 3)."""
        return self.over or self.harness_errors > 0

    def message(self) -> str:
        share = self.unanswered / self.attempts if self.attempts else 0.0
        text = (
            f"attempts without a model answer (infrastructure): {self.unanswered} of "
            f"{self.attempts} ({100 * share:.1f}%), allowed ≤ {self.allowance} "
            f"(--max-infra-errors) = {self.allowance.allowed(self.attempts)}"
        )
        if self.user_errors:
            text += (
                f"; {self.user_errors} of them had a simulated user that erred (user_error), "
                "counted like infrastructure"
            )
        if self.harness_errors:
            text += (
                f"; {self.harness_errors} harness error(s) (toolproof failed on an attempt), "
                "never allowed"
            )
        return text


def check_infra(target: str, records: Iterable[Record], allowance: InfraAllowance) -> InfraCheck:
    """Count one target's attempts without a model answer."""
    attempts = unanswered = harness = users = 0
    for r in records:
        attempts += 1
        if r.outcome is Outcome.harness_error:
            harness += 1
        elif r.outcome is not Outcome.ok:
            unanswered += 1
            users += r.outcome is Outcome.user_error
    return InfraCheck(target, attempts, unanswered, harness, allowance, users)


def unscored(
    records: Iterable[Record], verdicts: Iterable[Verdict], risks: Mapping[str, Risk]
) -> list[str]:
    """Why a target cannot pass for lack of scored attempts: one line per reason.

    The target itself with no scored attempt; each risk class with attempts but
    none scored; each critical case with attempts but none scored. ``risks``:
    the risk class of each case (as graded).
    """
    attempted: dict[str, int] = {}
    for r in records:
        attempted[r.case_id] = attempted.get(r.case_id, 0) + 1
    scored: dict[str, int] = {}
    for v in verdicts:
        scored[v.case_id] = scored.get(v.case_id, 0) + 1
    if not attempted:
        return []
    total = sum(scored.values())
    if not total:
        return [
            f"no attempt was scored: all {sum(attempted.values())} attempts ended without a "
            "model answer, so there is nothing to judge"
        ]
    out = []
    by_risk: dict[Risk, tuple[int, int]] = {}
    for case_id, n in attempted.items():
        risk = risks.get(case_id, Risk.low)
        tried, done = by_risk.get(risk, (0, 0))
        by_risk[risk] = (tried + n, done + scored.get(case_id, 0))
    for risk in sorted(by_risk, key=lambda r: -r.rank):
        tried, done = by_risk[risk]
        if not done:
            out.append(
                f"risk class {risk.value}: none of its {tried} attempts was scored (all ended "
                "without a model answer)"
            )
    for case_id in sorted(attempted):
        if risks.get(case_id) is Risk.critical and not scored.get(case_id):
            out.append(
                f"{case_id} (critical case): none of its {attempted[case_id]} attempts was "
                "scored (all ended without a model answer)"
            )
    return out

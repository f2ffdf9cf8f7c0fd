"""A suite's own check: a Python function behind the check interface.

The function takes the case and the answer and returns ``True`` (passed),
``False`` (failed) or a ``Finding`` (passed or not, with a reason)::

    def mentions_order_id(case, answer):
        ok = "ORD-" in (answer.response.text or "")
        return Finding(ok, "the reply names the order" if ok else "no order ID in the reply")

``case`` is the suite's ``Case``; ``answer`` offers ``response``, ``calls``,
``messages`` and ``end_state`` (see ``AnswerView``). Loading the function is
done outside grading, with the user's consent (``toolproof.run.load_checks``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolproof.errors import HarnessError
from toolproof.grade._compile import CompiledCase
from toolproof.types import Check, FailureClass, Stage

__all__ = ["Finding", "FunctionCheck"]


@dataclass(frozen=True, slots=True)
class Finding:
    """What a suite's own check found: whether the answer passed, and why."""

    passed: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class FunctionCheck:
    """A check made of a plain function ``fn(case, answer) -> bool | Finding``."""

    name: str
    fn: Callable[[Any, Any], Any]

    def evaluate(self, case: CompiledCase, answer: Any) -> Sequence[Check]:
        try:
            result = self.fn(case.case, answer)
        except Exception as exc:  # the check itself failed: not the model's fault
            raise HarnessError(
                f"check '{self.name}' raised {type(exc).__name__}: {exc} (case {case.case.id})"
            ) from exc
        if isinstance(result, Finding):
            passed, reason = result.passed, result.reason
        elif isinstance(result, bool):
            passed, reason = result, ""
        else:
            raise HarnessError(
                f"check '{self.name}' returned {type(result).__name__}; "
                "return True, False or Finding(passed, reason)"
            )
        if passed:
            return ()
        why = f"{self.name}: {reason or 'failed'}"
        return (Check(Stage.contract, FailureClass.custom_check, why, source=self.name),)

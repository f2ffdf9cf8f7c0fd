"""One case's attempts: when more of them can change none of its figures.

A case's figures over K planned attempts are its pass^K (all K pass), its
pass@K (at least one passes) and its class: steady pass, steady failure or
flaky. After an attempt that passed *and* one that failed, all three are
settled: pass^K is 0, pass@K is 1 and the case is flaky, whatever the other
attempts do. A case whose attempts all passed (or all failed) is not settled:
a later failure (pass) would change pass^K (pass@K) and its class.

The one exception is a target that repeats itself: sampled at temperature 0
with a fixed seed, a target that gave the very same answer to every attempt so
far is taken to give it again, so its case is settled as well. That is an
assumption about the target, stated in the docs, and it holds only while the
answers are identical: one different answer and the case is open again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


@dataclass(frozen=True, slots=True)
class Seen:
    """One attempt as the schedule sees it.

    ``passed`` is None when the attempt got no model answer (an infrastructure
    failure or a harness error): it is neither a pass nor a failure. ``answer``
    is a fingerprint of the answer (calls, arguments, text), compared for the
    repeat rule; ``figures`` holds, for each rate metric the attempt counts
    in, whether it succeeded there.
    """

    passed: bool | None
    answer: str | None = None
    figures: Mapping[str, bool] = field(default_factory=dict)


class CaseState(StrEnum):
    """Where one case stands in an adaptive schedule."""

    open = "open"
    """More attempts may change its figures: it runs the next round."""
    mixed = "mixed"
    """It passed and failed: pass^k 0, pass@k 1, flaky, whatever comes next."""
    repeats = "repeats"
    """Temperature 0 and a seed, the same answer every time: taken to repeat."""
    planned = "planned"
    """It ran every planned attempt."""


def case_state(
    seen: Sequence[Seen], max_repeats: int, min_repeats: int, repeatable: bool
) -> CaseState:
    """The state of a case after its attempts ``seen`` (in attempt order).

    A case runs at least ``min_repeats`` and at most ``max_repeats`` attempts.
    ``repeatable``: the target samples at temperature 0 with a fixed seed.
    """
    n = len(seen)
    if n >= max_repeats:
        return CaseState.planned
    if n < min_repeats:
        return CaseState.open
    outcomes = [s.passed for s in seen]
    if True in outcomes and False in outcomes:
        return CaseState.mixed
    if repeatable and None not in outcomes:
        answers = {s.answer for s in seen}
        if len(answers) == 1 and None not in answers:
            return CaseState.repeats
    return CaseState.open


def pass_hat_k_adaptive(n: int, c: int, k: int, *, repeats: bool = False) -> float | None:
    """pass^k of a case with ``c`` passes in ``n`` attempts, when cases differ in ``n``.

    * ``n >= k``: ``C(c, k) / C(n, k)``, the unbiased estimator (tau-bench);
    * ``n < k`` and a failure among them: 0 exactly — any k attempts that
      include that failure do not all pass, and the fixed plan's k do;
    * ``n < k``, every attempt passed, the case repeating itself: 1;
    * ``n < k``, every attempt passed otherwise: None (undecided; left out of
      the mean, and counted as such).
    """
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1, got n={n} c={c} k={k}")
    if n >= k:
        return math.comb(c, k) / math.comb(n, k)
    if c < n:
        return 0.0
    if repeats and n > 0:
        return 1.0
    return None


def pass_at_k_adaptive(n: int, c: int, k: int, *, repeats: bool = False) -> float | None:
    """pass@k of a case with ``c`` passes in ``n`` attempts, when cases differ in ``n``.

    ``n >= k``: ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021); ``n < k`` with a
    pass: 1 exactly; with none, 0 for a case repeating itself, else None.
    """
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1, got n={n} c={c} k={k}")
    if n >= k:
        return 1.0 - math.comb(n - c, k) / math.comb(n, k)
    if c > 0:
        return 1.0
    if repeats and n > 0:
        return 0.0
    return None

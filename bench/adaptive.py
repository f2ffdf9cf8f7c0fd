"""Adaptive repeats, simulated: calls saved and decisions changed against the fixed plan.

Each simulated run draws a suite of cases with a realistic mix of per-case
pass probabilities (most cases always pass or always fail, a flaky band in
between; a share of the targets deterministic: temperature 0 and a seed, the
same answer every time), draws every attempt of the fixed plan of K repeats
once, and schedules the same draws through ``toolproof.adaptive.next_round``,
the function the runner asks (not a copy of it). Then, for each schedule:

* the share of the fixed plan's attempts it saved;
* how often the gate's decision (strict pass ≥ threshold, read over the full
  rounds, as the gate reads an adaptive run) differs from the fixed plan's;
* how often it is wrong against the true rate (the mean of the cases' chances);
* how often a decision the mixture SPRT took early (before the last round) is
  wrong, beside the bound it promises (α = 1 - confidence);
* how often a case's pass^k differs from the fixed plan's (the per-case rule
  promises never, for the deterministic targets and for every case it stops).

    python bench/adaptive.py [--runs 2000] [--cases 300] [--k 5] [--min 2] [--seed 0] [--near]

Target: at least 40% of the calls saved at k = 5 on the realistic mix, and the
early decisions' wrong rate within the promised bound.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from dataclasses import dataclass

from toolproof.adaptive import Bound, Plan, Seen, next_round, pass_hat_k_adaptive


@dataclass
class Suite:
    chances: list[float]
    deterministic: bool

    @property
    def truth(self) -> float:
        return sum(self.chances) / len(self.chances)


def draw_suite(rng: random.Random, cases: int, near: float | None = None) -> Suite:
    """A realistic mix: reliable passes, reliable failures, a flaky band; 1 in 4 deterministic.

    ``near``: a hard mix instead, every target sampling, with a fifth of its cases
    flaky and its true rate within 0.03 of ``near`` (the threshold).
    """
    if near is not None:
        flaky = 0.2
        passing = (rng.uniform(near - 0.03, near + 0.03) - flaky * 0.5) / (1 - flaky)
        deterministic = False
    else:
        deterministic = rng.random() < 0.25
        passing = rng.uniform(0.6, 0.98)
        flaky = 0.0 if deterministic else rng.uniform(0.02, 0.20)
    chances = []
    for _ in range(cases):
        u = rng.random()
        if u < flaky:
            chances.append(rng.uniform(0.05, 0.95))
        elif u < flaky + (1 - flaky) * passing:
            chances.append(1.0)
        else:
            chances.append(0.0)
    return Suite(chances, deterministic)


def draw_attempts(rng: random.Random, suite: Suite, k: int) -> list[list[bool]]:
    """Every attempt of the fixed plan, drawn once; a deterministic target repeats itself."""
    out = []
    for p in suite.chances:
        if suite.deterministic:
            out.append([rng.random() < p] * k)
        else:
            out.append([rng.random() < p for _ in range(k)])
    return out


def seen(passed: bool, case: int, attempt: int, deterministic: bool) -> Seen:
    # a deterministic target gives the same answer each time; otherwise answers differ
    answer = f"{case}:{passed}" if deterministic else f"{case}:{attempt}"
    return Seen(passed=passed, answer=answer, figures={"strict_pass": passed})


@dataclass
class Outcome:
    attempts: int
    full_rounds: int
    decision: bool
    early: bool
    stopped_early: int
    hat_k_differs: int


def schedule(draws: list[list[bool]], suite: Suite, plan: Plan, bound: Bound) -> Outcome:
    """Run the adaptive schedule over the drawn attempts, as the runner does."""
    history: dict[str, list[Seen]] = {str(i): [] for i in range(len(draws))}
    done = attempts = 0
    while True:
        step = next_round(history, done, plan, bounds=[bound], repeatable=suite.deterministic)
        if not step.cases:
            break
        for case in step.cases:
            i = int(case)
            history[case].append(seen(draws[i][done], i, done, suite.deterministic))
            attempts += 1
        done += 1
    rounds = step.full_rounds
    k = n = 0
    for attempts_of in history.values():
        for s in attempts_of[:rounds]:
            n += 1
            k += bool(s.passed)
    decision = k >= bound.required * n
    differs = 0
    for case, attempts_of in history.items():
        fixed = draws[int(case)]
        hat_fixed = math.comb(sum(fixed), plan.max_repeats) / math.comb(
            len(fixed), plan.max_repeats
        )
        c = sum(bool(s.passed) for s in attempts_of)
        hat = pass_hat_k_adaptive(
            len(attempts_of), c, plan.max_repeats, repeats=step.stopped.get(case) == "repeats"
        )
        if hat is not None and hat != hat_fixed:
            differs += 1
    stopped = sum(1 for a in history.values() if len(a) < plan.max_repeats)
    # decided early: the mixture SPRT settled the threshold before the last round
    early = rounds < plan.max_repeats and all(d.decided is not None for d in step.decisions)
    return Outcome(attempts, rounds, decision, early, stopped, differs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--min", type=int, default=2, dest="min_repeats")
    parser.add_argument("--threshold", type=float, default=0.85)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--near",
        action="store_true",
        help="the hard mix: true rates within 0.03 of the threshold, a fifth of the cases flaky",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bound = Bound(key="all: strict_pass", metric="strict_pass", required=args.threshold)
    plans = {
        "--repeats auto": Plan(args.k, args.min_repeats, False, args.confidence),
        "--repeats auto --until-decided": Plan(args.k, args.min_repeats, True, args.confidence),
    }
    planned = args.cases * args.k
    totals = {
        name: {"saved": 0.0, "differs": 0, "wrong": 0, "early": 0, "early_wrong": 0,
               "stopped": 0, "hat_differs": 0, "det_saved": 0.0, "sto_saved": 0.0}
        for name in plans
    }  # fmt: skip
    fixed_wrong = 0
    deterministic = 0
    started = time.perf_counter()
    for _ in range(args.runs):
        suite = draw_suite(rng, args.cases, args.threshold if args.near else None)
        draws = draw_attempts(rng, suite, args.k)
        truth = suite.truth >= args.threshold
        passes = sum(sum(row) for row in draws)
        fixed = passes >= args.threshold * planned
        fixed_wrong += fixed != truth
        deterministic += suite.deterministic
        for name, plan in plans.items():
            out = schedule(draws, suite, plan, bound)
            t = totals[name]
            saved = 1 - out.attempts / planned
            t["saved"] += saved
            t["det_saved" if suite.deterministic else "sto_saved"] += saved
            t["differs"] += out.decision != fixed
            t["wrong"] += out.decision != truth
            t["early"] += out.early
            t["early_wrong"] += out.early and out.decision != truth
            t["stopped"] += out.stopped_early
            t["hat_differs"] += out.hat_k_differs
    elapsed = time.perf_counter() - started
    runs = args.runs
    alpha = 1 - args.confidence
    print(
        f"{runs} simulated runs · {args.cases} cases · k = {args.k} · min repeats "
        f"{args.min_repeats} · gate: strict pass ≥ {args.threshold:.2f} · confidence "
        f"{args.confidence} · {deterministic} deterministic targets · seed {args.seed}"
        + (" · hard mix (true rates within 0.03 of the threshold)" if args.near else "")
    )
    print(
        f"fixed plan ({planned} attempts a run): wrong against the true rate in "
        f"{fixed_wrong} runs ({100 * fixed_wrong / runs:.2f}%)"
    )
    print()
    header = ("schedule", "calls saved", "det. / stoch.", "cases stopped",
              "≠ fixed plan", "wrong vs truth", "decided early", "early & wrong",
              "pass^k ≠ fixed")  # fmt: skip
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for name, t in totals.items():
        stoch = runs - deterministic
        early = int(t["early"])
        row = (
            name,
            f"{100 * t['saved'] / runs:.1f}%",
            f"{100 * t['det_saved'] / max(1, deterministic):.1f}% / "
            f"{100 * t['sto_saved'] / max(1, stoch):.1f}%",
            f"{t['stopped'] / runs:.1f} of {args.cases}",
            f"{int(t['differs'])} ({100 * t['differs'] / runs:.2f}%)",
            f"{int(t['wrong'])} ({100 * t['wrong'] / runs:.2f}%)",
            f"{early} ({100 * early / runs:.1f}%)",
            f"{int(t['early_wrong'])} ({100 * t['early_wrong'] / max(1, early):.2f}% of early; "
            f"bound {100 * alpha:.0f}%)",
            str(int(t["hat_differs"])),
        )
        print(" | ".join(row))
    print()
    load = os.getloadavg()
    print(f"simulated in {elapsed:.1f} s; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()

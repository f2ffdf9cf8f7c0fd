"""Fault injection: 10% HTTP 500, 5% timeouts, 5% truncated bodies, and bursts of 429.

Runs a suite against the OpenAI-compatible stub (its own process) twice: a
clean run, then a faulty one. Prints the crashes (exceptions out of the
runner, and harness errors), how each attempt ended (a model verdict or a
classified infrastructure outcome), and how many infrastructure failures
were counted as model failures (a verdict that differs from the clean
run's for the same case and attempt, or a verdict given to an attempt that
got no answer).

    python bench/faults.py [--suite examples/support] [--repeats 5] [--max-retries 3]

Target: 0 crashes, every attempt a verdict or a classified outcome, 0 infra counted as model.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from overhead import ANSWER, StubProcess, openai_target

from toolproof.grade import Scorer
from toolproof.run import RetryPolicy, RunOptions, RunResult, expected_states, run_suite
from toolproof.suite import load_suite
from toolproof.testing import Delay, RateLimit, ServerError, StubServer, Truncated
from toolproof.testing._script import Step
from toolproof.trust import Trust
from toolproof.types import Outcome, Suite

INFRA = {o for o in Outcome if o.is_infrastructure}


class FaultyStub(StubServer):
    """Answers with injected faults, drawn from a seeded generator."""

    def __init__(self, *, seed: int = 7, burst_every: int = 150, burst_len: int = 12, **kw: Any):
        super().__init__(**kw)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._n = 0
        self.burst_every = burst_every
        self.burst_len = burst_len

    def _next_step(self) -> Step | None:
        with self._lock:
            self._n += 1
            if self._n % self.burst_every < self.burst_len:
                return RateLimit(retry_after="0.05")
            roll = self._rng.random()
        if roll < 0.10:
            return ServerError()
        if roll < 0.15:
            return Delay(2.0, ANSWER)
        if roll < 0.20:
            return Truncated(ANSWER)
        return super()._next_step()


def run(suite: Suite, stub_class: Any, repeats: int, max_retries: int, tmp: Path) -> RunResult:
    with StubProcess(0.005, stub_class) as stub:
        target = openai_target(
            stub.base_url, concurrency=16, timeout_s=0.5, max_retries=max_retries
        )
        opts = RunOptions(
            out=tmp, cache=False, repeats=repeats, retry=RetryPolicy(base_s=0.05, cap_s=0.5)
        )
        return run_suite(suite, [target], opts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="examples/support")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-retries", type=int, default=3)
    args = parser.parse_args()
    suite = load_suite(args.suite)
    scorer = Scorer(suite, expected_states(suite, Trust(allow_code=True)))

    with tempfile.TemporaryDirectory() as tmp:
        clean = run(suite, StubServer, args.repeats, args.max_retries, Path(tmp) / "clean")
        crashes = 0
        try:
            faulty = run(suite, FaultyStub, args.repeats, args.max_retries, Path(tmp) / "faulty")
        except Exception as exc:  # a crash of the runner itself
            print(f"CRASH: {type(exc).__name__}: {exc}")
            raise SystemExit(1) from exc

    reference = {(r.case_id, r.attempt): scorer.grade(r) for r in clean.records}
    outcomes = Counter(r.outcome.value for r in faulty.records)
    crashes += outcomes.get(Outcome.harness_error.value, 0)
    scored = unclassified = infra_as_model = 0
    for rec in faulty.records:
        verdict = scorer.grade(rec)
        if rec.outcome is Outcome.ok:
            scored += verdict is not None
            ref = reference[(rec.case_id, rec.attempt)]
            if (
                verdict is None
                or ref is None
                or (verdict.passed, verdict.failure)
                != (
                    ref.passed,
                    ref.failure,
                )
            ):
                infra_as_model += 1
        elif rec.outcome in INFRA:
            infra_as_model += verdict is not None
        else:
            unclassified += 1
    total = len(suite.cases) * args.repeats
    print(f"attempts                 {total}, records {len(faulty.records)}")
    print(f"retries                  {faulty.manifest.counts.get('retries', 0)}")
    print(f"outcomes                 {dict(sorted(outcomes.items()))}")
    print(f"crashes                  {crashes}   (target 0)")
    print(f"model verdicts           {scored}")
    print(f"classified infra         {sum(outcomes[o.value] for o in INFRA)}")
    print(f"neither                  {unclassified + total - len(faulty.records)}   (target 0)")
    print(f"infra counted as model   {infra_as_model}   (target 0)")


if __name__ == "__main__":
    main()

"""The repeat statistics (pass@k, pass^k, flaky cases, bootstrap intervals) on many attempts.

Verdicts are made by grading the bundled example suite's recorded answers,
then copied under new case IDs and attempt numbers (about a third of the
attempts flip their outcome, so cases are flaky and intervals are not
degenerate). ``stats.stability`` is timed on N attempts spread over C cases.

Usage: python bench/stats_scale.py [N:C ...]
       (default 25000:2500 1000000:100000 1000000:1000)
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from pathlib import Path

from toolproof.grade import Scorer
from toolproof.records import read_records
from toolproof.run import expected_states
from toolproof.stats import stability
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Verdict

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"


def seeds() -> list[Verdict]:
    suite = load_suite(SUITE, Trust(allow_code=True))
    scorer = Scorer(suite, expected_states(suite, Trust(allow_code=True)))
    out = []
    for name in ("records.jsonl", "records-b.jsonl"):
        for record in read_records(SUITE / name):
            verdict = scorer.grade(record)
            if verdict is not None:
                out.append(verdict._replace(evidence=None))
    return out


def verdicts(n: int, cases: int, base: list[Verdict]) -> list[Verdict]:
    rng = random.Random(n + cases)
    out = []
    per = max(1, n // cases)
    for i in range(n):
        case, attempt = divmod(i, per)
        v = base[case % len(base)]
        passed = v.passed if rng.random() > 0.3 else not v.passed
        out.append(v._replace(case_id=f"c{case}", attempt=attempt, passed=passed))
    return out


def spec(text: str) -> tuple[int, int]:
    n, sep, cases = text.partition(":")
    if not sep or not n.isdigit() or not cases.isdigit() or int(cases) == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected N:C, e.g. 25000:2500")
    return int(n), int(cases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "specs",
        nargs="*",
        type=spec,
        metavar="N:C",
        help="N attempts over C cases (default 25000:2500 1000000:100000 1000000:1000)",
    )
    args = parser.parse_args()
    specs = args.specs or [(25000, 2500), (1000000, 100000), (1000000, 1000)]
    base = seeds()
    stability(base[:4])  # imports numpy and scipy: a fixed cost, not counted
    for n, cases in specs:
        vs = verdicts(n, cases, base)
        t = time.perf_counter()
        c = time.process_time()
        st = stability(vs)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        assert st is not None
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"stability: {n:>9,} attempts over {cases:>7,} cases  {wall:6.2f} s wall  "
            f"{cpu:6.2f} s CPU  pass^k {st.pass_hat_k.value:.3f} "
            f"[{st.pass_hat_k.low:.3f}, {st.pass_hat_k.high:.3f}]  "
            f"flaky {len(st.flaky):,}  peak RSS {rss:.0f} MB"
        )


if __name__ == "__main__":
    main()

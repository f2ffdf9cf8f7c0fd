"""Grading speed of two versions of toolproof side by side: in one process, interleaved.

Loads the scorer of checkout A and of checkout B into one interpreter (each
from its own ``src``), generates the P1 mix of ``grading_mix.py`` with each
(2,000 cases, 20,000 answers, the same seed, so the same answers), and grades
it with A and B in turn, round after round (the order swapped each round), so
that both meet the same load. Figures: CPU µs per answer (process_time, gc
off), the whole mix and its passing and failing answers apart, min and median
over the rounds, and B's over A's. The answers are split by B's verdicts; A
must agree on every outcome, else the script stops.

Usage: python bench/score_ab.py A_ROOT B_ROOT [ROUNDS]   (default 7 rounds)
e.g. a checkout of the commit before a change as A, this one as B.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KINDS = ("mix", "passing", "failing")


def _load(root: Path, folder: Path) -> tuple[Any, list[Any]]:
    """The scorer of the checkout at ``root`` and the mix's records, read by it."""
    for name in [m for m in sys.modules if m.split(".")[0] in ("toolproof", "grading_mix")]:
        del sys.modules[name]
    sys.path[:0] = [str(root / "src"), str(root / "bench")]
    try:
        mix = importlib.import_module("grading_mix")
        grade = importlib.import_module("toolproof.grade")
        records = importlib.import_module("toolproof.records")
        if not str(grade.__file__).startswith(str(root)):
            sys.exit(f"toolproof was not loaded from {root}: {grade.__file__}")
        suite, path = mix.make_mix(2_000, 20_000, folder)
        return grade.Scorer(suite), records.read_records(path)
    finally:
        del sys.path[:2]


def _outcome(verdict: Any) -> tuple[bool, str, str]:
    return verdict.passed, str(verdict.failure), str(verdict.checks)


def main() -> None:
    a_root, b_root = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        a, a_records = _load(a_root, Path(one))
        b, b_records = _load(b_root, Path(two))
    verdicts = [b.grade(r) for r in b_records]
    if any(_outcome(a.grade(r)) != _outcome(v) for r, v in zip(a_records, verdicts, strict=True)):
        sys.exit("A and B disagree on an outcome: not the same grading")
    sets: dict[str, dict[str, tuple[Any, list[Any]]]] = {}
    for label, scorer, records in (("A", a, a_records), ("B", b, b_records)):
        sets[label] = {
            "mix": (scorer, records),
            "passing": (scorer, [r for r, v in zip(records, verdicts, strict=True) if v.passed]),
            "failing": (
                scorer,
                [r for r, v in zip(records, verdicts, strict=True) if not v.passed],
            ),
        }
    times: dict[tuple[str, str], list[float]] = {(s, k): [] for s in "AB" for k in KINDS}
    loads = []
    for n in range(rounds):
        for label in ("A", "B") if n % 2 == 0 else ("B", "A"):
            for kind, (scorer, records) in sets[label].items():
                grade = scorer.grade
                gc.disable()
                t0 = time.process_time()
                for record in records:
                    grade(record)
                times[label, kind].append(1e6 * (time.process_time() - t0) / len(records))
                gc.enable()
        loads.append(round(os.getloadavg()[0], 2))
    out: dict[str, Any] = {}
    for kind in KINDS:
        x, y = times["A", kind], times["B", kind]
        out[kind] = {
            "answers": len(sets["B"][kind][1]),
            "A_min": round(min(x), 2),
            "A_median": round(statistics.median(x), 2),
            "B_min": round(min(y), 2),
            "B_median": round(statistics.median(y), 2),
            "B/A_min": round(min(y) / min(x), 3),
            "B/A_median": round(statistics.median(y) / statistics.median(x), 3),
        }
    out["rounds"] = rounds
    out["load_1min_each_round"] = loads
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

"""Grading speed: microseconds per case for the scorer, and end to end.

Figures printed (CPU time, best of 5 rounds; the load average beside them,
since the machine may be shared):

- P1, the realistic mix (``grading_mix.py``): 2,000 generated cases and
  20,000 answers to them, one to three calls each, nested objects, enums
  and optional parameters, about 40% failing. Scorer.grade on parsed
  records, schema validation, optimal pairing and every matcher on; the
  whole mix, its passing answers and its failing answers apart; beside it, the
  same mix graded hot (each answer graded again at once, its case and its
  objects in the cache), which shows how much of the figure is the memory the
  grading of 20,000 answers to 2,000 cases walks through rather than work;
- the bundled example suite's recorded answers (both demo models): its
  single-step answers (mix, passing, failing) and its multi-step transcripts.
- end to end: N records cycled from the example answers, written to a
  temporary JSONL file and streamed back (reading the line, parsing it into
  a typed Record, grading it); nothing holds all records at once.

Usage: python bench/score_throughput.py [N]   (N end-to-end records, default 100,000)
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

from grading_mix import make_mix

from toolproof.grade import Scorer
from toolproof.records import iter_records, read_records
from toolproof.run import expected_states
from toolproof.suite import load_suite
from toolproof.trust import Trust

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"


def make_records(n: int, path: Path) -> None:
    seeds = [
        json.loads(line)
        for name in ("records.jsonl", "records-b.jsonl")
        for line in (SUITE / name).read_text().splitlines()
        if line.strip()
    ]
    with path.open("w") as out:
        for i in range(n):
            rec = dict(seeds[i % len(seeds)])
            rec["attempt"] = i // len(seeds)
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def realistic_mix() -> dict[str, float]:
    """µs per case on the generated mix: all of it, passing and failing answers apart."""
    with tempfile.TemporaryDirectory() as tmp:
        suite, path = make_mix(2_000, 20_000, Path(tmp))
        records = read_records(path)
    scorer = Scorer(suite)
    verdicts = [scorer.grade(r) for r in records]
    passing = [r for r, v in zip(records, verdicts, strict=True) if v is not None and v.passed]
    failing = [r for r, v in zip(records, verdicts, strict=True) if v is not None and not v.passed]
    figures = {
        name: _cpu_per_case(scorer, recs, 1)
        for name, recs in (("mix", records), ("passing", passing), ("failing", failing))
    }
    figures["failing_share"] = len(failing) / len(records)
    figures["hot"] = _hot_per_case(scorer, records)
    return figures


def _hot_per_case(scorer: Scorer, records: list[Any]) -> float:
    """µs per case of an answer graded again at once (best of 3 rounds of CPU time):
    ten gradings of each answer in a row, less one round of single gradings, over nine."""
    grade = scorer.grade
    best = float("inf")
    for _ in range(3):
        gc.disable()
        t0 = time.process_time()
        for rec in records:
            for _ in range(10):
                grade(rec)
        t1 = time.process_time()
        for rec in records:
            grade(rec)
        t2 = time.process_time()
        gc.enable()
        best = min(best, ((t1 - t0) - (t2 - t1)) / (9 * len(records)))
    return 1e6 * best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(f"load average at start: {_load()}")
    p1 = realistic_mix()
    print(
        f"P1 realistic mix (20,000 answers, {100 * p1['failing_share']:.0f}% failing; "
        f"CPU, best of 5): mix {p1['mix']:.2f} µs/case; passing {p1['passing']:.2f}; "
        f"failing {p1['failing']:.2f}  [load {_load()}]"
    )
    print(f"   the same mix graded hot (each answer again at once): {p1['hot']:.2f} µs/case")
    suite = load_suite(SUITE)
    scorer = Scorer(suite, expected_states(suite, Trust(allow_code=True)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.jsonl"
        make_records(n, path)
        size_mb = path.stat().st_size / 1e6

        # 1. the scorer alone, over parsed records: best of 5 rounds of CPU time.
        #    Single-step answers (the BFCL-style workload) and multi-step transcripts apart.
        sample = read_records(SUITE / "records.jsonl") + read_records(SUITE / "records-b.jsonl")
        multi_ids = {c.id for c in suite.cases if scorer.is_multistep(c.id)}
        single = [r for r in sample if r.case_id not in multi_ids]
        multi = [r for r in sample if r.case_id in multi_ids]
        verdicts = [scorer.grade(r) for r in single]
        passing = [r for r, v in zip(single, verdicts, strict=True) if v is not None and v.passed]
        failing = [
            r for r, v in zip(single, verdicts, strict=True) if v is not None and not v.passed
        ]
        reps = max(1, n // len(sample) // 5)
        per_case = {
            name: _cpu_per_case(scorer, recs, reps)
            for name, recs in (("mix", single), ("passing", passing), ("failing", failing))
        }
        per_case["multi"] = _cpu_per_case(scorer, multi, max(1, reps // 10)) if multi else 0.0

        # 2. end to end, streaming from disk, no record kept
        rss_before = _max_rss_mb()
        t0 = time.perf_counter()
        c0 = time.process_time()
        outcomes: Counter[str] = Counter()
        scored = 0
        for _, rec in iter_records(path):
            verdict = scorer.grade(rec)
            if verdict is None:
                outcomes[rec.outcome.value] += 1
            else:
                scored += 1
                outcomes["pass" if verdict.passed else "fail"] += 1
        e2e_s = time.perf_counter() - t0
        e2e_cpu = time.process_time() - c0
        rss_after = _max_rss_mb()

        # 3. peak traced Python allocations while streaming (slower: separate pass)
        tracemalloc.start()
        for _, rec in iter_records(path):
            scorer.grade(rec)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    print(f"records: {n} ({size_mb:.1f} MB JSONL), scored {scored}, outcomes {dict(outcomes)}")
    print(
        "example suite, single-step answers (CPU, best of 5): mix "
        f"{per_case['mix']:.2f} µs/case; passing {per_case['passing']:.2f}; "
        f"failing {per_case['failing']:.2f}"
    )
    print(
        f"example suite, multi-step transcripts ({len(multi)} in the sample): "
        f"{per_case['multi']:.2f} µs/attempt"
    )
    print(
        f"end to end (read + parse + typed Record + grade): {1e6 * e2e_s / n:.2f} µs/case wall, "
        f"{1e6 * e2e_cpu / n:.2f} µs/case CPU"
    )
    print(
        f"memory: peak traced Python allocations while streaming {peak / 1e6:.2f} MB; "
        f"max RSS {rss_before:.0f} MB before streaming, {rss_after:.0f} MB after"
    )
    print(f"load average at end: {_load()}")


def _cpu_per_case(scorer: Scorer, records: list[Any], reps: int) -> float:
    best = float("inf")
    for _ in range(5):
        gc.disable()
        t0 = time.process_time()
        for _ in range(reps):
            for rec in records:
                scorer.grade(rec)
        best = min(best, (time.process_time() - t0) / (reps * len(records)))
        gc.enable()
    return 1e6 * best


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()

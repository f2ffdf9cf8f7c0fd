"""The history store: how long an import takes, and how fast the read API answers.

Builds a run folder of N attempts from the example suite's recorded answers
(each case repeated), then times, on one store:

- ``history import`` of the folder: evaluation (load + grade + summarise)
  and the store write, separately; and a second, idempotent import;
- the read API the viewer uses: ``list_runs``, ``get_run``, an ``attempts``
  page at the start and at the end of the run, a filtered page, and
  ``history`` over the last 30 runs.

    python bench/store.py [--attempts 20000] [--store PATH_OR_URL]

Default store: a SQLite file in a temporary folder. Figures are wall-clock
seconds on this machine, median of 5 for the reads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from toolproof.evaluate import load_run
from toolproof.run import Manifest
from toolproof.run._manifest import (
    TargetEntry,
    system_fingerprint,
    tools_fingerprint,
    write_manifest,
)
from toolproof.store import open_store
from toolproof.store._write import save_evaluation, source_for
from toolproof.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"


def build(folder: Path, attempts: int, day: int) -> None:
    suite = load_suite(SUITE)
    lines = [json.loads(x) for x in (SUITE / "records.jsonl").read_text().splitlines()]
    repeats = max(1, -(-attempts // len(lines)))
    folder.mkdir(parents=True)
    with open(folder / "records.jsonl", "w", encoding="utf-8") as fh:
        for a in range(repeats):
            for rec in lines:
                fh.write(json.dumps({**rec, "attempt": a}) + "\n")
    begin = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day)
    write_manifest(
        folder,
        Manifest(
            run_id=folder.name, toolproof_version="bench", suite_name=suite.name,
            suite_source=str(SUITE / "suite.yaml"), suite_fingerprint=suite.fingerprint(),
            tools_fingerprint=tools_fingerprint(suite), system_fingerprint=system_fingerprint(suite),
            targets=[TargetEntry(spec="recorded:demo-model")], repeats=repeats, started_at=begin,
            ended_at=begin + timedelta(hours=1), status="complete",
        ),
    )  # fmt: skip


def median_time(fn: Any, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=20000)
    ap.add_argument("--store", default=None, help="default: a SQLite file in a temporary folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.store or str(Path(tmp) / "history.db")
        big = Path(tmp) / "big"
        build(big, args.attempts, 40)
        with open_store(where) as st:
            t = time.perf_counter()
            ev = load_run(big)
            t_eval = time.perf_counter() - t
            t = time.perf_counter()
            pk = save_evaluation(st.db, ev, source_for([big / "records.jsonl"], ev.manifest))
            t_write = time.perf_counter() - t
            n = st.attempts(pk, limit=1).total
            print(f"store: {st.kind}; run of {n} attempts")
            print(f"import, first:      evaluate {t_eval:.2f} s + store write {t_write:.2f} s")
            t = time.perf_counter()
            st.import_run(big)
            print(f"import, again:      {time.perf_counter() - t:.2f} s in all (idempotent)")
            for day in range(30):  # 30 small runs for the history query
                small = Path(tmp) / f"small{day}"
                build(small, 76, day)
                st.import_run(small)
            print(f"list_runs(50):      {1000 * median_time(lambda: st.list_runs(limit=50)):.1f} ms")
            print(f"get_run:            {1000 * median_time(lambda: st.get_run(pk)):.1f} ms")
            first = median_time(lambda: st.attempts(pk, limit=100))
            last = median_time(lambda: st.attempts(pk, offset=n - 100, limit=100))
            failed = median_time(lambda: st.attempts(pk, failure="wrong_arguments", limit=100))
            print(f"attempts page 1:    {1000 * first:.1f} ms (100 rows)")
            print(f"attempts last page: {1000 * last:.1f} ms (offset {n - 100})")
            print(f"attempts filtered:  {1000 * failed:.1f} ms (failure=wrong_arguments)")
            hist = median_time(lambda: st.history(ev.suite.name, "recorded:demo-model", last=30))
            print(f"history(last=30):   {1000 * hist:.1f} ms")
            if st.kind == "sqlite":
                size = Path(where).stat().st_size
                print(f"database size:      {size / 1e6:.1f} MB")


if __name__ == "__main__":
    sys.exit(main())

"""Every verdict field, written out, to compare the scorer before and after a change.

Grades the bundled example suite's recorded answers (records.jsonl and
records-b.jsonl: single-step and multi-step, native views too) and the
generated realistic mix of ``grading_mix.py`` (2,000 cases, 20,000 answers
by default), and writes one JSON line per verdict with all its fields:
checks and their reasons, pairs, notes, the evidence kept (the answer, the
closest alternative, the transcript, the end-state diff) and the rendered
expected-against-actual diff of a failed verdict.

Usage:
  python bench/verdict_compare.py --write BEFORE.jsonl      (on the old code)
  python bench/verdict_compare.py --check BEFORE.jsonl      (on the new code)
  [--records N]  answers in the generated mix (default 20,000)
  [--cases N]    cases in the generated mix (default 2,000)
  [--seed S]     the generated mix's seed (default 12, as ``score_throughput.py`` uses)

``--check`` prints how many verdicts differ and the first few differences,
and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

from grading_mix import make_mix

from toolproof.grade import Scorer
from toolproof.records import read_records
from toolproof.run import expected_states
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Verdict

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _line(label: str, scorer: Scorer, verdict: Verdict | None) -> str:
    if verdict is None:
        return json.dumps({"record": label, "verdict": None})
    out = {
        "record": label,
        "verdict": _plain(verdict),
        "diff": scorer.diff(verdict) if not verdict.passed else "",
    }
    return json.dumps(out, ensure_ascii=False, sort_keys=True)


def lines(n_records: int, n_cases: int = 2_000, seed: int = 12) -> Iterator[str]:
    suite = load_suite(SUITE)
    scorer = Scorer(suite, expected_states(suite, Trust(allow_code=True)))
    for name in ("records.jsonl", "records-b.jsonl"):
        for i, record in enumerate(read_records(SUITE / name)):
            yield _line(f"{name}:{i}", scorer, scorer.grade(record))
            native = scorer.grade_raw(record)
            if native is not None:
                yield _line(f"{name}:{i}:native", scorer, native)
    with tempfile.TemporaryDirectory() as tmp:
        mix, path = make_mix(n_cases, n_records, Path(tmp), seed)
        records = read_records(path)
    scorer = Scorer(mix)
    for i, record in enumerate(records):
        yield _line(f"mix:{i}", scorer, scorer.grade(record))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path)
    group.add_argument("--check", type=Path)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    now = list(lines(args.records, args.cases, args.seed))
    digest = hashlib.sha256("\n".join(now).encode()).hexdigest()[:16]
    if args.write is not None:
        args.write.write_text("\n".join(now) + "\n", encoding="utf-8")
        print(f"{len(now)} verdicts written to {args.write} (digest {digest})")
        return
    before = args.check.read_text(encoding="utf-8").splitlines()
    differ = [(b, a) for b, a in zip(before, now, strict=False) if b != a]
    print(f"{len(now)} verdicts now, {len(before)} before (digest now {digest})")
    if len(before) != len(now):
        print("the number of verdicts differs")
    print(f"{len(differ)} verdicts differ")
    for b, a in differ[:3]:
        print(f"- before: {b[:600]}\n+ now:    {a[:600]}")
    if differ or len(before) != len(now):
        sys.exit(1)


if __name__ == "__main__":
    main()

"""The library API behind the command line."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from toolproof.errors import SuiteError
from toolproof.grade import Scorer
from toolproof.records import iter_records
from toolproof.stats import Summary, summarize
from toolproof.trust import DEFAULT_TRUST, Trust
from toolproof.types import Record, Suite, Verdict


def score_records(
    suite: Suite, records: Iterable[Record], trust: Trust = DEFAULT_TRUST
) -> dict[str, Summary]:
    """Grade records against a suite; one Summary per target, in order of appearance.

    Expected end states computed from gold actions run the suite's Python, so
    they need ``trust.allow_code``.
    """
    scorer = Scorer(suite, trust)
    by_target: dict[str, tuple[list[Record], list[Verdict]]] = {}
    for record in records:
        target = record.target or "(unnamed)"
        recs, verdicts = by_target.setdefault(target, ([], []))
        recs.append(record)
        verdict = scorer.grade(record)
        if verdict is not None:
            verdicts.append(verdict)
    return {t: summarize(suite, recs, vs, target=t) for t, (recs, vs) in by_target.items()}


def read_records_for(suite: Suite, paths: Iterable[str | Path]) -> list[Record]:
    """Read records files, refusing records whose case the suite does not have."""
    known = {c.id for c in suite.cases}
    out: list[Record] = []
    for path in paths:
        for number, record in iter_records(path):
            if record.case_id not in known:
                raise SuiteError(
                    str(path),
                    f"record for unknown case '{record.case_id}'",
                    line=number,
                    path=("case_id",),
                )
            if record.target is None:
                record = record.model_copy(update={"target": Path(path).stem})
            out.append(record)
    return out

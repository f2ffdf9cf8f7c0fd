"""Judging a run's records, and reading judgements back as a check would."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolproof.judges._batch import Item, JudgeRunOptions, judge_items
from toolproof.judges._judge import Judge, Judgement, judge_settings, record_digest
from toolproof.judges._rubrics import case_rubrics, rubric_named
from toolproof.judges._store import append_judgements, latest_judgements, read_judgements
from toolproof.types import Case, Outcome, Record, Rubric, Suite


def judges_for(suite: Suite, spec: str, config: object = None) -> dict[str, Judge]:
    """One judge per rubric the suite's cases use, all with the same model spec and settings."""
    settings = judge_settings(spec, suite, config)
    names = sorted({n for c in suite.cases for n in case_rubrics(suite, c)})
    return {n: Judge(spec, n, rubric_named(suite, n), settings) for n in names}


def suite_rubrics(suite: Suite) -> dict[str, Rubric]:
    """Every rubric the suite can use, by name."""
    from toolproof.types import BUILTIN_RUBRICS

    names = [*BUILTIN_RUBRICS, *(suite.judge.rubrics if suite.judge else {})]
    return {n: rubric_named(suite, n) for n in names}


def judge_run(
    suite: Suite,
    records: Sequence[Record],
    judges: dict[str, Judge],
    store: Path,
    options: JudgeRunOptions,
    *,
    rejudge: bool = False,
) -> list[Judgement]:
    """Judge every answered record of a judge-scored case; keep judgements in ``store``.

    Records already judged under the same judge fingerprint are not judged
    again (unless ``rejudge``); infrastructure failures are retried. Returns
    the latest judgement of every judged item.
    """
    previous = latest_judgements(read_judgements(store))
    done = {
        (j.case_id, j.target, j.attempt, j.rubric, j.fingerprint, j.record)
        for j in previous
        if j.status != "infra" and j.repeat == 0
    }
    cases = {c.id: c for c in suite.cases}
    items: list[Item] = []
    for rec in records:
        case = cases.get(rec.case_id)
        if case is None or rec.outcome is not Outcome.ok or rec.response is None:
            continue
        for name in case_rubrics(suite, case):
            judge = judges.get(name)
            if judge is None:
                continue
            key = (
                rec.case_id,
                rec.target,
                rec.attempt,
                name,
                judge.fingerprint,
                record_digest(rec),
            )
            if rejudge or key not in done:
                items.append(Item(case, rec, judge))
    if items:
        options.on_judgement = lambda j: append_judgements(store, [j])  # kept as they come
        fresh = judge_items(suite, items, options)
        previous = latest_judgements([*previous, *fresh])
    wanted = {j.fingerprint for j in judges.values()}
    return [j for j in previous if j.fingerprint in wanted]


class JudgeCheck:
    """The judge as a check: (case, record) → the stored judgements of that record.

    Judging calls a model, so it happens before scoring (``judge_run``); the
    check itself only reads what the judge said, which keeps scoring pure and
    re-scoring free of model calls.
    """

    def __init__(self, judgements: Sequence[Judgement]) -> None:
        self._by_key: dict[tuple[str, str | None, int, str], list[Judgement]] = {}
        for j in judgements:
            if j.repeat == 0:
                self._by_key.setdefault((j.case_id, j.target, j.attempt, j.record), []).append(j)

    def check(self, case: Case, record: Record) -> list[Judgement]:
        """Every rubric's judgement of this record (fields and reasoning, or the error)."""
        return list(
            self._by_key.get((case.id, record.target, record.attempt, record_digest(record)), [])
        )

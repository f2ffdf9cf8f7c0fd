"""Judging a run's records, and reading judgements back as a check would."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from toolproof.judges._batch import Item, JudgeRunOptions, judge_items
from toolproof.judges._file import append_judgements, latest_judgements, read_judgements
from toolproof.judges._judge import Judge, Judgement, judge_settings, record_digest
from toolproof.judges._rubrics import case_rubrics, rubric_named
from toolproof.match import Decisions, Question
from toolproof.types import (
    ARGUMENT_RUBRIC,
    NL_ASSERTION_RUBRIC,
    Case,
    Outcome,
    Record,
    Rubric,
    Suite,
)

#: (target, case, attempt) → the judge-decided arguments of that attempt.
Questions = Mapping[tuple[str | None, str, int], Sequence[Question]]


def judges_for(
    suite: Suite, spec: str, config: object = None, *, arguments: bool = False
) -> dict[str, Judge]:
    """One judge per rubric the suite's cases use, all with the same model spec and settings.

    ``arguments``: also the ``argument_meaning`` judge, for judge-decided arguments.
    """
    settings = judge_settings(spec, suite, config)
    names = sorted(
        {n for c in suite.cases for n in case_rubrics(suite, c)}
        | ({ARGUMENT_RUBRIC} if arguments else set())
    )
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
    questions: Questions | None = None,
) -> list[Judgement]:
    """Judge every answered record of a judge-scored case; keep judgements in ``store``.

    ``questions`` are the judge-decided arguments whose answer an attempt's
    outcome turns on (``Scorer.questions``): each is judged by the
    ``argument_meaning`` judge, when ``judges`` has one.

    Records already judged under the same judge fingerprint are not judged
    again (unless ``rejudge``); infrastructure failures are retried. Returns
    the latest judgement of every judged item.
    """
    previous = latest_judgements(read_judgements(store))
    done = {
        (j.case_id, j.target, j.attempt, j.rubric, j.subject, j.fingerprint, j.record)
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
            key: tuple[str, str | None, int, str, str | None, str, str] = (
                rec.case_id,
                rec.target,
                rec.attempt,
                name,
                None,
                judge.fingerprint,
                record_digest(rec),
            )
            if rejudge or key not in done:
                items.append(Item(case, rec, judge))
        arg_judge = judges.get(ARGUMENT_RUBRIC)
        if arg_judge is None or not questions:
            continue
        for q in questions.get((rec.target, rec.case_id, rec.attempt), ()):
            key = (
                rec.case_id,
                rec.target,
                rec.attempt,
                ARGUMENT_RUBRIC,
                q.subject,
                arg_judge.fingerprint,
                record_digest(rec),
            )
            if rejudge or key not in done:
                items.append(Item(case, rec, arg_judge, q))
    if items:
        options.on_judgement = lambda j: append_judgements(store, [j])  # kept as they come
        fresh = judge_items(suite, items, options)
        previous = latest_judgements([*previous, *fresh])
    wanted = {j.fingerprint for j in judges.values()}
    return [j for j in previous if j.fingerprint in wanted]


def argument_decisions(judgements: Sequence[Judgement]) -> Decisions:
    """The judge's answers to judge-decided arguments and judged statements, for the scorer.

    Only parsed answers count (a ``judge_error`` or ``infra`` judgement leaves
    the argument undecided); of several answers to one question, the last written.
    """
    table = Decisions()
    latest: dict[str, Judgement] = {}
    for j in judgements:
        if j.rubric == NL_ASSERTION_RUBRIC and j.status == "ok" and j.repeat == 0 and j.fields:
            holds = j.fields.get("holds")
            if isinstance(holds, bool):  # the last written answer of an attempt counts
                table.statements[(j.target, j.case_id, j.attempt)] = holds
        if j.rubric != ARGUMENT_RUBRIC or j.subject is None or j.repeat != 0:
            continue
        if j.status != "ok" or not j.fields or not isinstance(j.fields.get("same_meaning"), bool):
            continue
        latest[j.subject] = j  # judgements come in the order they were written
    for subject, j in latest.items():
        table.answers[subject] = j.fields["same_meaning"] is True if j.fields else False
    return table


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

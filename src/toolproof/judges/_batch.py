"""Judging many records: the judge calls go through the runner like any target's.

The judge's requests become the cases of a small in-memory suite (no tools),
run against the judge's spec by :func:`toolproof.run.run_suite_async`: the
same concurrency, rate limits, retries, cache and cost accounting, and the
judge's raw requests and answers land in a run folder of their own. An
attempt that got no answer is an ``infra`` judgement, never a verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolproof.judges._judge import Judge, Judgement
from toolproof.judges._prompt import ArgumentItem
from toolproof.match import Question
from toolproof.providers import ModelSettings, Provider
from toolproof.run import RunObserver, RunOptions, Target, run_suite_async
from toolproof.types import Case, Expect, Kind, Message, Outcome, Record, Suite


@dataclass(frozen=True)
class Item:
    """One thing to judge: a record of a case, under one judge; or, with ``question``,
    one judge-decided argument of that record (rubric ``argument_meaning``); or, with
    ``argument``, an argument given whole (a labelled item, no suite needed)."""

    case: Case | None
    record: Record
    judge: Judge
    question: Question | None = None
    argument: ArgumentItem | None = None

    def messages(self, suite: Suite | None) -> list[Message]:
        if self.argument is not None:
            return self.judge.argument_messages(self.argument)
        if suite is None or self.case is None:
            raise ValueError("judging a record or a question needs its suite and case")
        if self.question is not None:
            return self.judge.question_messages(suite, self.question)
        return self.judge.messages(suite, self.case, self.record)


@dataclass
class JudgeRunOptions:
    """Where the judge's own run folder goes, and how it runs."""

    out: Path
    repeats: int = 1
    cache: bool = True
    cache_dir: Path | None = None  # None: the user cache folder, as for any run
    observer: RunObserver | None = None
    #: Called with each judgement as soon as its judge call ends (to store it at once).
    on_judgement: Callable[[Judgement], None] | None = None
    provider_factory: Callable[[str, ModelSettings, Any], Provider] | None = None


def judge_items(
    suite: Suite | None, items: Sequence[Item], options: JudgeRunOptions
) -> list[Judgement]:
    """Judge every item (``repeats`` times each) and return the judgements in item order."""
    return asyncio.run(judge_items_async(suite, items, options))


async def judge_items_async(
    suite: Suite | None, items: Sequence[Item], options: JudgeRunOptions
) -> list[Judgement]:
    groups: dict[tuple[str, str], list[tuple[int, Item]]] = {}
    for i, item in enumerate(items):
        key = (item.judge.spec, item.judge.settings.model_dump_json())
        groups.setdefault(key, []).append((i, item))
    out: dict[tuple[int, int], Judgement] = {}
    for n, members in enumerate(groups.values()):
        folder = options.out if len(groups) == 1 else options.out / f"judge-{n + 1}"
        cases = [
            Case(
                id=f"{item.judge.rubric_name}.{i}",
                messages=item.messages(suite),
                expect=Expect(kind=Kind.text),
            )
            for i, item in members
        ]
        name = suite.name if suite is not None else "labels"
        judge_suite = Suite(name=f"{name}-judge", tools=[], cases=cases)
        first = members[0][1].judge
        by_id = {c.id: member for member, c in zip(members, cases, strict=True)}
        opts = RunOptions(
            repeats=options.repeats,
            out=folder,
            cache=options.cache,
            observer=_Relay(options.observer, by_id, options.on_judgement),
            fsync=False,
            provider_factory=options.provider_factory,
        )
        if options.cache_dir is not None:
            opts.cache_dir = options.cache_dir
        result = await run_suite_async(
            judge_suite, [Target(spec=first.spec, settings=first.settings)], opts
        )
        for rec in result.records:
            i, item = by_id[rec.case_id]
            out[(i, rec.attempt)] = _judgement(item, rec)
    return [out[key] for key in sorted(out)]


class _Relay:
    """Passes runner events on, and turns each finished judge call into a judgement at once."""

    def __init__(
        self,
        inner: RunObserver | None,
        items: dict[str, tuple[int, Item]],
        on_judgement: Callable[[Judgement], None] | None,
    ) -> None:
        self.inner = inner
        self.items = items
        self.on_judgement = on_judgement

    def started(self, totals: dict[str, int]) -> None:
        if self.inner is not None:
            self.inner.started(totals)

    def recorded(self, record: Record) -> None:
        if self.inner is not None:
            self.inner.recorded(record)
        if self.on_judgement is not None:
            self.on_judgement(_judgement(self.items[record.case_id][1], record))

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        if self.inner is not None:
            self.inner.retrying(target, outcome, delay_s)

    def note(self, target: str, text: str) -> None:
        if self.inner is not None:
            self.inner.note(target, text)

    def finished(self) -> None:
        if self.inner is not None:
            self.inner.finished()


def _judgement(item: Item, rec: Record) -> Judgement:
    extra: dict[str, Any] = {
        "subject": item.question.subject if item.question is not None else None,
        "latency_ms": rec.latency_ms,
        "cost_usd": rec.cost_usd,
        "cached": rec.cached,
        "judged_at": rec.started_at,
    }
    if rec.outcome is not Outcome.ok or rec.response is None:
        error = f"{rec.outcome.value}: {rec.error.message if rec.error else 'no answer'}"
        judgement = item.judge.read(item.record, None, repeat=rec.attempt, **extra)
        return judgement.model_copy(update={"error": error})
    return item.judge.read(item.record, rec.response, repeat=rec.attempt, **extra)

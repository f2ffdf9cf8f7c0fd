"""Judged figures per target and rubric: rates of bool fields, totals of int fields, enum counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from toolproof.judges._judge import Judgement
from toolproof.stats._rates import Rate, rate
from toolproof.types import Rubric


class FieldFigure(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str
    type: str
    rate: Rate | None = Field(default=None, description="bool: how often true.")
    total: int | None = Field(default=None, description="int: the sum over judged records.")
    mean: float | None = None
    counts: dict[str, int] | None = Field(default=None, description="enum: how often each word.")


class RubricFigures(BaseModel):
    """What one judge said about one target's records under one rubric."""

    model_config = ConfigDict(extra="forbid")

    target: str
    rubric: str
    judge: str
    fingerprint: str
    judged: int
    judge_errors: int
    infra: int
    fields: list[FieldFigure]


def rubric_figures(
    judgements: Iterable[Judgement], rubrics: Mapping[str, Rubric]
) -> list[RubricFigures]:
    """Figures per (target, rubric, judge fingerprint), from each record's first repeat."""
    groups: dict[tuple[str, str, str], list[Judgement]] = {}
    for j in judgements:
        if j.repeat == 0:
            groups.setdefault((j.target or "", j.rubric, j.fingerprint), []).append(j)
    out = []
    for (target, name, fp), js in groups.items():
        rubric = rubrics.get(name)
        if rubric is None:
            continue
        ok = [j for j in js if j.status == "ok" and j.fields is not None]
        figures = []
        for fname, spec in rubric.fields.items():
            values = [j.fields[fname] for j in ok if j.fields is not None and fname in j.fields]
            fig = FieldFigure(field=fname, type=spec.type)
            if spec.type == "bool":
                fig.rate = rate(sum(1 for v in values if v is True), len(values))
            elif spec.type == "int":
                ints = [int(v) for v in values]
                fig.total = sum(ints)
                fig.mean = sum(ints) / len(ints) if ints else None
            else:
                fig.counts = {w: sum(1 for v in values if v == w) for w in spec.values or []}
            figures.append(fig)
        out.append(
            RubricFigures(
                target=target,
                rubric=name,
                judge=js[0].judge,
                fingerprint=fp,
                judged=len(ok),
                judge_errors=sum(1 for j in js if j.status == "judge_error"),
                infra=sum(1 for j in js if j.status == "infra"),
                fields=figures,
            )
        )
    return out

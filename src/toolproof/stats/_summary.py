"""Aggregate verdicts into the figures a report shows."""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolproof.grade import NO_CALL, Scorer, render_diff
from toolproof.stats._metrics import metric_rate
from toolproof.stats._rates import Rate, rate
from toolproof.stats._repair import Repaired
from toolproof.stats._repeats import Costs, Stability, stability
from toolproof.stats._repeats import costs as per_success_costs
from toolproof.types import FailureClass, Kind, Outcome, Record, Risk, Suite, Verdict


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    precision: float | None
    recall: float | None
    f1: float | None


class Confusion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    labels: list[str]
    matrix: list[list[int]] = Field(description="Rows: expected tool; columns: called tool.")


class SliceStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strict_pass: Rate
    selection: Rate
    arguments: Rate


class FailureItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case_id: str
    attempt: int
    risk: Risk
    failure: FailureClass
    reasons: list[str]
    diff: str


class MultiStepSlice(BaseModel):
    """Multi-step figures of one slice (tag, tool or risk class)."""

    model_config = ConfigDict(extra="forbid")

    success: Rate
    trajectory: Rate
    end_state: Rate
    clarification: Rate
    graceful_failure: Rate
    unsafe_calls: int
    unsafe_rate: Rate = Field(description="Attempts with at least one unsafe call.")


class MultiStepStats(MultiStepSlice):
    """Figures of the multi-step (agent loop) attempts.

    graceful_failure is a heuristic: after a tool failure, the reply states no
    value found nowhere in the conversation, and says the data could not be had.
    """

    attempts: int
    steps_per_success: float | None
    calls_per_success: float | None
    redundant_calls: int
    step_limit_hits: int
    by_tag: dict[str, MultiStepSlice]
    by_tool: dict[str, MultiStepSlice]
    by_risk: dict[str, MultiStepSlice]


def _ms_slice(verdicts: list[Verdict]) -> dict[str, Any]:
    ms = [v.multistep for v in verdicts if v.multistep is not None]
    traj = [m.trajectory_ok for m in ms if m.trajectory_ok is not None]
    end = [m.end_state_ok for m in ms if m.end_state_ok is not None]
    clar = [m.clarified for m in ms if m.clarified is not None]
    grace = [m.graceful for m in ms if m.graceful is not None]
    return {
        "success": rate(sum(v.passed for v in verdicts), len(verdicts)),
        "trajectory": rate(sum(traj), len(traj)),
        "end_state": rate(sum(end), len(end)),
        "clarification": rate(sum(clar), len(clar)),
        "graceful_failure": rate(sum(grace), len(grace)),
        "unsafe_calls": sum(m.unsafe_calls for m in ms),
        "unsafe_rate": rate(sum(1 for m in ms if m.unsafe_calls), len(ms)),
    }


def _ms_group(
    verdicts: list[Verdict], keys: Callable[[Verdict], Iterable[str]]
) -> dict[str, MultiStepSlice]:
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        for key in keys(v):
            groups[key].append(v)
    return {k: MultiStepSlice(**_ms_slice(groups[k])) for k in sorted(groups)}


def multistep_stats(verdicts: list[Verdict]) -> MultiStepStats | None:
    """The multi-step figures, or None when no verdict is of a multi-step case."""
    multi = [v for v in verdicts if v.multistep is not None]
    if not multi:
        return None
    won = [v.multistep for v in multi if v.passed and v.multistep is not None]
    return MultiStepStats(
        **_ms_slice(multi),
        attempts=len(multi),
        steps_per_success=sum(m.steps for m in won) / len(won) if won else None,
        calls_per_success=sum(m.calls for m in won) / len(won) if won else None,
        redundant_calls=sum(v.multistep.redundant_calls for v in multi if v.multistep),
        step_limit_hits=sum(1 for v in multi if v.multistep and v.multistep.step_limit),
        by_tag=_ms_group(multi, lambda v: v.tags),
        by_tool=_ms_group(multi, lambda v: v.expected_tools or (NO_CALL,)),
        by_risk=_ms_group(multi, lambda v: (v.risk.value,)),
    )


class Summary(BaseModel):
    """Every figure for one target. Rates carry Wilson intervals."""

    model_config = ConfigDict(extra="forbid")

    target: str
    attempts: int
    scored: int
    infrastructure: dict[str, int]
    harness_errors: int
    strict_pass: Rate
    selection: Rate
    macro_f1: float | None
    decision: Decision
    no_call_accuracy: Rate
    schema_adherence: Rate
    arguments: Rate
    reply: Rate
    failure_counts: dict[str, int]
    forbidden_calls: int
    extracted_calls: int
    by_tag: dict[str, SliceStats]
    by_tool: dict[str, SliceStats]
    by_risk: dict[str, SliceStats]
    confusion: Confusion
    latency_ms_p50: float | None
    latency_ms_p95: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    failures: list[FailureItem]
    cached: int = Field(
        default=0, description="Attempts whose answer came from the response cache, not a model."
    )
    unsafe_calls: int = Field(
        default=0, description="Calls to guarded or destructive tools the contract did not ask for."
    )
    stability: Stability | None = Field(
        default=None, description="pass@k, pass^k, flaky cases, tool changes over repeats."
    )
    per_success: Costs | None = Field(default=None, description="Tokens and cost per success.")
    multistep: MultiStepStats | None = Field(
        default=None, description="Trajectory, end-state and behaviour figures of multi-step cases."
    )
    repaired: Repaired | None = Field(
        default=None,
        description="The figures above are raw: a call printed as text counts as no call. "
        "These count calls recovered from text as calls (present when any was recovered).",
    )


def _slice(verdicts: list[Verdict]) -> SliceStats:
    return SliceStats(
        strict_pass=metric_rate("strict_pass", verdicts),
        selection=metric_rate("selection", verdicts),
        arguments=metric_rate("arguments", verdicts),
    )


def _group(
    verdicts: list[Verdict], keys: Callable[[Verdict], Iterable[str]]
) -> dict[str, SliceStats]:
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        for key in keys(v):
            groups[key].append(v)
    return {k: _slice(groups[k]) for k in sorted(groups)}


def decision_scores(truth: list[bool], pred: list[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of "call" as the positive class (scikit-learn, zero_division=0)."""
    from sklearn.metrics import precision_recall_fscore_support

    with _quiet_single_label():
        p, r, f, _ = precision_recall_fscore_support(
            truth, pred, labels=[False, True], average="binary", pos_label=True, zero_division=0
        )
    return float(p), float(r), float(f)


def confusion_scores(truth: list[str], pred: list[str]) -> tuple[list[str], list[list[int]], float]:
    """Labels, confusion matrix (rows expected, columns called) and macro-F1 (scikit-learn)."""
    from sklearn.metrics import confusion_matrix, f1_score

    labels = sorted(set(truth) | set(pred), key=lambda x: (x == NO_CALL, x))
    with _quiet_single_label():
        matrix = confusion_matrix(truth, pred, labels=labels).tolist()
        macro = float(f1_score(truth, pred, labels=labels, average="macro", zero_division=0))
    return labels, matrix, macro


@contextlib.contextmanager
def _quiet_single_label() -> Iterator[None]:
    """scikit-learn warns when a small suite has one label only; the figures are still right."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*single label", category=UserWarning)
        yield


def _decision(verdicts: list[Verdict]) -> Decision:
    if not verdicts:
        return Decision(precision=None, recall=None, f1=None)
    truth = [v.kind is Kind.call for v in verdicts]
    pred = [bool(v.actual_tools) for v in verdicts]
    p, r, f = decision_scores(truth, pred)
    return Decision(precision=p, recall=r, f1=f)


def _confusion(verdicts: list[Verdict]) -> tuple[Confusion, float | None]:
    pairs = [p for v in verdicts for p in v.pairs if p[0] != "(any)"]
    if not pairs:
        return Confusion(labels=[], matrix=[]), None
    labels, matrix, macro = confusion_scores([e for e, _ in pairs], [a for _, a in pairs])
    return Confusion(labels=labels, matrix=matrix), macro


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return float(np.percentile(values, q))


def summarize(
    suite: Suite,
    records: list[Record],
    verdicts: list[Verdict],
    target: str | None = None,
    *,
    k: int | None = None,
    scorer: Scorer | None = None,
) -> Summary:
    """Aggregate one target's records and their verdicts.

    ``k`` is the k of pass@k and pass^k (default: the fewest attempts of any case).
    ``scorer`` (the one that made the verdicts) renders the diffs of failures;
    without it the suite's cases are compiled again for that.
    """
    if target is None:
        target = next((r.target for r in records if r.target), None) or suite.name
    infra = Counter(r.outcome.value for r in records if r.outcome.is_infrastructure)
    harness = sum(1 for r in records if r.outcome is Outcome.harness_error)
    replies = [v for v in verdicts if v.reply_ok is not None]
    confusion, macro = _confusion(verdicts)
    latencies = [
        lat
        for r in records
        if (
            lat := r.latency_ms
            if r.latency_ms is not None
            else (r.response.latency_ms if r.response else None)
        )
        is not None
    ]
    usage = [r.response.usage for r in records if r.response is not None and r.response.usage]
    costs = [r.cost_usd for r in records if r.cost_usd is not None]
    failed = [v for v in verdicts if v.failure is not None]
    if failed and scorer is None:
        scorer = Scorer(suite, checks=())
    failures = [
        FailureItem(
            case_id=v.case_id,
            attempt=v.attempt,
            risk=v.risk,
            failure=v.failure,
            reasons=[c.message for c in v.checks],
            diff=render_diff(v, scorer.cases[v.case_id]) if scorer is not None else "",
        )
        for v in failed
        if v.failure is not None
    ]
    return Summary(
        target=target,
        attempts=len(records),
        scored=len(verdicts),
        infrastructure=dict(sorted(infra.items())),
        harness_errors=harness,
        strict_pass=metric_rate("strict_pass", verdicts),
        selection=metric_rate("selection", verdicts),
        macro_f1=macro,
        decision=_decision(verdicts),
        no_call_accuracy=metric_rate("no_call_accuracy", verdicts),
        schema_adherence=metric_rate("schema_adherence", verdicts),
        arguments=metric_rate("arguments", verdicts),
        reply=rate(sum(1 for v in replies if v.reply_ok), len(replies)),
        failure_counts=dict(Counter(v.failure.value for v in verdicts if v.failure).most_common()),
        forbidden_calls=sum(len(v.forbidden_called) for v in verdicts),
        extracted_calls=sum(
            1 for r in records if r.response for c in r.response.tool_calls if c.extracted_from_text
        ),
        by_tag=_group(verdicts, lambda v: v.tags),
        by_tool=_group(verdicts, lambda v: v.expected_tools or (NO_CALL,)),
        by_risk=_group(verdicts, lambda v: (v.risk.value,)),
        confusion=confusion,
        latency_ms_p50=_percentile(latencies, 50),
        latency_ms_p95=_percentile(latencies, 95),
        input_tokens=sum(u.input_tokens or 0 for u in usage),
        output_tokens=sum(u.output_tokens or 0 for u in usage),
        cost_usd=sum(costs) if costs else None,
        failures=failures,
        cached=sum(1 for r in records if r.cached),
        unsafe_calls=sum(v.unsafe_calls for v in verdicts),
        stability=stability(verdicts, k),
        per_success=per_success_costs(records, sum(v.passed for v in verdicts)),
        multistep=multistep_stats(verdicts),
    )

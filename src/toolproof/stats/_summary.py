"""Aggregate verdicts into the figures a report shows."""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, Protocol, TypeGuard, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
)

from toolproof.grade import NO_CALL, Scorer, render_diff
from toolproof.stats._conversation import ConversationCounts, ConversationStats
from toolproof.stats._metrics import RATE_METRICS, RATE_NAMES, expects_call
from toolproof.stats._rates import Rate, rate
from toolproof.stats._repair import Repaired
from toolproof.stats._repeats import Costs, RepeatCounts, Stability
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


class _MsCounts:
    """The counts behind one multi-step slice, added to one verdict at a time."""

    __slots__ = ("clar", "end", "grace", "ms", "n", "passed", "traj", "unsafe", "unsafe_calls")

    def __init__(self) -> None:
        self.n = self.passed = self.ms = self.unsafe_calls = self.unsafe = 0
        self.traj = [0, 0]
        self.end = [0, 0]
        self.clar = [0, 0]
        self.grace = [0, 0]

    def add(self, v: Verdict) -> None:
        self.n += 1
        self.passed += v.passed
        m = v.multistep
        if m is None:
            return
        self.ms += 1
        for flag, counts in (
            (m.trajectory_ok, self.traj),
            (m.end_state_ok, self.end),
            (m.clarified, self.clar),
            (m.graceful, self.grace),
        ):
            if flag is not None:
                counts[0] += flag
                counts[1] += 1
        self.unsafe_calls += m.unsafe_calls
        self.unsafe += 1 if m.unsafe_calls else 0

    def figures(self) -> dict[str, Any]:
        return {
            "success": rate(self.passed, self.n),
            "trajectory": rate(*self.traj),
            "end_state": rate(*self.end),
            "clarification": rate(*self.clar),
            "graceful_failure": rate(*self.grace),
            "unsafe_calls": self.unsafe_calls,
            "unsafe_rate": rate(self.unsafe, self.ms),
        }


class _MultiStepCounts:
    """Everything :class:`MultiStepStats` needs, without the verdicts."""

    def __init__(self) -> None:
        self.all = _MsCounts()
        self.won = 0
        self.won_steps = 0
        self.won_calls = 0
        self.redundant = 0
        self.limit_hits = 0
        self.by_tag: dict[str, _MsCounts] = defaultdict(_MsCounts)
        self.by_tool: dict[str, _MsCounts] = defaultdict(_MsCounts)
        self.by_risk: dict[str, _MsCounts] = defaultdict(_MsCounts)

    def add(self, v: Verdict) -> None:
        m = v.multistep
        if m is None:
            return
        self.all.add(v)
        if v.passed:
            self.won += 1
            self.won_steps += m.steps
            self.won_calls += m.calls
        self.redundant += m.redundant_calls
        self.limit_hits += 1 if m.step_limit else 0
        for tag in v.tags:
            self.by_tag[tag].add(v)
        for tool in v.expected_tools or (NO_CALL,):
            self.by_tool[tool].add(v)
        self.by_risk[v.risk.value].add(v)

    def stats(self) -> MultiStepStats | None:
        if not self.all.n:
            return None

        def group(groups: dict[str, _MsCounts]) -> dict[str, MultiStepSlice]:
            return {k: MultiStepSlice(**groups[k].figures()) for k in sorted(groups)}

        return MultiStepStats(
            **self.all.figures(),
            attempts=self.all.n,
            steps_per_success=self.won_steps / self.won if self.won else None,
            calls_per_success=self.won_calls / self.won if self.won else None,
            redundant_calls=self.redundant,
            step_limit_hits=self.limit_hits,
            by_tag=group(self.by_tag),
            by_tool=group(self.by_tool),
            by_risk=group(self.by_risk),
        )


def multistep_stats(verdicts: Iterable[Verdict]) -> MultiStepStats | None:
    """The multi-step figures, or None when no verdict is of a multi-step case."""
    counts = _MultiStepCounts()
    for v in verdicts:
        counts.add(v)
    return counts.stats()


class FailureSink(Protocol):
    """Where a summary's failures go as they are found (a list will do)."""

    def append(self, item: FailureItem, /) -> None: ...


class FailureRows(Protocol):
    """A failure sink that takes each failure's fields as they are (no item is built)."""

    def add_failure(
        self,
        case_id: str,
        attempt: int,
        risk: Risk,
        failure: FailureClass,
        reasons: list[str],
        diff: str,
        /,
    ) -> None: ...


def _takes_rows(sink: object) -> TypeGuard[FailureRows]:
    return callable(getattr(sink, "add_failure", None))


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
    judge_decided: int = Field(
        default=0,
        description="Attempts whose outcome a judge decided (judge-decided semantic arguments): "
        "the figures that count them are judge-derived.",
    )
    undecided: int = Field(
        default=0,
        description="Attempts left to a judge that has not answered: not counted as passing.",
    )
    undecided_arguments: int = Field(
        default=0, description="Judge-decided arguments of those attempts still without an answer."
    )
    undecided_statements: int = Field(
        default=0,
        description="Judged statements (communicate: judged, nl_assertions) of those attempts "
        "no nl_assertion judge answered about.",
    )
    conversations: ConversationStats | None = Field(
        default=None,
        description="Cases with a simulated user: pass^k over conversations, turns, agent "
        "questions, stop reasons, user errors, the simulator's tokens and cost.",
    )
    repaired: Repaired | None = Field(
        default=None,
        description="The figures above are raw: a call printed as text counts as no call. "
        "These count calls recovered from text as calls (present when any was recovered).",
    )

    @field_serializer("failures", mode="wrap")
    def _all_failures(self, value: Any, handler: SerializerFunctionWrapHandler) -> Any:
        # an evaluation of many records keeps its failures in a file (a sequence, not a list)
        return handler(value if isinstance(value, list) else list(value))


def decision_scores(truth: list[bool], pred: list[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of "call" as the positive class (zero when undefined)."""
    tp = sum(1 for t, p in zip(truth, pred, strict=True) if t and p)
    return decision_from_counts(tp, sum(pred) - tp, sum(truth) - tp)


def decision_from_counts(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from true positives, false positives and false negatives.

    The arithmetic is scikit-learn's (``precision_recall_fscore_support``,
    ``zero_division=0``), so the figures are the same to the last bit.
    """
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    denom = 1.0 * (tp + fn) + (tp + fp)
    return precision, recall, (2.0 * tp) / denom if denom else 0.0


def confusion_scores(truth: list[str], pred: list[str]) -> tuple[list[str], list[list[int]], float]:
    """Labels, confusion matrix (rows expected, columns called) and macro-F1."""
    return confusion_from_counts(Counter(zip(truth, pred, strict=True)))


def confusion_from_counts(
    pairs: Counter[tuple[str, str]],
) -> tuple[list[str], list[list[int]], float]:
    """Labels, confusion matrix and macro-F1 from counts of (expected, called) pairs.

    The macro-F1 is scikit-learn's (``f1_score(average="macro", zero_division=0)``),
    computed the same way from the matrix.
    """
    import numpy as np

    labels = sorted({e for e, _ in pairs} | {a for _, a in pairs}, key=lambda x: (x == NO_CALL, x))
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for (expected, called), count in pairs.items():
        matrix[index[expected], index[called]] += count
    tp = np.diag(matrix)
    true_sum = matrix.sum(axis=1)
    pred_sum = matrix.sum(axis=0)
    denom = 1.0 * true_sum.astype(np.float64) + pred_sum.astype(np.float64)
    zero = denom == 0
    denom[zero] = 1
    f1 = (2.0 * tp.astype(np.float64)) / denom
    f1[zero] = 0.0
    return labels, matrix.tolist(), float(np.nanmean(f1))


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


_SLICE_METRICS = ("strict_pass", "selection", "arguments")


class _Outcome(NamedTuple):
    """The fields of a verdict that the rate metrics read (their ``applies`` and ``success``).

    A summary counts attempts by these (and by their slices), and measures each
    metric once per distinct combination: a metric that read another field of
    the verdict would fail on this at once, never count wrong.
    """

    kind: Kind
    passed: bool
    selection_ok: bool | None
    values_ok: bool | None
    decision_ok: bool
    multistep: _Expects | None
    """A multi-step attempt's expectation of a call (all the metrics read of it)."""


class _Expects(NamedTuple):
    expects_call: bool | None


_EXPECTS = {e: _Expects(e) for e in (True, False, None)}

#: (the _Outcome's six fields, reply_ok, no call made, tags, expected tools, risk) of an attempt.
_Group = tuple[
    Kind,
    bool,
    bool | None,
    bool | None,
    bool,
    _Expects | None,
    bool | None,
    bool,
    tuple[str, ...],
    tuple[str, ...],
    Risk,
]


class SummaryBuilder:
    """A target's summary, built from one record and one verdict at a time.

    Only what the figures need is kept: counts per metric and slice, counts of
    (expected, called) tool pairs, one small entry per attempt for the
    stability figures, the latencies, and the failures (rendered as they come,
    into ``failures``, a list unless another sink is given). Neither records
    nor verdicts are held, so memory does not grow with their payloads.
    """

    def __init__(
        self,
        suite: Suite,
        target: str | None = None,
        *,
        k: int | None = None,
        scorer: Scorer | None = None,
        failures: FailureSink | None = None,
        rounds: int | None = None,
        adaptive: bool = False,
        repeating: frozenset[str] = frozenset(),
    ) -> None:
        self.suite = suite
        #: an adaptive schedule's full rounds: the rates read only these attempt numbers;
        #: the later attempts feed the stability figures alone
        self.rounds = rounds
        self.adaptive = adaptive
        self.repeating = repeating
        self.target = target
        self.k = k
        self.scorer = scorer
        self.failures: FailureSink = failures if failures is not None else []
        self._rows = self.failures if _takes_rows(self.failures) else None
        self._first_target: str | None = None
        self.attempts = 0
        self.scored = 0
        self._infra: Counter[str] = Counter()
        self._harness = 0
        self._latencies: array[float] = array("d")
        self._input_tokens = 0
        self._output_tokens = 0
        self._usage_tokens = 0
        self._cost = 0.0
        self._priced = 0
        self._extracted = 0
        self._cached = 0
        # attempts by what the rate metrics, the slices and the decision figures read of them
        self._groups: dict[_Group, int] = {}
        self._calls_valid = 0
        self._calls_checked = 0
        self._failure_counts: Counter[str] = Counter()
        self._forbidden = 0
        self._unsafe = 0
        self._passed = 0
        self._judge_decided = 0
        self._undecided = 0
        self._undecided_arguments = 0
        self._undecided_statements = 0
        self._pairs: Counter[tuple[str, str]] = Counter()
        self._repeats = RepeatCounts()
        self._expected: dict[tuple[str, int], str] = {}
        self._multistep = _MultiStepCounts()
        self._conversations = ConversationCounts()

    def add_record(self, r: Record) -> None:
        self.attempts += 1
        if r.user_turns is not None:
            self._conversations.add_record(r)
        if self._first_target is None and r.target:
            self._first_target = r.target
        outcome = r.outcome
        if outcome is not Outcome.ok:
            if outcome is Outcome.harness_error:
                self._harness += 1
            else:  # infrastructure
                self._infra[outcome.value] += 1
        response = r.response
        latency = r.latency_ms if r.latency_ms is not None else (
            response.latency_ms if response else None
        )
        if latency is not None:
            self._latencies.append(latency)
        if response is not None:
            usage = response.usage
            if usage is not None:
                self._input_tokens += usage.input_tokens or 0
                self._output_tokens += usage.output_tokens or 0
                self._usage_tokens += (usage.input_tokens or 0) + (usage.output_tokens or 0)
            for call in response.tool_calls:
                if call.extracted_from_text:
                    self._extracted += 1
        if r.cost_usd is not None:
            self._cost += r.cost_usd
            self._priced += 1
        if r.cached:
            self._cached += 1

    def add_verdict(self, v: Verdict) -> None:
        self.scored += 1
        self._conversations.add_verdict(v)
        if self.rounds is not None and v.attempt >= self.rounds:
            # beyond the full rounds: pass^k, pass@k, flaky, the counts and the failures;
            # the rates read the full rounds alone
            self._repeats.add(v)
            self._unsafe += v.unsafe_calls
            self._forbidden += len(v.forbidden_called)
            self._failure(v)
            return
        passed = v.passed
        # the _Outcome's fields first (see _Group), as a plain tuple: cheaper to make
        key = (
            v.kind,
            passed,
            v.selection_ok,
            v.values_ok,
            v.decision_ok,
            None if v.multistep is None else _EXPECTS[v.multistep.expects_call],
            v.reply_ok,
            not v.actual_tools,
            v.tags,
            v.expected_tools,
            v.risk,
        )
        groups = self._groups
        groups[key] = groups.get(key, 0) + 1
        self._calls_valid += v.calls_schema_valid
        self._calls_checked += v.calls_checked
        failure = v.failure
        if failure is not None:
            self._failure_counts[failure.value] += 1
        if v.forbidden_called:
            self._forbidden += len(v.forbidden_called)
        self._unsafe += v.unsafe_calls
        self._passed += passed
        self._judge_decided += v.judge_decided
        if v.undecided or v.undecided_statements:
            self._undecided += 1
            self._undecided_arguments += v.undecided
            self._undecided_statements += v.undecided_statements
        if v.pairs:
            counted = self._pairs
            for pair in v.pairs:
                if pair[0] != "(any)":
                    counted[pair] += 1
        self._repeats.add(v)
        if v.multistep is not None:
            self._multistep.add(v)
        self._failure(v)

    def _failure(self, v: Verdict) -> None:
        failure = v.failure
        if failure is not None:
            if self._rows is not None:
                reasons = [c.message for c in v.checks]
                diff = self._diff(v)
                self._rows.add_failure(v.case_id, v.attempt, v.risk, failure, reasons, diff)
            else:
                self.failures.append(self._failure_item(v, failure))

    def _counts(
        self,
    ) -> tuple[dict[str, list[int]], list[int], list[int], tuple[dict[str, list[int]], ...]]:
        """The rate metrics' (successes, attempts), the reply's, the decision's (true
        positives, false positives, false negatives) and the slices' counts."""
        metrics = {name: [0, 0] for name in RATE_NAMES}
        reply = [0, 0]
        decision = [0, 0, 0]
        slices: tuple[dict[str, list[int]], ...] = ({}, {}, {})
        rates = [
            (
                metrics[name],
                applies,
                ok,
                2 * _SLICE_METRICS.index(name) if name in _SLICE_METRICS else -1,
            )
            for name, (applies, ok) in RATE_METRICS.items()
            if name != "schema_adherence"  # counts calls, not attempts
        ]
        for group, n in self._groups.items():
            kind, passed, selection_ok, values_ok, decision_ok, ms = group[:6]
            reply_ok, no_call, tags, tools, risk = group[6:]
            outcome = _Outcome(kind, passed, selection_ok, values_ok, decision_ok, ms)
            # the metrics read only these fields: they are measured on them alone
            seen = cast(Verdict, outcome)
            inc = [0, 0, 0, 0, 0, 0]
            for counts, applies, ok, slot in rates:
                if applies(seen):
                    good = n if ok(seen) else 0
                    counts[0] += good
                    counts[1] += n
                    if slot >= 0:
                        inc[slot] = good
                        inc[slot + 1] = n
            if reply_ok is not None:
                reply[0] += n if reply_ok else 0
                reply[1] += n
            truth = expects_call(seen)
            if truth is None:  # calls allowed, not required: no decision to measure
                pass
            elif truth and not no_call:
                decision[0] += n
            elif not no_call:
                decision[1] += n
            elif truth:
                decision[2] += n
            for keys, into in zip(
                (tags, tools or (NO_CALL,), (risk.value,)), slices, strict=True
            ):
                for key in keys:
                    found = into.get(key)
                    if found is None:
                        into[key] = list(inc)
                    else:
                        for i, x in enumerate(inc):
                            found[i] += x
        return metrics, reply, decision, slices

    def _diff(self, v: Verdict) -> str:
        if self.scorer is None:
            self.scorer = Scorer(self.suite, checks=())
        return render_diff(v, self.scorer.cases[v.case_id], self._expected)

    def _failure_item(self, v: Verdict, failure: FailureClass) -> FailureItem:
        return FailureItem(
            case_id=v.case_id,
            attempt=v.attempt,
            risk=v.risk,
            failure=failure,
            reasons=[c.message for c in v.checks],
            diff=self._diff(v),
        )

    def build(self) -> Summary:
        target = self.target
        if target is None:
            target = self._first_target or self.suite.name
        if self._pairs:
            labels, matrix, macro = confusion_from_counts(self._pairs)
            confusion, macro_f1 = Confusion(labels=labels, matrix=matrix), macro
        else:
            confusion, macro_f1 = Confusion(labels=[], matrix=[]), None
        metrics, reply, counts, slices = self._counts()
        if any(counts):  # (no attempt with a decision to measure: no figure)
            p, r, f = decision_from_counts(*counts)
            decision = Decision(precision=p, recall=r, f1=f)
        else:
            decision = Decision(precision=None, recall=None, f1=None)
        by_tag, by_tool, by_risk = (
            {
                key: SliceStats(
                    strict_pass=rate(c[0], c[1]),
                    selection=rate(c[2], c[3]),
                    arguments=rate(c[4], c[5]),
                )
                for key, c in sorted(groups.items())
            }
            for groups in slices
        )
        successes = self._passed
        return Summary.model_construct(
            target=target,
            attempts=self.attempts,
            scored=self.scored,
            infrastructure=dict(sorted(self._infra.items())),
            harness_errors=self._harness,
            strict_pass=rate(*metrics["strict_pass"]),
            selection=rate(*metrics["selection"]),
            macro_f1=macro_f1,
            decision=decision,
            no_call_accuracy=rate(*metrics["no_call_accuracy"]),
            schema_adherence=rate(self._calls_valid, self._calls_checked),
            arguments=rate(*metrics["arguments"]),
            reply=rate(*reply),
            failure_counts=dict(self._failure_counts.most_common()),
            forbidden_calls=self._forbidden,
            extracted_calls=self._extracted,
            by_tag=by_tag,
            by_tool=by_tool,
            by_risk=by_risk,
            confusion=confusion,
            latency_ms_p50=_percentile(self._latencies, 50),
            latency_ms_p95=_percentile(self._latencies, 95),
            input_tokens=self._input_tokens,
            output_tokens=self._output_tokens,
            cost_usd=self._cost if self._priced else None,
            failures=self.failures,
            cached=self._cached,
            unsafe_calls=self._unsafe,
            stability=self._repeats.stability(
                self.k, adaptive=self.adaptive, repeating=self.repeating
            ),
            per_success=Costs(
                successes=successes,
                tokens_per_success=(
                    self._usage_tokens / successes if successes and self._usage_tokens else None
                ),
                cost_usd_per_success=self._cost / successes if successes and self._priced else None,
            ),
            multistep=self._multistep.stats(),
            conversations=self._conversations.stats(),
            judge_decided=self._judge_decided,
            undecided=self._undecided,
            undecided_arguments=self._undecided_arguments,
            undecided_statements=self._undecided_statements,
        )


def summarize(
    suite: Suite,
    records: Iterable[Record],
    verdicts: Iterable[Verdict],
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
    builder = SummaryBuilder(suite, target, k=k, scorer=scorer)
    for r in records:
        builder.add_record(r)
    for v in verdicts:
        builder.add_verdict(v)
    return builder.build()

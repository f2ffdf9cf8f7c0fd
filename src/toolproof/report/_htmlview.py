"""The figures and cases of a run, shaped for the HTML report and the web viewer.

Pure: an :class:`~toolproof.evaluate.Evaluation` (and optionally a gate
result) in, plain dataclasses out. Nothing here escapes text: the templates
do, with autoescaping on, so every string below may be model output.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from toolproof.report._escape import visible
from toolproof.report._judged import judged_rates, legend, state_text, summary_legend
from toolproof.report._repaired import repaired_line
from toolproof.stats import RATE_NAMES, Rate, Summary
from toolproof.stats._latency import Histogram, histogram
from toolproof.stats._latency import latencies as _latencies
from toolproof.suite._text import case_prompt, contract_text
from toolproof.types import Record, Verdict

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation, TargetEvaluation
    from toolproof.gate import GateResult, JudgeStatus
    from toolproof.judges import Judgement
    from toolproof.types import Case

#: Metric labels, in report order.
LABELS = {
    "strict_pass": "strict pass",
    "selection": "tool selection",
    "arguments": "argument values",
    "schema_adherence": "schema adherence",
    "no_call_accuracy": "no-call accuracy",
    "reply": "reply",
    "pass_at_k": "pass@k",
    "pass_hat_k": "pass^k",
}
HEADLINE = "strict_pass"


@dataclass(frozen=True)
class RateView:
    """A rate with its 95% interval, ready to print and plot."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    @property
    def text(self) -> str:
        if self.value is None:
            return "–"
        return f"{100 * self.value:.1f}% ({self.k}/{self.n})"

    @property
    def interval(self) -> str:
        if self.low is None or self.high is None or self.value is None:
            return ""
        return f"[{100 * self.low:.0f}–{100 * self.high:.0f}]"


def rate_view(r: Rate | None) -> RateView:
    if r is None or not r.n:
        return RateView(0, 0, None, None, None)
    return RateView(r.k, r.n, r.k / r.n, r.low, r.high)


@dataclass(frozen=True)
class SliceRow:
    name: str
    strict_pass: RateView
    selection: RateView
    arguments: RateView


@dataclass(frozen=True)
class ToolRow:
    tool: str
    precision: float | None
    recall: float | None
    f1: float | None
    support: int


@dataclass(frozen=True)
class StabilityRow:
    case_id: str
    attempts: int
    passes: int
    pass_at_k: float
    pass_hat_k: float
    flaky: bool


@dataclass
class TargetView:
    """Every figure of one target."""

    target: str
    summary: Summary
    metrics: list[tuple[str, RateView]]
    failures: list[tuple[str, int]]
    confusion_labels: list[str]
    confusion: list[list[tuple[int, int]]]
    """Rows of (count, shade 0-5); rows are expected tools, columns called tools."""
    tools: list[ToolRow]
    by_risk: list[SliceRow]
    by_tag: list[SliceRow]
    stability: list[StabilityRow]
    flaky: list[str]
    k: int | None
    pass_hat_k: tuple[float | None, float | None, float | None]
    latency: Histogram | None
    repaired: str = ""
    """The repaired figures (calls recovered from text counted as calls); "" when none was."""
    gate: str | None = None
    """"pass", "fail" or None when the run was not gated."""
    gate_findings: list[str] = field(default_factory=list)
    judged: frozenset[str] = frozenset()
    """Labels of the metrics that count attempts a judge decided: shown with ⚖."""
    judge_legend: list[str] = field(default_factory=list)
    """What ⚖ means here: the judges behind the marked figures, with their calibration."""
    judge_figures: list[JudgedRow] = field(default_factory=list)
    """The judge rubrics' own figures (every one decided by a judge)."""


@dataclass(frozen=True)
class JudgedRow:
    """One field of one judge rubric for one target: the figure and who decided it."""

    rubric: str
    field: str
    figure: str
    judge: str
    judged: int
    judge_errors: int
    calibration: str


@dataclass(frozen=True)
class JudgementView:
    """What a judge said about one attempt: its fields and its reasoning, as data."""

    rubric: str
    judge: str
    status: str
    fields: str
    reasoning: str


@dataclass(frozen=True)
class DiffPart:
    text: str
    changed: bool


@dataclass(frozen=True)
class DiffLine:
    """One line of expected against actual; ``parts`` mark what differs."""

    label: str
    parts: list[DiffPart]


@dataclass(frozen=True)
class MessageView:
    role: str
    text: str | None
    calls: list[str]
    name: str | None
    is_error: bool
    offered: str | None = None
    """A user turn's offer of tools held back until it (``UserTurn.offered``), shown."""


@dataclass
class AttemptView:
    """One attempt: verdict, reasons, the calls made, and the raw exchange."""

    target: str
    attempt: int
    outcome: str
    passed: bool | None
    failure: str | None
    reasons: list[str]
    diff: list[DiffLine]
    calls: list[str]
    text: str | None
    transcript: list[MessageView]
    request: str
    response: str
    response_raw: bool
    """False: no provider payload was recorded, and ``response`` is the normalised one."""
    error: str | None
    latency_ms: float | None
    notes: list[str] = field(default_factory=list)
    """What the scorer observed beside the verdict, e.g. the similarity of a semantic match."""
    judge_decided: bool = False
    """The outcome turned on a judge-decided argument: the judge's answer decided it."""
    judgements: list[JudgementView] = field(default_factory=list)


@dataclass
class CaseEntry:
    """One case for one target: the row of the case list, and its details when loaded."""

    case_id: str
    target: str
    risk: str
    tags: list[str]
    kind: str
    attempts: int
    passes: int
    errors: int
    failures: list[str]
    pass_hat_k: float | None
    case: Case | None = field(default=None, repr=False, compare=False)
    details: list[AttemptView] = field(default_factory=list)
    texts: tuple[str | None, str | None, str | None] | None = field(
        default=None, repr=False, compare=False
    )
    """(prompt, contract, reason) as a history store keeps them, when there is no ``case``."""

    @cached_property
    def prompt(self) -> str:
        if self.case is None:
            return (self.texts[0] or "") if self.texts else ""
        return case_prompt(self.case)

    @cached_property
    def contract(self) -> str:
        """The expectation as YAML (rendered when first shown: a page shows few)."""
        if self.case is None:
            return (self.texts[1] or "") if self.texts else ""
        return contract_text(self.case)

    @property
    def reason(self) -> str | None:
        if self.case is None:
            return self.texts[2] if self.texts else None
        return self.case.reason

    @property
    def status(self) -> str:
        scored = self.attempts - self.errors
        if scored == 0:
            return "error"
        if self.passes == scored:
            return "pass"
        return "fail" if self.passes == 0 else "flaky"


@dataclass
class RunView:
    """A run shaped for display."""

    title: str
    suite: str
    source: str | None
    fingerprint: dict[str, str | int | None]
    started: str | None
    targets: list[TargetView]
    entries: list[CaseEntry]
    failure_classes: list[str]
    tags: list[str]
    risks: list[str]
    gate: str | None = None
    shared: list[tuple[str, str]] = field(default_factory=list)
    """Request parts shown once: (label, pretty JSON)."""


# -- figures ------------------------------------------------------------------


def _metrics(s: Summary) -> list[tuple[str, RateView]]:
    rows = [(LABELS[m], rate_view(getattr(s, m))) for m in RATE_NAMES]
    rows.append((LABELS["reply"], rate_view(s.reply)))
    return rows


def _slices(groups: dict[str, Any]) -> list[SliceRow]:
    return [
        SliceRow(
            name,
            rate_view(g.strict_pass),
            rate_view(g.selection),
            rate_view(g.arguments),
        )
        for name, g in groups.items()
    ]


def _shade(count: int, top: int) -> int:
    return 0 if count == 0 or top == 0 else 1 + min(4, int(4 * count / top))


def _tools(labels: list[str], matrix: list[list[int]]) -> list[ToolRow]:
    out = []
    for i, tool in enumerate(labels):
        tp = matrix[i][i]
        called = sum(row[i] for row in matrix)
        expected = sum(matrix[i])
        p = tp / called if called else None
        r = tp / expected if expected else None
        f = 2 * p * r / (p + r) if p is not None and r is not None and p + r else None
        if p is not None and r is not None and not p + r:
            f = 0.0
        out.append(ToolRow(tool, p, r, f, expected))
    return out


def target_view(t: TargetEvaluation) -> TargetView:
    return summary_view(t.target, t.summary, _latencies(t.records))


def summary_view(target: str, s: Summary, latencies: Sequence[float]) -> TargetView:
    """One target's figures from its summary and its attempts' latencies."""
    top = max((c for row in s.confusion.matrix for c in row), default=0)
    st = s.stability
    return TargetView(
        target=target,
        summary=s,
        metrics=_metrics(s),
        failures=sorted(s.failure_counts.items(), key=lambda kv: (-kv[1], kv[0])),
        confusion_labels=list(s.confusion.labels),
        confusion=[[(c, _shade(c, top)) for c in row] for row in s.confusion.matrix],
        tools=_tools(s.confusion.labels, s.confusion.matrix),
        by_risk=_slices(s.by_risk),
        by_tag=_slices(s.by_tag),
        stability=[
            StabilityRow(c.case_id, c.attempts, c.passes, c.pass_at_k, c.pass_hat_k, c.flaky)
            for c in (st.per_case if st else [])
        ],
        flaky=list(st.flaky) if st else [],
        repaired=repaired_line(s),
        judged=frozenset(LABELS[m] for m in judged_rates(s)),
        judge_legend=[summary_legend()] if s.judge_decided else [],
        k=st.k if st else None,
        pass_hat_k=(st.pass_hat_k.value, st.pass_hat_k.low, st.pass_hat_k.high)
        if st
        else (None, None, None),
        latency=histogram(latencies),
    )


def judged_rows(
    ev: Evaluation, target: str, statuses: Sequence[JudgeStatus] | None
) -> list[JudgedRow]:
    """The judge rubrics' figures of one target, each with its judge and calibration
    (from the gate's ``statuses``; "not checked" without a gate decision)."""
    from toolproof.judges import rubric_figures, suite_rubrics

    mine = [j for j in ev.judgements if j.target == target]
    if not mine:
        return []
    known = {s.field: s for s in statuses or ()}
    rows = []
    for fig in rubric_figures(mine, suite_rubrics(ev.suite)):
        for f in fig.fields:
            if f.rate is not None:
                figure = rate_view(f.rate).text + " true"
            elif f.total is not None:
                mean = "–" if f.mean is None else f"{f.mean:.2f}"
                figure = f"total {f.total}, mean {mean}"
            else:
                figure = ", ".join(f"{k} {v}" for k, v in (f.counts or {}).items() if v) or "–"
            st = known.get(f"{fig.rubric}.{f.field}")
            rows.append(
                JudgedRow(
                    rubric=fig.rubric,
                    field=f.field,
                    figure=figure,
                    judge=visible(fig.judge),
                    judged=fig.judged,
                    judge_errors=fig.judge_errors,
                    calibration=visible(state_text(st))
                    if st is not None
                    else "calibration not checked (toolproof gate checks it)",
                )
            )
    return rows


# -- cases --------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _parts(mine: list[str], ops: Any, side: int) -> list[DiffPart]:
    out = []
    for tag, i1, i2, j1, j2 in ops:
        chunk = "".join(mine[i1:i2] if side == 0 else mine[j1:j2])
        if chunk:
            out.append(DiffPart(chunk, tag != "equal"))
    return out


def readable_diff(diff: str) -> list[DiffLine]:
    """Expected against actual, with the differing words marked.

    The scorer's diff is lines of ``label: text``; an ``expected`` line and the
    ``actual`` line after it are compared word by word. Other lines pass as is.
    """
    lines = [visible(ln) for ln in diff.splitlines() if ln.strip()]
    out: list[DiffLine] = []
    i = 0
    while i < len(lines):
        label, _, text = lines[i].partition(":")
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if label.strip() == "expected" and nxt.startswith("actual"):
            other = nxt.partition(":")[2]
            a, b = _TOKEN.findall(text.strip()), _TOKEN.findall(other.strip())
            ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
            out.append(DiffLine("expected", _parts(a, ops, 0)))
            out.append(DiffLine("actual", _parts(b, ops, 1)))
            i += 2
            continue
        if text and " " not in label.strip():
            out.append(DiffLine(label.strip(), [DiffPart(text.strip(), False)]))
        else:
            out.append(DiffLine("", [DiffPart(lines[i], False)]))
        i += 1
    return out


def _json(value: Any) -> str:
    if value is None:
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def _call_text(name: str, raw: str | None, args: Any) -> str:
    if raw is not None:
        return f"{name}({raw})"
    return f"{name}({json.dumps(args, ensure_ascii=False, default=str)})"


#: Parts of requests at least this long (as JSON) that recur are shown once.
SHARED_MIN = 400


def _recurring(texts: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    for text in texts:
        if len(text) >= SHARED_MIN:
            seen[text] = seen.get(text, 0) + 1
    return [t for t, n in seen.items() if n > 1]


@dataclass
class SharedParts:
    """Large request parts that recur across attempts (the tool list, the system
    message), shown once in a report instead of once per attempt. The records
    are not changed; only the display refers to the shared copy."""

    blocks: dict[str, str] = field(default_factory=dict)
    """Pretty JSON of a part -> its label (R1, R2, ...)."""

    @classmethod
    def of(cls, records: Iterable[Record]) -> SharedParts:
        """Whole values of a request that recur; else, elements of its lists that recur."""
        requests = [r.request for r in records if isinstance(r.request, dict)]
        whole = _recurring(_json(v) for req in requests for v in req.values())
        parts = _recurring(
            _json(item)
            for req in requests
            for v in req.values()
            if isinstance(v, list) and _json(v) not in whole
            for item in v
        )
        labels = [*whole, *(t for t in parts if t not in whole)]
        return cls({t: f"R{i}" for i, t in enumerate(labels, 1)})

    def ref(self, label: str) -> str:
        return f"⟨shared request part {label}, shown once under 'Shared request parts'⟩"

    def render(self, request: Any) -> str:
        if not self.blocks or not isinstance(request, dict):
            return _json(request)

        def swap(value: Any) -> Any:
            label = self.blocks.get(_json(value))
            return self.ref(label) if label else value

        out = {}
        for key, value in request.items():
            swapped = swap(value)
            if swapped is value and isinstance(value, list):
                swapped = [swap(v) for v in value]
            out[key] = swapped
        return _json(out)


def judgement_view(j: Judgement) -> JudgementView:
    """A judgement for display: control and bidi characters in what the judge wrote are
    shown as visible escapes (the templates escape HTML)."""
    if j.status == "ok":
        fields = ", ".join(f"{k}={v}" for k, v in (j.fields or {}).items())
        reasoning = j.reasoning or ""
    else:
        fields = j.status
        reasoning = j.error or ""
    return JudgementView(
        rubric=j.rubric,
        judge=visible(j.judge),
        status=j.status,
        fields=visible(fields),
        reasoning=visible(reasoning, keep="\n\t"),
    )


def conversation_notes(record: Record, case: Case | None) -> list[str]:
    """What to show beside a conversation: its stop, its simulated user's scenario (the
    hidden instructions), the user model and its tokens, and the simulator's problems."""
    out = [f"conversation stopped by: {record.stopped_by or '–'}"]
    user = case.user if case is not None else None
    if user is not None and user.instructions is not None:
        parts = [f"instructions: {user.instructions}"]
        for label, value in (("known", user.known), ("unknown", user.unknown)):
            if value:
                items = [value] if isinstance(value, str) else value
                parts.append(f"{label}: {'; '.join(items)}")
        if user.persona:
            parts.append(f"persona: {user.persona}")
        out.append("simulated user (hidden from the agent): " + " · ".join(parts))
    elif user is not None and user.script is not None:
        out.append(f"scripted user: {len(user.script)} script entries")
    if record.user_model is not None:
        usage = record.user_usage
        tokens = (
            f", {usage.input_tokens or 0} / {usage.output_tokens or 0} tokens"
            if usage is not None
            else ""
        )
        out.append(f"user model: {record.user_model}{tokens}")
    out.extend(f"simulator check: {p}" for p in record.user_problems or ())
    return [visible(line) for line in out]


def _place_offers(record: Record, transcript: list[MessageView]) -> dict[int, str]:
    """Each user turn's offer of held-back tools (``offer``), shown on the message it
    came with; the offers of turns with no message in ``transcript`` (a stop), by turn."""
    unplaced: dict[int, str] = {}
    for number, turn in enumerate(record.user_turns or (), 1):
        if not turn.offered:
            continue
        shown = visible(f"offers the agent: {', '.join(turn.offered)} (user turn {number})")
        at = turn.at
        if at is not None and 0 <= at < len(transcript) and transcript[at].role == "user":
            transcript[at] = replace(transcript[at], offered=shown)
        else:
            unplaced[number] = shown
    return unplaced


def attempt_view(
    record: Record,
    verdict: Verdict | None,
    shared: SharedParts | None = None,
    diff: Callable[[Verdict], str] | None = None,
    judgements: Sequence[Judgement] = (),
    *,
    case: Case | None = None,
) -> AttemptView:
    """One attempt with its verdict (None when it got no model answer) and what judges
    said about it. A conversation's notes say what ended it, what its simulated user
    was told (``case``: hidden from the agent) and what the simulator checks found."""
    resp = record.response
    calls = (
        [_call_text(c.name, c.raw_arguments, c.arguments) for c in resp.tool_calls]
        if (resp)
        else []
    )
    transcript = [
        MessageView(
            role=str(m.role),
            text=m.content,
            calls=[_call_text(c.name, c.raw_arguments, c.arguments) for c in m.tool_calls],
            name=m.name,
            is_error=m.is_error,
        )
        for m in record.transcript or []
    ]
    unplaced = _place_offers(record, transcript)
    for turn in reversed(record.user_turns or ()):  # the user's own calls, before its message
        if turn.calls and turn.at is not None:
            made = [
                MessageView(
                    role="user tool",
                    text=c.result,
                    calls=[_call_text(c.tool, None, c.args)],
                    name=c.tool,
                    is_error=c.is_error,
                )
                for c in turn.calls
            ]
            transcript[turn.at : turn.at] = made
    notes = list(verdict.notes) if verdict is not None else []
    if record.user_turns is not None:
        last = record.user_turns[-1] if record.user_turns else None
        if last is not None and last.stop is not None:  # the stop never reached the agent
            said = f"{last.text} " if last.text else ""
            stop = MessageView(
                role="user", text=f"{said}(stops: {last.stop})", calls=[], name=None, is_error=False
            )
            transcript.append(replace(stop, offered=unplaced.pop(len(record.user_turns), None)))
        notes.extend(unplaced.values())  # (a turn whose message is not in the transcript)
        notes.extend(conversation_notes(record, case))
    raw = (
        resp.raw
        if resp is not None and resp.raw is not None
        else (resp.model_dump(mode="json", exclude_none=True) if resp is not None else None)
    )
    err = record.error
    return AttemptView(
        target=record.target or "",
        attempt=record.attempt,
        outcome=record.outcome.value,
        passed=verdict.passed if verdict is not None else None,
        failure=verdict.failure.value if verdict is not None and verdict.failure else None,
        reasons=[c.message for c in verdict.checks if c.failure] if verdict else [],
        diff=readable_diff(diff(verdict))
        if diff is not None and verdict is not None and not verdict.passed
        else [],
        calls=calls,
        text=resp.text if resp else None,
        transcript=transcript,
        request=shared.render(record.request) if shared else _json(record.request),
        response=_json(raw),
        response_raw=resp is not None and resp.raw is not None,
        error=f"{err.kind}: {err.message}" if err is not None else None,
        latency_ms=record.latency_ms
        if record.latency_ms is not None
        else (resp.latency_ms if resp else None),
        notes=notes,
        judge_decided=verdict is not None and verdict.judge_decided,
        judgements=[judgement_view(j) for j in judgements if j.repeat == 0],
    )


def entries(ev: Evaluation, *, details: bool, shared: SharedParts | None = None) -> list[CaseEntry]:
    """One entry per case and target, in suite order; with every attempt when ``details``."""
    cases = {c.id: c for c in ev.suite.cases}
    order = {c.id: i for i, c in enumerate(ev.suite.cases)}
    out: list[CaseEntry] = []
    for t in ev.targets.values():
        verdicts = {(v.case_id, v.attempt): v for v in t.verdicts}
        phk = {
            c.case_id: c.pass_hat_k
            for c in (t.summary.stability.per_case if t.summary.stability else [])
        }
        by_case: dict[str, list[Record]] = {}
        for r in t.records:
            by_case.setdefault(r.case_id, []).append(r)
        judged: dict[tuple[str, int], list[Judgement]] = {}
        if details:
            for j in ev.judgements:
                if j.target == t.target:
                    judged.setdefault((j.case_id, j.attempt), []).append(j)
        for cid in sorted(by_case, key=lambda c: order.get(c, 1 << 30)):
            recs = sorted(by_case[cid], key=lambda r: r.attempt)
            vs = [verdicts.get((cid, r.attempt)) for r in recs]
            out.append(
                entry(
                    cases[cid],
                    t.target,
                    recs,
                    vs,
                    phk.get(cid),
                    details=details,
                    diff=ev.diff,
                    shared=shared,
                    judgements=judged,
                )
            )
    return out


def entry(
    case: Case,
    target: str,
    records: Sequence[Record],
    verdicts: Sequence[Verdict | None],
    pass_hat_k: float | None,
    *,
    details: bool,
    shared: SharedParts | None = None,
    diff: Callable[[Verdict], str] | None = None,
    judgements: Mapping[tuple[str, int], Sequence[Judgement]] | None = None,
) -> CaseEntry:
    scored = [v for v in verdicts if v is not None]
    failures = sorted({v.failure.value for v in scored if v.failure is not None})
    e = CaseEntry(
        case_id=case.id,
        target=target,
        risk=scored[0].risk.value if scored else (case.risk.value if case.risk else "low"),
        tags=list(case.tags),
        kind=scored[0].kind.value if scored else "",
        attempts=len(records),
        passes=sum(v.passed for v in scored),
        errors=len(records) - len(scored),
        failures=failures,
        pass_hat_k=pass_hat_k,
        case=case,
    )
    if details:
        said = judgements or {}
        e.details = [
            attempt_view(r, v, shared, diff, said.get((r.case_id, r.attempt), ()), case=case)
            for r, v in zip(records, verdicts, strict=True)
        ]
    return e


def run_view(ev: Evaluation, gate: GateResult | None = None, *, details: bool = True) -> RunView:
    """Shape an evaluation (and its gate decision, if any) for display."""
    targets = [target_view(t) for t in ev.targets.values()]
    statuses: dict[str, list[JudgeStatus]] = {}
    if gate is not None:
        decided = {g.target: g for g in gate.targets}
        for tv in targets:
            g = decided.get(tv.target)
            if g is not None:
                tv.gate = "pass" if g.passed else "fail"
                tv.gate_findings = [
                    visible(f.message if f.blocking else f"not blocking: {f.message}")
                    for f in g.findings
                    if f.blocking or f.rule == "advisory"
                ]
                statuses[tv.target] = g.judges
                if g.judges:
                    tv.judge_legend = [visible(line) for line in legend(g.judges)]
    for tv in targets:
        tv.judge_figures = judged_rows(ev, tv.target, statuses.get(tv.target))
    shared = SharedParts.of(ev.records) if details else None
    all_entries = entries(ev, details=details, shared=shared)
    m = ev.manifest
    fp = ev.fingerprint()
    return RunView(
        title=m.run_id if m else (ev.source.name if ev.source else ev.suite.name),
        suite=ev.suite.name,
        source=str(ev.source) if ev.source else None,
        fingerprint=fp,
        started=m.started_at.isoformat() if m and getattr(m, "started_at", None) else None,
        targets=targets,
        entries=all_entries,
        failure_classes=sorted({f for e in all_entries for f in e.failures}),
        tags=sorted({t for e in all_entries for t in e.tags}),
        risks=[
            r
            for r in ("critical", "high", "medium", "low")
            if any(e.risk == r for e in all_entries)
        ],
        gate=None if gate is None else ("pass" if gate.passed else "fail"),
        shared=sorted(
            ((label, text) for text, label in shared.blocks.items()), key=lambda lt: int(lt[0][1:])
        )
        if shared
        else [],
    )

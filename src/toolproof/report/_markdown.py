"""The Markdown summary for a pull-request comment.

Headline table, deltas against the baseline, failing cases with their diffs,
and flaky cases in a collapsed ``<details>`` list. Every piece of model output
and every name from a suite is escaped, so a comment cannot be made to render
HTML, links or broken tables.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolproof.gate import Comparison, GateResult, JudgeStatus, TargetGate
from toolproof.report._escape import html_text, md_code_block, md_text
from toolproof.report._gate_terminal import confidence_text
from toolproof.report._judged import comparison_legend, judged_rates, legend, marked
from toolproof.report._repaired import recovered_text, with_repaired
from toolproof.report._terminal import fmt_rate
from toolproof.stats import CaseStability, MultiStepStats, Summary
from toolproof.types import Risk

MAX_FAILURES = 25


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _delta(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:+.1f}"


def _verdict(passed: bool) -> str:
    return "✅ passed" if passed else "❌ failed"


def _headline(result: GateResult) -> list[str]:
    k = next((t.summary.stability.k for t in result.targets if t.summary.stability), 1)
    lines = [
        f"| target | gate | strict pass | tool selection | argument accuracy "
        f"| pass^{k} | flaky | unsafe calls |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in result.targets:
        s = t.summary
        st = s.stability
        judged = judged_rates(s)
        lines.append(
            f"| {md_text(t.target)} | {_verdict(t.passed)} "
            f"| {marked(with_repaired(s, 'strict_pass', fmt_rate), 'strict_pass' in judged)} "
            f"| {with_repaired(s, 'selection', fmt_rate)} "
            f"| {marked(with_repaired(s, 'arguments', fmt_rate), 'arguments' in judged)} "
            f"| {marked(_pct(st.pass_hat_k.value) if st else '–', 'pass_hat_k' in judged)} "
            f"| {len(st.flaky) if st else 0} | {s.unsafe_calls} |"
        )
    for t in result.targets:
        if t.judges:
            lines += [""]
            lines += [f"{md_text(t.target)}: {md_text(x, 500)}  " for x in legend(t.judges)]
    for t in result.targets:
        if t.summary.repaired is not None:
            lines += [
                "",
                f"{md_text(t.target)}: calls recovered from text: {recovered_text(t.summary)}",
            ]
    return lines


def _findings(t: TargetGate) -> list[str]:
    blocking = [f for f in t.findings if f.blocking]
    notes = [f for f in t.findings if not f.blocking]
    out = []
    if blocking:
        out += ["", "**Why the gate failed**", ""]
        out += [f"- {md_text(f.message, 400)}" for f in blocking]
    if notes:
        out += ["", "**Not blocking**", ""]
        out += [f"- {md_text(f.message, 400)}" for f in notes]
    return out


def _comparison(c: Comparison, judges: Sequence[JudgeStatus] = ()) -> list[str]:
    out = [
        "",
        f"**Against the baseline** ({md_text(c.baseline_target)})",
        "",
        "| metric | baseline | this run | Δ points | McNemar p |",
        "|---|---|---|---|---|",
    ]
    from toolproof.gate._measured import LABELS

    for m in [*c.metrics, *c.judged]:
        p = f"{m.test.p_value:.3g}" if m.test is not None else "–"
        label = marked(md_text(LABELS.get(m.metric, m.metric)), m.judge is not None)
        out.append(
            f"| {label} | {_pct(m.baseline)} | {_pct(m.current)} | {_delta(m.delta)} | {p} |"
        )
    for name, (a, b) in c.counts.items():
        out.append(f"| {LABELS.get(name, name)} | {a} | {b} | {b - a:+d} | – |")
    legend_lines = comparison_legend(c, judges)
    if legend_lines:
        out += [""] + [f"{md_text(x, 500)}  " for x in legend_lines]
    out += ["", "| risk class | baseline | this run | Δ points |", "|---|---|---|---|"]
    out += [
        f"| {r.risk} | {fmt_rate(r.baseline)} | {fmt_rate(r.current)} | {_delta(r.delta)} |"
        for r in c.by_risk
    ]
    out += ["", f"Newly failing ({len(c.newly_failing)}): {_names(c.newly_failing)}  "]
    out += [f"Newly fixed ({len(c.newly_fixed)}): {_names(c.newly_fixed)}"]
    if c.fixed_by_judge:
        out[-1] += "  "
        out += [
            f"⚖ Passing only by a judge's answers ({len(c.fixed_by_judge)}, failed in the "
            f"baseline, not counted as fixed): {_names(c.fixed_by_judge)}"
        ]
    return out


def _names(ids: list[str]) -> str:
    return ", ".join(md_text(i) for i in ids) or "none"


def _failures(s: Summary) -> list[str]:
    cases = {c.case_id: c for c in s.stability.per_case} if s.stability else {}
    seen: dict[str, int] = {}
    out: list[str] = []
    order = {r.value: i for i, r in enumerate(reversed(Risk))}
    for item in sorted(s.failures, key=lambda i: (order[i.risk.value], i.case_id, i.attempt)):
        if item.case_id in seen:
            continue
        seen[item.case_id] = 1
        if len(seen) > MAX_FAILURES:
            out.append("\n… and more; see the JUnit or JSON report.")
            break
        c = cases.get(item.case_id)
        tally = f" — passed {c.passes}/{c.attempts}" if c else ""
        body = "\n".join(item.reasons + (["", *item.diff.splitlines()] if item.diff else []))
        out += [
            "",
            f"<details><summary>{html_text(item.case_id)} ({item.risk.value}) "
            f"{item.failure.value}{tally}</summary>",
            "",
            md_code_block(body),
            "",
            "</details>",
        ]
    if out:
        n = len({i.case_id for i in s.failures})
        out = ["", f"**Failing cases** ({n})", *out]
    return out


def _flaky(cases: list[CaseStability]) -> list[str]:
    flaky = [c for c in cases if c.flaky]
    if not flaky:
        return []
    out = [
        "",
        f"<details><summary>Flaky cases ({len(flaky)}): mixed outcomes, not reliable</summary>",
        "",
        "| case | risk | passed | tool sets seen |",
        "|---|---|---|---|",
    ]
    for c in flaky:
        sets = "; ".join(", ".join(s) or "no call" for s in c.tool_sets)
        out.append(
            f"| {md_text(c.case_id)} | {c.risk.value} | {c.passes}/{c.attempts} | {md_text(sets)} |"
        )
    return [*out, "", "</details>"]


def _multistep(m: MultiStepStats) -> list[str]:
    steps = "–" if m.steps_per_success is None else f"{m.steps_per_success:.2f}"
    return [
        "",
        f"Multi-step ({m.attempts} attempts): task success {fmt_rate(m.success)} · "
        f"trajectory {fmt_rate(m.trajectory)} · end state {fmt_rate(m.end_state)} · "
        f"clarification {fmt_rate(m.clarification)} · unsafe calls {m.unsafe_calls} · "
        f"graceful failure (heuristic) {fmt_rate(m.graceful_failure)} · "
        f"steps per success {steps} · redundant calls {m.redundant_calls}",
    ]


def _target(t: TargetGate) -> list[str]:
    s = t.summary
    out = ["", f"### {md_text(t.target)}: {_verdict(t.passed)}"]
    out += ["", f"Answers from the cache (no model call): {s.cached} of {s.attempts}"]
    if s.stability is not None:
        st = s.stability
        passes = f"pass@1 {_pct(st.pass_at_1.value)} · "
        if st.k > 1:  # with one attempt per case, pass@k and pass^k are pass@1
            passes += f"pass@{st.k} {_pct(st.pass_at_k.value)} · pass^{st.k} "
            passes += f"{_pct(st.pass_hat_k.value)} · "
        out += [
            "",
            f"{passes}flaky {len(st.flaky)} · steady failures {len(st.steady_failures)} · "
            f"tool changes {fmt_rate(st.tool_change)}",
        ]
    if s.multistep is not None:
        out += _multistep(s.multistep)
    if t.schedule is not None:
        out += ["", f"Adaptive repeats: {md_text(t.schedule.line(), 400)}"]
        out += [
            f"- {md_text(d.scope)}: {d.label} {d.decision}ed {confidence_text(d.confidence)}"
            for d in t.schedule.decisions
        ]
    out += _findings(t)
    if t.comparison is not None:
        out += _comparison(t.comparison, t.judges)
    out += _failures(s)
    out += _flaky(s.stability.per_case if s.stability else [])
    return out


def render_markdown(result: GateResult) -> str:
    """The PR comment for a gate result."""
    lines = [f"## toolproof gate: {_verdict(result.passed)} — suite {md_text(result.suite)}", ""]
    lines += _headline(result)
    if result.figures_note:
        lines += ["", f"Figures: {md_text(result.figures_note, 300)}"]
    if result.warnings:
        lines += ["", "> [!WARNING]", "> The runs differ in more than the target under test:"]
        lines += [f"> - {md_text(w, 300)}" for w in result.warnings]
    for t in result.targets:
        lines += _target(t)
    return "\n".join(lines) + "\n"

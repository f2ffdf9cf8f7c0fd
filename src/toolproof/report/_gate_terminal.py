"""The gate and compare results in the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from toolproof.gate import Comparison, GateResult, JudgeStatus, TargetGate
from toolproof.gate._measured import LABELS
from toolproof.report._escape import term_text
from toolproof.report._judged import comparison_legend, judged_rates, legend, marked
from toolproof.report._terminal import fmt_rate, render_terminal


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def confidence_text(x: float) -> str:
    """A decision's confidence: ``at confidence 99.2%``, ``> 99.99%`` (never a rounded
    100%), or that the sequential test has no evidence for it yet."""
    if x <= 0:
        return "on the point estimate alone (the sequential test has no evidence for it yet)"
    return "at confidence " + ("> 99.99%" if x > 0.9999 else f"{100 * x:.2f}%")


def comparison_table(c: Comparison) -> Table:
    table = Table(
        title=f"{term_text(c.target)} against {term_text(c.baseline_target)}", title_justify="left"
    )
    for col in ("metric", "baseline", "this run", "Δ points", "McNemar p (worse/better)"):
        table.add_column(col, overflow="fold")
    for m in [*c.metrics, *c.judged]:
        delta = "–" if m.delta is None else f"{100 * m.delta:+.1f}"
        test = "–" if m.test is None else f"{m.test.p_value:.3g} ({m.test.worse}/{m.test.better})"
        label = term_text(marked(LABELS.get(m.metric, m.metric), m.judge is not None))
        table.add_row(label, _pct(m.baseline), _pct(m.current), delta, test)
    for name, (a, b) in c.counts.items():
        table.add_row(LABELS.get(name, name), str(a), str(b), f"{b - a:+d}", "–")
    return table


def risk_table(c: Comparison) -> Table:
    table = Table(title="strict pass by risk class", title_justify="left")
    for col in ("risk", "baseline", "this run", "Δ points"):
        table.add_column(col, overflow="fold")
    for r in c.by_risk:
        delta = "–" if r.delta is None else f"{100 * r.delta:+.1f}"
        table.add_row(r.risk, fmt_rate(r.baseline), fmt_rate(r.current), delta)
    return table


def render_comparison(c: Comparison, console: Console, judges: Sequence[JudgeStatus] = ()) -> None:
    """The comparison tables, and the legend of the rows marked ⚖."""
    console.print(comparison_table(c))
    for line in comparison_legend(c, judges):
        console.print(term_text(line), highlight=False)
    console.print(risk_table(c))
    for title, ids in (("newly failing", c.newly_failing), ("newly fixed", c.newly_fixed)):
        names = ", ".join(term_text(i) for i in ids) or "none"
        console.print(f"[bold]{title}[/bold] ({len(ids)}): {names}", highlight=False)
    if c.fixed_by_judge:
        names = ", ".join(term_text(i) for i in c.fixed_by_judge)
        console.print(
            f"[bold]⚖ passing only by a judge's answers[/bold] ({len(c.fixed_by_judge)}, "
            f"failed in the baseline, not counted as fixed): {names}",
            highlight=False,
        )


def _thresholds(t: TargetGate) -> Table:
    table = Table(title=f"thresholds · {term_text(t.target)}", title_justify="left")
    for col in ("scope", "metric", "result", ""):
        table.add_column(col, overflow="fold")
    judged = judged_rates(t.summary)
    for c in t.thresholds:
        mark = "[green]ok[/green]" if c.passed else "[red]MISS[/red]"
        label = marked(c.label, c.metric in judged)
        table.add_row(term_text(c.scope), label, term_text(c.detail), mark)
    return table


def render_gate(
    result: GateResult, console: Console, *, failures: bool = False, tags: bool = False
) -> None:
    """Report, thresholds, comparison, flaky cases and the decision."""
    summaries = {t.target: t.summary for t in result.targets}
    render_terminal(summaries, console, failures=failures, tags=tags, headline=False)
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {term_text(w)}", highlight=False)
    if result.figures_note:
        console.print(f"[bold]figures:[/bold] {result.figures_note}", highlight=False)
    for t in result.targets:
        console.print(_thresholds(t))
        if t.comparison is not None:
            render_comparison(t.comparison, console, t.judges)
        else:
            for line in legend(t.judges):
                console.print(term_text(line), highlight=False)
        st = t.summary.stability
        if st is not None and st.flaky:
            rows = {c.case_id: c for c in st.per_case}
            flaky = ", ".join(
                f"{term_text(i)} ({rows[i].passes}/{rows[i].attempts})" for i in st.flaky
            )
            console.print(
                f"[yellow]flaky, not reliable[/yellow] ({len(st.flaky)}): {flaky}", highlight=False
            )
        if t.schedule is not None:
            console.print(
                f"[bold]adaptive repeats[/bold] {term_text(t.schedule.line())}", highlight=False
            )
            for d in t.schedule.decisions:
                console.print(
                    f"  {term_text(d.scope)}: {d.label} {d.decision}ed "
                    f"{confidence_text(d.confidence)}",
                    highlight=False,
                )
        for f in t.findings:
            style = "red" if f.blocking else "yellow"
            console.print(f"[{style}]{f.rule}[/{style}] {term_text(f.message)}", highlight=False)
        verdict = "[green]PASSED[/green]" if t.passed else "[red]FAILED[/red]"
        console.print(f"gate {verdict} · {term_text(t.target)}")

"""The terminal report: targets side by side, then failures with their diffs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from toolproof.report._escape import term_text
from toolproof.stats import Estimate, MultiStepStats, Rate, Summary


def fmt_rate(r: Rate) -> str:
    if r.n == 0:
        return "–"
    text = f"{100 * r.k / r.n:.1f}% ({r.k}/{r.n})"
    if r.low is not None and r.high is not None:
        text += f" [{100 * r.low:.0f}–{100 * r.high:.0f}]"
    return text


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _est(e: Estimate) -> str:
    if e.value is None:
        return "–"
    ci = (
        f" [{100 * e.low:.0f}–{100 * e.high:.0f}]"
        if e.low is not None and e.high is not None
        else ""
    )
    return f"{100 * e.value:.1f}%{ci}"


def _stability(s: Summary) -> str:
    st = s.stability
    if st is None:
        return "–"
    if st.k == 1:
        return f"{_est(st.pass_at_1)} (one attempt per case: use --repeats)"
    return f"{_est(st.pass_at_1)} / {_est(st.pass_at_k)} / {_est(st.pass_hat_k)} (k={st.k})"


def _flaky(s: Summary) -> str:
    st = s.stability
    return "–" if st is None else f"{len(st.flaky)} / {len(st.steady_failures)} of {st.cases}"


def _min_series(s: Summary) -> str:
    st = s.stability
    if st is None or st.min_series is None or len(st.series) < 2:
        return "–"
    return fmt_rate(st.min_series)


def _calls(s: Summary) -> str:
    st = s.stability
    if st is None:
        return "–"
    return ", ".join(f"{n}: {count}" for n, count in st.call_counts.items())


def _per_success(s: Summary) -> str:
    c = s.per_success
    if c is None:
        return "–"
    tokens = "–" if c.tokens_per_success is None else f"{c.tokens_per_success:.0f}"
    cost = "–" if c.cost_usd_per_success is None else f"{c.cost_usd_per_success:.5f}"
    return f"{tokens} / {cost}"


_ROWS: list[tuple[str, Callable[[Summary], str]]] = [
    ("attempts scored", lambda s: f"{s.scored} of {s.attempts}"),
    ("strict pass", lambda s: fmt_rate(s.strict_pass)),
    ("tool selection", lambda s: fmt_rate(s.selection)),
    ("argument accuracy (tool right)", lambda s: fmt_rate(s.arguments)),
    ("schema adherence (per call)", lambda s: fmt_rate(s.schema_adherence)),
    ("no-call accuracy", lambda s: fmt_rate(s.no_call_accuracy)),
    (
        "decision precision / recall / F1",
        lambda s: (
            f"{_num(s.decision.precision)} / {_num(s.decision.recall)} / {_num(s.decision.f1)}"
        ),
    ),
    ("tool macro-F1", lambda s: _num(s.macro_f1)),
    ("reply checks (heuristic)", lambda s: fmt_rate(s.reply)),
    ("pass@1 / pass@k / pass^k", lambda s: _stability(s)),
    ("flaky / steady failing cases", lambda s: _flaky(s)),
    (
        "tool-change rate (cases)",
        lambda s: fmt_rate(s.stability.tool_change) if s.stability else "–",
    ),
    ("lowest attempt series", lambda s: _min_series(s)),
    ("tool calls per attempt (calls: attempts)", lambda s: _calls(s)),
    ("forbidden tool calls", lambda s: str(s.forbidden_calls)),
    ("unsafe calls", lambda s: str(s.unsafe_calls)),
    ("calls extracted from text", lambda s: str(s.extracted_calls)),
    (
        "infrastructure errors (not scored)",
        lambda s: ", ".join(f"{k} {v}" for k, v in s.infrastructure.items()) or "0",
    ),
    ("harness errors", lambda s: str(s.harness_errors)),
    ("answers from the cache (no model call)", lambda s: f"{s.cached} of {s.attempts}"),
    (
        "latency p50 / p95 ms",
        lambda s: f"{_num(s.latency_ms_p50, 0)} / {_num(s.latency_ms_p95, 0)}",
    ),
    ("tokens in / out", lambda s: f"{s.input_tokens} / {s.output_tokens}"),
    ("cost USD", lambda s: "–" if s.cost_usd is None else f"{s.cost_usd:.4f}"),
    ("tokens / cost per success", lambda s: _per_success(s)),
]


def _per(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


_MS_ROWS: list[tuple[str, Callable[[MultiStepStats], str]]] = [
    ("multi-step attempts", lambda m: str(m.attempts)),
    ("task success", lambda m: fmt_rate(m.success)),
    ("trajectory success", lambda m: fmt_rate(m.trajectory)),
    ("end-state success", lambda m: fmt_rate(m.end_state)),
    ("clarification rate", lambda m: fmt_rate(m.clarification)),
    ("unsafe calls / attempts with one", lambda m: f"{m.unsafe_calls} / {fmt_rate(m.unsafe_rate)}"),
    ("graceful failure (heuristic)", lambda m: fmt_rate(m.graceful_failure)),
    (
        "steps / calls per success",
        lambda m: f"{_per(m.steps_per_success)} / {_per(m.calls_per_success)}",
    ),
    ("redundant calls", lambda m: str(m.redundant_calls)),
    ("step limit reached", lambda m: str(m.step_limit_hits)),
]


def _multistep(summaries: dict[str, Summary]) -> Table | None:
    if all(s.multistep is None for s in summaries.values()):
        return None
    table = Table(title="multi-step tasks", title_justify="left")
    table.add_column("metric", style="bold")
    for target in summaries:
        table.add_column(term_text(target), overflow="fold")
    for label, getter in _MS_ROWS:
        table.add_row(
            label,
            *("–" if s.multistep is None else getter(s.multistep) for s in summaries.values()),
        )
    return table


def _multistep_slices(summaries: dict[str, Summary], title: str, attr: str) -> Table | None:
    def cell(s: Summary, key: str) -> str | None:
        st = getattr(s.multistep, attr).get(key) if s.multistep is not None else None
        if st is None:
            return None
        return f"{fmt_rate(st.success)} · {fmt_rate(st.end_state)} · {st.unsafe_calls}"

    groups = [getattr(s.multistep, attr) for s in summaries.values() if s.multistep is not None]
    return _slice_table(summaries, title, "success · end state · unsafe", groups, cell)


def _slice_table(
    summaries: dict[str, Summary],
    title: str,
    what: str,
    groups: list[dict[str, Any]],
    cell: Callable[[Summary, str], str | None],
) -> Table | None:
    """One row per slice key, one column per target."""
    keys = sorted({k for g in groups for k in g})
    if not keys:
        return None
    table = Table(title=title, title_justify="left")
    table.add_column("slice")
    for target in summaries:
        table.add_column(f"{term_text(target)} · {what}", overflow="fold")
    for key in keys:
        table.add_row(term_text(key), *((cell(s, key) or "–") for s in summaries.values()))
    return table


def _headline(summaries: dict[str, Summary]) -> Table:
    table = Table(title="toolproof report", title_justify="left", show_lines=False)
    table.add_column("metric", style="bold")
    for target in summaries:
        table.add_column(term_text(target), overflow="fold")
    for label, getter in _ROWS:
        table.add_row(label, *(getter(s) for s in summaries.values()))
    return table


def _failure_classes(summaries: dict[str, Summary]) -> Table | None:
    classes = sorted({k for s in summaries.values() for k in s.failure_counts})
    if not classes:
        return None
    table = Table(title="failed cases by first failing stage", title_justify="left")
    table.add_column("failure class")
    for target in summaries:
        table.add_column(term_text(target), justify="right")
    for c in classes:
        table.add_row(c, *(str(s.failure_counts.get(c, 0)) for s in summaries.values()))
    return table


def _slices(summaries: dict[str, Summary], title: str, attr: str) -> Table | None:
    def cell(s: Summary, key: str) -> str | None:
        st = getattr(s, attr).get(key)
        return fmt_rate(st.strict_pass) if st else None

    groups = [getattr(s, attr) for s in summaries.values()]
    return _slice_table(summaries, title, "strict pass", groups, cell)


def render_terminal(
    summaries: dict[str, Summary], console: Console, *, failures: bool = True, tags: bool = True
) -> None:
    """Print the report for one or more targets, side by side."""
    console.print(_headline(summaries))
    for table in (
        _failure_classes(summaries),
        _slices(summaries, "by risk class", "by_risk"),
        _slices(summaries, "by tag", "by_tag") if tags else None,
        _multistep(summaries),
        _multistep_slices(summaries, "multi-step by risk class", "by_risk"),
        _multistep_slices(summaries, "multi-step by tool", "by_tool"),
        _multistep_slices(summaries, "multi-step by tag", "by_tag") if tags else None,
    ):
        if table is not None:
            console.print(table)
    if failures:
        _print_failures(summaries, console)


def _print_failures(summaries: dict[str, Summary], console: Console) -> None:
    for target, s in summaries.items():
        if not s.failures:
            continue
        console.print(f"\n[bold]failures · {term_text(target)}[/bold] ({len(s.failures)})")
        for item in s.failures:
            attempt = f" #{item.attempt}" if item.attempt else ""
            console.print(
                f"[red]✗[/red] {term_text(item.case_id)}{attempt} [dim]({item.risk.value})[/dim] "
                f"[yellow]{item.failure.value}[/yellow]"
            )
            for reason in item.reasons:
                console.print(f"    {term_text(reason)}", highlight=False)
            for line in item.diff.split("\n"):
                console.print(f"    [dim]{term_text(line)}[/dim]", highlight=False)

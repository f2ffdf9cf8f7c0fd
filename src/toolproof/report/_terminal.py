"""The terminal report: targets side by side, then failures with their diffs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolproof.report._escape import term_text
from toolproof.report._judged import JUDGE_MARK, summary_legend
from toolproof.report._repaired import recovered_text, with_repaired
from toolproof.stats import ConversationStats, Estimate, MultiStepStats, Rate, Summary


def fmt_rate(r: Rate, *, interval: bool = True) -> str:
    if r.n == 0:
        return "–"
    text = f"{100 * r.k / r.n:.1f}% ({r.k}/{r.n})"
    if interval and r.low is not None and r.high is not None:
        text += f" [{100 * r.low:.0f}–{100 * r.high:.0f}]"
    return text


def _short_rate(r: Rate) -> str:
    return fmt_rate(r, interval=False)


RateFormat = Callable[[Rate], str]


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _est(e: Estimate, interval: bool = True) -> str:
    if e.value is None:
        return "–"
    ci = (
        f" [{100 * e.low:.0f}–{100 * e.high:.0f}]"
        if interval and e.low is not None and e.high is not None
        else ""
    )
    return f"{100 * e.value:.1f}%{ci}"


def _stability(s: Summary, r: RateFormat) -> str:
    st = s.stability
    if st is None:
        return "–"
    ci = r is fmt_rate
    if st.k == 1:
        return f"{_est(st.pass_at_1, ci)} (one attempt per case: use --repeats)"
    return (
        f"{_est(st.pass_at_1, ci)} / {_est(st.pass_at_k, ci)} / {_est(st.pass_hat_k, ci)} "
        f"(k={st.k})"
    )


def _flaky(s: Summary) -> str:
    st = s.stability
    return "–" if st is None else f"{len(st.flaky)} / {len(st.steady_failures)} of {st.cases}"


def _min_series(s: Summary, r: RateFormat) -> str:
    st = s.stability
    if st is None or st.min_series is None or len(st.series) < 2:
        return "–"
    return r(st.min_series)


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


_ROWS: list[tuple[str, Callable[[Summary, RateFormat], str]]] = [
    ("attempts scored", lambda s, r: f"{s.scored} of {s.attempts}"),
    ("strict pass", lambda s, r: r(s.strict_pass)),
    ("tool selection", lambda s, r: r(s.selection)),
    ("argument accuracy (tool right)", lambda s, r: r(s.arguments)),
    ("schema adherence (per call)", lambda s, r: r(s.schema_adherence)),
    ("no-call accuracy", lambda s, r: r(s.no_call_accuracy)),
    (
        "decision precision / recall / F1",
        lambda s, r: (
            f"{_num(s.decision.precision)} / {_num(s.decision.recall)} / {_num(s.decision.f1)}"
        ),
    ),
    ("tool macro-F1", lambda s, r: _num(s.macro_f1)),
    ("reply checks (heuristic)", lambda s, r: r(s.reply)),
    ("pass@1 / pass@k / pass^k", lambda s, r: _stability(s, r)),
    ("flaky / steady failing cases", lambda s, r: _flaky(s)),
    (
        "tool-change rate (cases)",
        lambda s, r: r(s.stability.tool_change) if s.stability else "–",
    ),
    ("lowest attempt series", lambda s, r: _min_series(s, r)),
    ("tool calls per attempt (calls: attempts)", lambda s, r: _calls(s)),
    ("forbidden tool calls", lambda s, r: str(s.forbidden_calls)),
    ("unsafe calls", lambda s, r: str(s.unsafe_calls)),
    ("calls recovered from final-answer text", lambda s, r: str(s.extracted_calls)),
    (
        "infrastructure errors (not scored)",
        lambda s, r: ", ".join(f"{k} {v}" for k, v in s.infrastructure.items()) or "0",
    ),
    ("harness errors", lambda s, r: str(s.harness_errors)),
    ("answers from the cache (no model call)", lambda s, r: f"{s.cached} of {s.attempts}"),
    (
        "latency p50 / p95 ms",
        lambda s, r: f"{_num(s.latency_ms_p50, 0)} / {_num(s.latency_ms_p95, 0)}",
    ),
    ("tokens in / out", lambda s, r: f"{s.input_tokens} / {s.output_tokens}"),
    ("cost USD", lambda s, r: "–" if s.cost_usd is None else f"{s.cost_usd:.4f}"),
    ("tokens / cost per success", lambda s, r: _per_success(s)),
]


def _per(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


_MS_ROWS: list[tuple[str, Callable[[MultiStepStats, RateFormat], str]]] = [
    ("multi-step attempts", lambda m, r: str(m.attempts)),
    ("task success", lambda m, r: r(m.success)),
    ("trajectory success", lambda m, r: r(m.trajectory)),
    ("end-state success", lambda m, r: r(m.end_state)),
    ("clarification rate", lambda m, r: r(m.clarification)),
    ("unsafe calls / attempts with one", lambda m, r: f"{m.unsafe_calls} / {r(m.unsafe_rate)}"),
    ("graceful failure (heuristic)", lambda m, r: r(m.graceful_failure)),
    (
        "steps / calls per success",
        lambda m, r: f"{_per(m.steps_per_success)} / {_per(m.calls_per_success)}",
    ),
    ("redundant calls", lambda m, r: str(m.redundant_calls)),
    ("step limit reached", lambda m, r: str(m.step_limit_hits)),
]


@dataclass(frozen=True)
class _Layout:
    """Column headers and rate format that fit the console.

    One target: its name, rates with intervals. Several: names if they fit,
    else letters with a legend; rates without intervals when the full form
    would not fit, so the table stays readable at 80 columns.
    """

    labels: dict[str, str]
    rate: RateFormat
    legend: list[str]


_LABEL_WIDTH = 26  # the metric column, wrapped narrower when needed
_FULL_RATE = 21  # "77.3% (58/75) [67–85]"
_SHORT_RATE = 14  # "77.3% (58/75)"


def _layout(targets: list[str], width: int) -> _Layout:
    names = {t: term_text(t) for t in targets}
    if len(targets) <= 1:
        return _Layout(names, fmt_rate, [])
    longest = max(len(n) for n in names.values())
    if _LABEL_WIDTH + len(targets) * (max(longest, _FULL_RATE) + 3) <= width:
        return _Layout(names, fmt_rate, [])
    if _LABEL_WIDTH + len(targets) * (max(longest, _SHORT_RATE) + 3) <= width:
        return _Layout(names, _short_rate, [])
    letters = {t: _letter(i) for i, t in enumerate(targets)}
    legend = [f"{letters[t]} = {names[t]}" for t in targets]
    return _Layout(letters, _short_rate, legend)


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"T{i + 1}"


def _multistep(summaries: dict[str, Summary], lay: _Layout) -> Table | None:
    if all(s.multistep is None for s in summaries.values()):
        return None
    table = Table(title="multi-step tasks", title_justify="left")
    table.add_column("metric", style="bold", ratio=1, overflow="fold")
    for target in summaries:
        table.add_column(lay.labels[target], overflow="fold")
    for label, getter in _MS_ROWS:
        table.add_row(
            label,
            *(
                "–" if s.multistep is None else getter(s.multistep, lay.rate)
                for s in summaries.values()
            ),
        )
    return table


def _pass_curve(c: ConversationStats) -> str:
    if not c.pass_hat_k:
        return "–"
    return ", ".join(f"k={k} {100 * v:.1f}%" for k, v in c.pass_hat_k.items())


def _mean(total: int, mean: float | None) -> str:
    return f"{total}" if mean is None else f"{total} ({mean:.1f} per conversation)"


_CONV_ROWS: list[tuple[str, Callable[[ConversationStats, RateFormat], str]]] = [
    ("conversations (scored)", lambda c, r: f"{c.conversations} ({c.scored})"),
    ("pass^k over conversations", lambda c, r: _pass_curve(c)),
    ("user errors (not scored)", lambda c, r: r(c.user_errors)),
    ("user turns", lambda c, r: _mean(c.user_turns, c.user_turns_mean)),
    ("agent questions", lambda c, r: _mean(c.agent_questions, c.agent_questions_mean)),
    ("turns per success", lambda c, r: _per(c.turns_per_success)),
    (
        "stopped by",
        lambda c, r: ", ".join(f"{term_text(k)} {v}" for k, v in c.stopped_by.items()),
    ),
    (
        "user model tokens in / out",
        lambda c, r: f"{c.user_input_tokens} / {c.user_output_tokens}",
    ),
    ("user model cost USD", lambda c, r: _cost(c.user_cost_usd)),
    ("user turns asked again", lambda c, r: str(c.user_turns_nudged)),
]


def _cost(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"


def _conversations(summaries: dict[str, Summary], lay: _Layout) -> Table | None:
    if all(s.conversations is None for s in summaries.values()):
        return None
    table = Table(title="conversations (simulated user)", title_justify="left")
    table.add_column("metric", style="bold", ratio=1)
    for target in summaries:
        table.add_column(lay.labels[target], overflow="fold")
    for label, getter in _CONV_ROWS:
        table.add_row(
            label,
            *(
                "–" if s.conversations is None else getter(s.conversations, lay.rate)
                for s in summaries.values()
            ),
        )
    return table


def _multistep_slices(
    summaries: dict[str, Summary], title: str, attr: str, lay: _Layout
) -> Table | None:
    def cell(s: Summary, key: str) -> str | None:
        st = getattr(s.multistep, attr).get(key) if s.multistep is not None else None
        if st is None:
            return None
        return f"{lay.rate(st.success)} · {lay.rate(st.end_state)} · {st.unsafe_calls}"

    groups = [getattr(s.multistep, attr) for s in summaries.values() if s.multistep is not None]
    return _slice_table(summaries, title, "success · end state · unsafe", groups, cell, lay)


def _slice_table(
    summaries: dict[str, Summary],
    title: str,
    what: str,
    groups: list[dict[str, Any]],
    cell: Callable[[Summary, str], str | None],
    lay: _Layout,
) -> Table | None:
    """One row per slice key, one column per target."""
    keys = sorted({k for g in groups for k in g})
    if not keys:
        return None
    table = Table(title=f"{title} · {what}", title_justify="left")
    table.add_column("slice", ratio=1, overflow="fold")
    for target in summaries:
        table.add_column(lay.labels[target], overflow="fold")
    for key in keys:
        table.add_row(term_text(key), *((cell(s, key) or "–") for s in summaries.values()))
    return table


def _report_table(summaries: dict[str, Summary], lay: _Layout) -> Table:
    table = Table(title="toolproof report", title_justify="left", show_lines=False)
    table.add_column("metric", style="bold", ratio=1, overflow="fold")
    for target in summaries:
        table.add_column(lay.labels[target], overflow="fold")
    for label, getter in _ROWS:
        table.add_row(
            label,
            *(_mark(label, s, getter(s, lay.rate)) for s in summaries.values()),
        )
    return table


def _failure_classes(summaries: dict[str, Summary], lay: _Layout) -> Table | None:
    classes = sorted({k for s in summaries.values() for k in s.failure_counts})
    if not classes:
        return None
    table = Table(title="failed cases by first failing stage", title_justify="left")
    table.add_column("failure class", overflow="fold")
    for target in summaries:
        table.add_column(lay.labels[target], justify="right", overflow="fold")
    for c in classes:
        table.add_row(c, *(str(s.failure_counts.get(c, 0)) for s in summaries.values()))
    return table


def _slices(summaries: dict[str, Summary], title: str, attr: str, lay: _Layout) -> Table | None:
    def cell(s: Summary, key: str) -> str | None:
        st = getattr(s, attr).get(key)
        return lay.rate(st.strict_pass) if st else None

    groups = [getattr(s, attr) for s in summaries.values()]
    return _slice_table(summaries, title, "strict pass", groups, cell, lay)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


_HEADLINE: list[tuple[str, Callable[[Summary], str]]] = [
    ("strict pass", lambda s: with_repaired(s, "strict_pass")),
    ("tool selection", lambda s: with_repaired(s, "selection")),
    ("argument accuracy", lambda s: with_repaired(s, "arguments")),
    ("pass^k", lambda s: _pct(s.stability.pass_hat_k.value) if s.stability else "–"),
    ("unsafe calls", lambda s: str(s.unsafe_calls)),
    ("without a model answer", lambda s: str(s.attempts - s.scored)),
    ("answers from the cache", lambda s: f"{s.cached} of {s.attempts}"),
]


def _headline(summaries: dict[str, Summary], lay: _Layout) -> Table:
    """The figures that matter most: printed last, so they stay in view."""
    k = next((s.stability.k for s in summaries.values() if s.stability), 1)
    table = Table(title="headline", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("metric", style="bold", ratio=1, overflow="fold")
    for target in summaries:
        table.add_column(lay.labels[target], overflow="fold")
    for label, getter in _HEADLINE:
        name = label.replace("^k", f"^{k}")
        table.add_row(name, *(_mark(label, s, getter(s)) for s in summaries.values()))
    if any(s.repaired is not None for s in summaries.values()):
        recovered = map(recovered_text, summaries.values())
        table.add_row("calls recovered from text (every step)", *recovered)
    return table


def _verdict(target: str, s: Summary) -> str:
    """One line: did every scored attempt pass, and what else needs a look."""
    notes = []
    if s.unsafe_calls:
        notes.append(f"{s.unsafe_calls} unsafe call{'s' if s.unsafe_calls != 1 else ''}")
    if s.attempts > s.scored:
        notes.append(f"{s.attempts - s.scored} unanswered")
    if s.cached:
        notes.append(f"{s.cached} from the cache")
    if s.judge_decided:
        notes.append(
            f"⚖ {s.judge_decided} decided by a judge: pass and argument figures are judge-derived"
        )
    if s.undecided:
        left = [
            f"{n} {word}{'s' if n != 1 else ''}"
            for n, word in (
                (s.undecided_arguments, "argument"),
                (s.undecided_statements, "judged statement"),
            )
            if n
        ]
        notes.append(
            f"{' and '.join(left)} left "
            f"to a judge, undecided: {s.undecided} attempt{'s' if s.undecided != 1 else ''} "
            "not counted as passing (judge them with --judge)"
        )
    tail = "".join(f" · {n}" for n in notes)
    # a spec that ends in ":" (the bundled model, `local:`) takes no second colon
    label = target if target.endswith(":") else f"{target}:"
    if s.scored == 0:
        return f"[red]✗[/red] {label} no attempt was scored{tail}"
    failed = len(s.failures)
    if failed == 0 and not s.unsafe_calls and s.undecided:
        passed = s.scored - s.undecided
        return f"[yellow]?[/yellow] {label} {passed} of {s.scored} scored attempts passed{tail}"
    if failed == 0 and not s.unsafe_calls:
        return f"[green]✓[/green] {label} all {s.scored} scored attempts passed{tail}"
    return f"[red]✗[/red] {label} {failed} of {s.scored} scored attempts failed{tail}"


#: Rows whose figures count attempts a judge decided (judge-decided arguments).
_JUDGED_ROWS = frozenset(
    ("strict pass", "argument accuracy (tool right)", "argument accuracy",
     "pass@1 / pass@k / pass^k", "pass^k")
)  # fmt: skip


def _mark(label: str, s: Summary, cell: str) -> str:
    """A figure a judge decided part of carries the judge mark (the legend says what it is)."""
    return f"{JUDGE_MARK} {cell}" if s.judge_decided and label in _JUDGED_ROWS else cell


def judge_legend(summaries: dict[str, Summary]) -> str | None:
    """The words for ⚖, when any figure carries it."""
    if not any(s.judge_decided for s in summaries.values()):
        return None
    return summary_legend()


#: Failures listed per target; the rest are counted (every one is in the JSON report).
MAX_FAILURES = 200


def render_terminal(
    summaries: dict[str, Summary],
    console: Console,
    *,
    failures: bool = True,
    tags: bool = True,
    headline: bool = True,
    max_failures: int | None = MAX_FAILURES,
    before_headline: Callable[[Console], None] | None = None,
) -> None:
    """Print the report for one or more targets, side by side.

    The failure list shows at most ``max_failures`` failures per target (None:
    all), then how many more there are.

    It ends with the headline figures and a one-line verdict per target, after
    the failure list, so they are the last thing shown (``headline=False``
    leaves them out, for a caller that prints its own decision). ``before_headline``
    prints what a caller adds (the judged figures of ``run --judge``) before them.
    """
    lay = _layout(list(summaries), console.width)
    for line in lay.legend:
        console.print(line, highlight=False)
    console.print(_report_table(summaries, lay))
    for table in (
        _failure_classes(summaries, lay),
        _slices(summaries, "by risk class", "by_risk", lay),
        _slices(summaries, "by tag", "by_tag", lay) if tags else None,
        _multistep(summaries, lay),
        _conversations(summaries, lay),
        _multistep_slices(summaries, "multi-step by risk class", "by_risk", lay),
        _multistep_slices(summaries, "multi-step by tool", "by_tool", lay),
        _multistep_slices(summaries, "multi-step by tag", "by_tag", lay) if tags else None,
    ):
        if table is not None:
            console.print(table)
    if failures:
        _print_failures(summaries, console, max_failures)
    judged = judge_legend(summaries)
    if judged:
        console.print(judged, highlight=False)
    if before_headline is not None:
        before_headline(console)
    if headline:
        console.print()
        for line in lay.legend:  # again: the first one has scrolled away
            console.print(line, highlight=False)
        console.print(_headline(summaries, lay))
        if judged:
            console.print(judged, highlight=False)
        for target, s in summaries.items():
            console.print(_verdict(term_text(target), s), highlight=False)


def _print_failures(summaries: dict[str, Summary], console: Console, most: int | None) -> None:
    """Each target's failures. The lines of a target are printed at once: rendered as
    separate prints they come out the same, at twice the cost."""
    for target, s in summaries.items():
        if not s.failures:
            continue
        count = len(s.failures)
        console.print(f"\n[bold]failures · {term_text(target)}[/bold] ({count})")
        lines: list[Text] = []
        for shown, item in enumerate(s.failures):
            if most is not None and shown >= most:
                lines.append(
                    console.render_str(
                        f"[dim]… and {count - most} more failures (every one is in the JSON "
                        "report)[/dim]",
                        highlight=False,
                    )
                )
                break
            attempt = f" #{item.attempt}" if item.attempt else ""
            lines.append(
                console.render_str(
                    f"[red]✗[/red] {term_text(item.case_id)}{attempt} "
                    f"[dim]({item.risk.value})[/dim] [yellow]{item.failure.value}[/yellow]"
                )
            )
            for reason in item.reasons:
                lines.append(_hanging(console, term_text(reason), 4, 6))
            for line in item.diff.split("\n"):
                label = _LABEL.match(line)
                hang = 4 + (label.end() if label else 0)
                lines.append(_hanging(console, f"[dim]{term_text(line)}[/dim]", 4, hang))
        if lines:
            console.print(Text("\n").join(lines))


#: What a diff line's wrapped lines are aligned under: its label, or its own indent.
_LABEL = re.compile(r"(?:expected: |actual: +| +)")


def _hanging(console: Console, markup: str, indent: int, hang: int) -> Text:
    """A line indented by ``indent``, wrapped to the console's width with its wrapped
    lines indented by ``hang`` (not back at the left edge, as a plain print wraps them)."""
    text = console.render_str(" " * indent + markup, highlight=False)
    width = console.width
    if text.cell_len <= width or width - hang < 20:
        return text
    head = text[:hang]
    body = text[hang:]
    parts = list(body.wrap(console, width - hang))
    for part in parts:
        part.rstrip()  # the space a line was broken at
    return Text("\n").join(
        head + part if i == 0 else Text(" " * hang) + part for i, part in enumerate(parts)
    )

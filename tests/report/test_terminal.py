"""The terminal report: ends with the headline and a verdict; readable at 80 columns."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from tests.gate import builders as b
from toolproof.evaluate import evaluate
from toolproof.report import render_terminal
from toolproof.stats import Summary

SNAPSHOTS = Path(__file__).parent / "snapshots"
TARGETS = ["openai:gpt-4.1-mini", "anthropic:claude-sonnet-4-5", "openrouter:qwen/qwen3-235b"]


def _summaries(targets: list[str]) -> dict[str, Summary]:
    s = b.suite()
    records = []
    for i, target in enumerate(targets):
        wrong = {(f"l{j:02d}", 0): b.wrong_args(f"l{j:02d}") for j in range(i + 1)}
        records += b.records(s, target, answers=wrong)
    return evaluate(s, records, targets=targets).summaries


def _render(summaries: dict[str, Summary], width: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    render_terminal(summaries, console, tags=False)
    return out.getvalue()


def _check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("TOOLPROOF_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, "utf-8")
    assert text == path.read_text("utf-8")


@pytest.mark.parametrize("count", [1, 3])
def test_report_ends_with_headline_and_one_verdict_line_per_target(count: int) -> None:
    text = _render(_summaries(TARGETS[:count]), 80)
    lines = text.rstrip("\n").split("\n")
    assert text.rindex("failures ·") < text.index("\nheadline")  # after the failure list
    verdicts = lines[-count:]
    assert all(line.startswith("✗ ") and "scored attempts failed" in line for line in verdicts)
    headline = text[text.index("\nheadline") :]
    for label in ("strict pass", "tool selection", "argument accuracy", "unsafe calls"):
        assert label in headline
    assert "answers from the cache" in headline


def test_three_long_target_names_fit_80_columns() -> None:
    text = _render(_summaries(TARGETS), 80)
    assert max(len(line) for line in text.split("\n")) <= 80
    # letters stand for the names, with a legend, so numbers are never folded
    assert text.startswith("A = openai:gpt-4.1-mini\nB = anthropic:claude-sonnet-4-5\n")
    assert "95.5% (21/22)" in text and "90.9% (20/22)" in text
    _check_snapshot("terminal-3-targets-80.txt", text)


def test_one_target_snapshot() -> None:
    _check_snapshot("terminal-1-target.txt", _render(_summaries(TARGETS[:1]), 100))


def test_a_passing_target_gets_a_check_mark() -> None:
    s = b.suite()
    text = _render(evaluate(s, b.records(s, "good")).summaries, 80)
    assert text.rstrip("\n").split("\n")[-1] == "✓ good: all 22 scored attempts passed"


def test_a_long_failure_list_is_cut_with_a_count_of_the_rest() -> None:
    from toolproof.stats import FailureItem
    from toolproof.types import FailureClass, Risk

    s = next(iter(_summaries(TARGETS[:1]).values()))
    items = [
        FailureItem(
            case_id=f"case-{i}", attempt=0, risk=Risk.low, failure=FailureClass.wrong_tool,
            reasons=["wrong"], diff="",
        )
        for i in range(7)
    ]  # fmt: skip
    many = {"m": s.model_copy(update={"failures": items})}
    out = io.StringIO()
    render_terminal(many, Console(file=out, width=120, color_system=None), max_failures=3)
    text = out.getvalue()
    assert "failures · m (7)" in text
    assert "case-2" in text and "case-3" not in text
    assert "… and 4 more failures" in text
    out = io.StringIO()
    render_terminal(many, Console(file=out, width=120, color_system=None), max_failures=None)
    assert "case-6" in out.getvalue() and "more failures" not in out.getvalue()


def test_the_bundled_model_spec_takes_no_second_colon_in_its_verdict() -> None:
    text = _render(_summaries(["local:"]), 120)
    last = text.rstrip("\n").split("\n")[-1]
    assert last == "✗ local: 1 of 22 scored attempts failed", last


def test_the_failure_list_prints_as_line_by_line_prints_would_in_colour_and_wrapped() -> None:
    """The failure lines are rendered in one print: colours, markup, escapes and wrapping
    come out as one print per line made them."""
    from toolproof.report._escape import term_text
    from toolproof.stats import FailureItem
    from toolproof.types import FailureClass, Risk

    s = next(iter(_summaries(TARGETS[:1]).values()))
    items = [
        FailureItem(
            case_id=f"case-{i} [bold]not markup[/bold]", attempt=i % 2, risk=Risk.high,
            failure=FailureClass.wrong_arguments,
            reasons=[f"order_id: expected 'ORD-{i:06d}', got 'ORD-104821' " * 3, "[red]x"],
            diff='expected: lookup(order_id="ORD-1")\nactual:   lookup(order_id=42)',
        )
        for i in range(5)
    ]  # fmt: skip
    many = {"m": s.model_copy(update={"failures": items})}

    def console(out: io.StringIO) -> Console:
        return Console(file=out, width=50, force_terminal=True, color_system="truecolor")

    out = io.StringIO()
    render_terminal(many, console(out), max_failures=4)
    expected = io.StringIO()
    ref = console(expected)
    ref.print("\n[bold]failures · m[/bold] (5)")
    for item in items[:4]:
        attempt = f" #{item.attempt}" if item.attempt else ""
        ref.print(
            f"[red]✗[/red] {term_text(item.case_id)}{attempt} [dim]({item.risk.value})[/dim] "
            f"[yellow]{item.failure.value}[/yellow]"
        )
        for reason in item.reasons:
            ref.print(f"    {term_text(reason)}", highlight=False)
        for line in item.diff.split("\n"):
            ref.print(f"    [dim]{term_text(line)}[/dim]", highlight=False)
    ref.print("[dim]… and 1 more failures (every one is in the JSON report)[/dim]", highlight=False)
    text = out.getvalue()
    block = expected.getvalue()
    assert "\x1b[" in block and block.count("\n") > 4 * 5  # coloured, and long lines wrapped
    assert block in text

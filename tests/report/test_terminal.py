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


def test_the_failure_list_wraps_under_its_labels_not_at_the_left_edge() -> None:
    """A long reason or diff line wraps to the console's width with its wrapped lines
    indented (under "expected: " / "actual:   " for a diff line), in colour, escaped,
    and with nothing lost or cut."""
    import re

    from toolproof.stats import FailureItem
    from toolproof.types import FailureClass, Risk

    s = next(iter(_summaries(TARGETS[:1]).values()))
    reason = "order_id: expected 'ORD-000001', got 'ORD-104821' " * 3
    diff = (
        'expected: lookup(order_id="ORD-1", note="[bold]not markup[/bold] and a long note '
        'that goes on")\nactual:   (no call)\n          printed as text, not called '
        '(counts only when repaired): lookup(order_id="ORD-104821", note="\x1b[2J")'
    )
    items = [
        FailureItem(
            case_id=f"case-{i}", attempt=i % 2, risk=Risk.high,
            failure=FailureClass.wrong_arguments, reasons=[reason], diff=diff,
        )
        for i in range(5)
    ]  # fmt: skip
    many = {"m": s.model_copy(update={"failures": items})}
    out = io.StringIO()
    console = Console(file=out, width=50, force_terminal=True, color_system="truecolor")
    render_terminal(many, console, max_failures=4)
    coloured = out.getvalue()
    assert "\x1b[2m" in coloured  # the diff is dim
    assert "\x1b[2J" not in coloured  # the model's escape sequence is shown, not sent
    text = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    block = text[text.index("✗ case-0") : text.index("✗ case-1")].rstrip("\n").split("\n")
    assert all(len(line) <= 50 for line in block), block
    assert block[1].startswith("    order_id:") and block[2].startswith("      ")
    exp = next(i for i, line in enumerate(block) if line.startswith("    expected: "))
    assert block[exp + 1].startswith(" " * 14) and block[exp + 1][14] != " ", block
    act = next(i for i, line in enumerate(block) if line.startswith("    actual:   "))
    assert all(line.startswith(" " * 14) for line in block[act + 1 :]), block
    words = " ".join(line.strip() for line in block[1:]).split()
    assert " ".join(words) == " ".join(
        f"{reason} {diff}".replace("\x1b", "\\x1b").split()
    )  # every word, in order
    assert "… and 1 more failures" in text

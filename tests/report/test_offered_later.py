"""What the terminal and HTML reports show of tools a scripted user offered at a later
turn (``offer``): the turn that offered them, after its message, with the tool names
escaped as all recorded text is (a records file may name anything there)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from tests.late_tools import late_tools_run
from toolproof.evaluate import Evaluation, evaluate
from toolproof.report import html_report, render_terminal
from toolproof.types import Record

#: Tool names a records file may hold in ``user_turns[].offered`` (a suite's tool names
#: are restricted to ``[A-Za-z_][A-Za-z0-9_.:-]*``; a records file's are not).
HOSTILE = ["<script>alert('offer')</script>", "[bold red]loud[/bold red]", "esc\x1b[2Jx"]


def _evaluation(tmp_path: Path, hostile: bool = False) -> Evaluation:
    suite, records = late_tools_run(tmp_path / "run")
    if hostile:
        records = [_offering(r, HOSTILE) for r in records]
    return evaluate(suite, records)


def _offering(record: Record, names: list[str]) -> Record:
    turns = list(record.user_turns or [])
    turns[1] = turns[1].model_copy(update={"offered": names})
    return record.model_copy(update={"user_turns": turns})


def _terminal(ev: Evaluation, colour: bool = False) -> str:
    out = io.StringIO()
    console = Console(
        file=out,
        width=160,
        force_terminal=colour,
        color_system="truecolor" if colour else None,
    )
    render_terminal(ev.summaries, console, tags=False)
    return out.getvalue()


def test_the_terminal_failure_shows_the_turn_that_offered_the_tool(tmp_path: Path) -> None:
    text = _terminal(_evaluation(tmp_path))
    block = text[text.index("✗ calls-it-too-soon") :].splitlines()
    assert block[1].strip() == "called sort_file before it was offered (offered at user turn 2)"
    said = next(i for i, line in enumerate(block) if "I have updated some more" in line)
    assert block[said + 1].strip() == "offer  sort_file (user turn 2)"


def test_the_terminal_shows_hostile_offered_names_as_text(tmp_path: Path) -> None:
    coloured = _terminal(_evaluation(tmp_path, hostile=True), colour=True)
    assert "\x1b[2J" not in coloured  # the recorded escape sequence is shown, not sent
    text = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    line = next(x for x in text.splitlines() if x.strip().startswith("offer "))
    assert line.strip() == (
        "offer  <script>alert('offer')</script>, [bold red]loud[/bold red], esc\\x1b[2Jx "
        "(user turn 2)"
    )  # markup printed, not applied
    # no turn offered sort_file itself now: the early call says so
    assert "called sort_file before it was offered (no user turn of this conversation" in text


def test_the_html_report_shows_what_each_user_turn_offered(tmp_path: Path) -> None:
    page = html_report(_evaluation(tmp_path))
    offer = "offers the agent: sort_file (user turn 2)"
    # in both cases' transcripts (a passing attempt too), right after the turn's message
    assert page.count(offer) == 2
    said = "I have updated some more functions you can choose from. What about now?</pre>"
    assert page.count(said + f'<div class="note small mut">{offer}</div>') == 2
    assert "called sort_file before it was offered (offered at user turn 2)" in page


def test_the_html_report_escapes_offered_names(tmp_path: Path) -> None:
    page = html_report(_evaluation(tmp_path, hostile=True))
    assert "<script>alert('offer')" not in page and "\x1b" not in page
    shown = (
        "offers the agent: &lt;script&gt;alert(&#39;offer&#39;)&lt;/script&gt;, "
        "[bold red]loud[/bold red], esc\\x1b[2Jx (user turn 2)"
    )
    assert page.count(shown) == 2


def test_a_stop_turn_that_offers_shows_it_on_the_stop(tmp_path: Path) -> None:
    suite, records = late_tools_run(tmp_path / "run")
    moved = []
    for r in records:
        turns = list(r.user_turns or [])
        turns[1] = turns[1].model_copy(update={"offered": None})
        turns[2] = turns[2].model_copy(update={"offered": ["sort_file"]})
        moved.append(r.model_copy(update={"user_turns": turns}))
    page = html_report(evaluate(suite, moved))
    offer = '<div class="note small mut">offers the agent: sort_file (user turn 3)</div>'
    assert page.count(f"Thanks. (stops: user_stop)</pre>{offer}") == 2


def test_the_json_report_carries_the_message_and_the_offer_line(tmp_path: Path) -> None:
    from toolproof.report import summary_json

    (target,) = summary_json(_evaluation(tmp_path).summaries)["targets"].values()
    (item,) = target["failures"]
    assert item["reasons"] == ["called sort_file before it was offered (offered at user turn 2)"]
    assert "\n  offer  sort_file (user turn 2)\n" in item["diff"]

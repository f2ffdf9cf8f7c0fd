"""The grade of a call of a held-back tool (``offer``) takes an offer only where the case's
script can make it: a record whose requests and turns both claim a tool was offered at a
turn before the script's entry that offers it still grades the early call as a call of an
unknown tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.records.test_user_turn_checks import _line, _run, _write
from toolproof.evaluate import evaluate
from toolproof.records import read_records
from toolproof.suite import load_suite
from toolproof.types import FailureClass, Verdict


def _verdict(folder: Path, run: Path) -> Verdict:
    ev = evaluate(load_suite(folder / "suite.yaml"), [run / "records.jsonl"])
    ((verdict,),) = [s.verdicts for s in ev.targets.values()]
    return verdict


def _forge_both(data: dict[str, Any]) -> None:
    """The first turn says it offered sort, and the first request says so too."""
    data["user_turns"][0]["offered"] = ["sort"]
    tools = data["steps"][0]["request"]["tools"]
    tools.append({**tools[0], "name": "sort"})


def test_an_offer_before_the_scripts_entry_is_not_taken(tmp_path: Path) -> None:
    folder, run = _run(tmp_path)
    honest = _verdict(folder, run)
    assert not honest.passed and honest.failure is FailureClass.unknown_tool
    data = _line(run)
    _forge_both(data)
    _write(run, data)
    (record,) = read_records(run / "records.jsonl")  # the reader finds them in agreement
    assert [t.offered for t in record.user_turns or []] == [["sort"], ["sort"], None]
    forged = _verdict(folder, run)
    assert not forged.passed and forged.failure is FailureClass.unknown_tool
    assert [c.detail for c in forged.checks] == [c.detail for c in honest.checks]


def test_the_soonest_turn_each_scripted_offer_can_be_made() -> None:
    from toolproof.grade._multistep import _soonest_offers
    from toolproof.types import SimulatedUser

    user = SimulatedUser.model_validate(
        {
            "script": [
                "Look up report.txt.",
                {"call": {"tool": "note", "args": {}}},  # goes on in the same turn
                {"offer": ["sort"], "say": "More tools."},
                {"offer": ["diff"]},  # offers and goes on: the turn of the entry after it
                "Thanks.",
                {"when": {"contains": "cannot"}, "offer": ["grep"], "say": "Try this."},
                {"offer": ["sort"], "say": "Again."},
            ],
            "tools": ["note"],
        }
    )
    assert _soonest_offers(user.script) == {"sort": 1, "diff": 2, "grep": 0}
    assert _soonest_offers(None) == {}

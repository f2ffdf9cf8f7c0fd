"""``toolproof import bfcl``'s multi_turn_miss_func: functions BFCL holds back until a turn
(``missed_function``), on a small sample in BFCL's format (fixtures/bfcl_miss_func), and run
on BFCL's own classes when bfcl_eval is installed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.errors import UserError
from toolproof.importers import import_bfcl, write_bfcl
from toolproof.importers._bfcl_multi import MORE_FUNCTIONS
from toolproof.records._steps import expand_steps
from toolproof.suite import load_suite_checked
from toolproof.trust import Trust
from toolproof.types import FailureClass

from .test_bfcl_multi import _run, _turns, needs_bfcl

SAMPLE = Path(__file__).parent / "fixtures" / "bfcl_miss_func"
FILE = "BFCL_v4_multi_turn_miss_func.json"


def _checkpoint(turn: int, checked: bool = True) -> dict[str, Any]:
    args: dict[str, Any] = {"turn": turn} if checked else {"turn": turn, "checked": False}
    return {"tool": "bfcl_turn_checkpoint", "args": args}


def test_a_held_back_function_is_offered_at_its_turn_with_bfcls_message() -> None:
    result = import_bfcl(SAMPLE)
    (suite,) = result.suites
    assert suite.category.name == "multi_turn_miss_func"
    case = {c["id"]: c for c in suite.cases}["multi_turn_miss_func_0"]
    assert MORE_FUNCTIONS == (
        "I have updated some more functions you can choose from. What about now?"
    )
    # turn 2 has no question in BFCL: its user says BFCL's message, offering touch
    assert case["user"]["script"] == [
        "Go into docs.",
        {"call": _checkpoint(0), "say": "Create notes.txt there."},
        {"call": _checkpoint(1, checked=False), "offer": ["touch"], "say": MORE_FUNCTIONS},
        {"call": _checkpoint(2), "say": "###STOP###"},
    ]
    # the case's tools hold every function; the offer holds touch back until turn 2
    assert case["tools"] == ["cd", "mkdir", "ls", "touch"]
    cd = {"tool": "cd", "args": {"folder": "docs"}}
    touch = {"tool": "touch", "args": {"file_name": "notes.txt"}}
    assert case["end_state"] == {
        "actions": [cd, _checkpoint(0), _checkpoint(1, checked=False), touch, _checkpoint(2)]
    }
    assert case["trajectory"] == {"mode": "superset", "steps": [[cd, touch]]}
    assert result.categories_skipped == []


def test_held_back_functions_bfcl_could_not_hold_are_counted_skips_with_their_line() -> None:
    result = import_bfcl(SAMPLE)
    skipped = {s.where.rsplit(":", 1)[1]: s.reason for s in result.skipped}
    assert skipped == {
        "2": "multi_turn_miss_func_1: missed_function: turn 5 is past the last turn (2 turns, "
        "from 0)",
        "3": "multi_turn_miss_func_2: missed_function turn 1: 'rm_rf' is no function of the "
        "involved classes",
        "4": "multi_turn_miss_func_3: turn 1 adds held-back functions, and holds a user message "
        "(BFCL says its own message at such a turn)",
        "5": "multi_turn_miss_func_4: missed_function: 'one' is not a turn number",
        "6": "multi_turn_miss_func_5: the ground truth calls 'touch' in turn 0, before it is "
        "offered (turn 1): toolproof grades that call as a call of an unknown tool (no answer "
        "making it can pass)",
    }
    assert all(s.where.startswith(str(SAMPLE / FILE)) for s in result.skipped)


def test_a_huge_or_odd_missed_function_is_a_counted_skip(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / FILE
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    odd = {
        "multi_turn_miss_func_7": ({"2": ["touch"] * 100_000}, "'touch' is held back twice"),
        "multi_turn_miss_func_8": ({"2": "touch"}, "turn 2: not a list of function names"),
        "multi_turn_miss_func_9": (["touch"], "'missed_function' is not an object"),
        "multi_turn_miss_func_10": ({"-1": ["touch"]}, "'-1' is not a turn number"),
        "multi_turn_miss_func_11": ({"9" * 400: ["touch"]}, "is not a turn number"),
        "multi_turn_miss_func_12": ({"3": ["touch"]}, "turn 3 is past the last turn (3 turns"),
    }
    lines = [json.dumps(dict(first, id=i, missed_function=m)) for i, (m, _) in odd.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    answers = data / "possible_answer" / FILE
    truth = json.loads(answers.read_text(encoding="utf-8").splitlines()[0])["ground_truth"]
    answers.write_text(
        "".join(json.dumps({"id": i, "ground_truth": truth}) + "\n" for i in odd),
        encoding="utf-8",
    )
    result = import_bfcl(data)
    assert result.suites[0].cases == []
    reasons = [s.reason for s in result.skipped]
    assert len(reasons) == len(odd)
    for reason, (case_id, (_, why)) in zip(reasons, odd.items(), strict=True):
        assert reason.startswith(f"{case_id}: ") and why in reason, reason
        assert len(reason) < 200


def test_the_suite_writes_and_validates(tmp_path: Path) -> None:
    (path,) = write_bfcl(import_bfcl(SAMPLE), tmp_path)
    head = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [t["name"] for t in head["tools"]] == [
        "cd",
        "mkdir",
        "ls",
        "touch",
        "bfcl_turn_checkpoint",
    ]
    loaded, errors = load_suite_checked(path.parent, trust=Trust(allow_code=True))
    assert errors == [], errors
    held = {c.id: c.held_back for c in loaded.suite.cases}
    assert held == {"multi_turn_miss_func_0": ("touch",)}


def _offered(record: Any) -> list[list[str]]:
    """The tool names each step's request offered (the scripted model keeps the request)."""
    return [[t["name"] for t in s["request"]["tools"]] for s in expand_steps(record.steps)]


@needs_bfcl
def test_the_model_is_offered_a_held_back_function_from_its_turn_on(tmp_path: Path) -> None:
    (path,) = write_bfcl(import_bfcl(SAMPLE), tmp_path / "suites")
    cd = ("cd", {"folder": "docs"})
    touch = ("touch", {"file_name": "notes.txt"})
    gold = _turns([cd], [], [touch])
    got = _run(path.parent, {"multi_turn_miss_func_0": gold}, tmp_path / "gold")
    record = got["records"]["multi_turn_miss_func_0"]
    assert record.stopped_by == "user_stop"
    early = ["cd", "mkdir", "ls"]
    assert _offered(record) == [early, early, early, [*early, "touch"], [*early, "touch"]]
    assert [t.offered for t in record.user_turns] == [None, None, ["touch"], None]
    assert got["verdicts"]["multi_turn_miss_func_0"].passed

    # touch called in turn 1, before it is offered: BFCL's executor would run it; here the
    # model reads that no such tool exists, and the call is a call of an unknown tool, whose
    # message says the turn that offered it
    soon = _turns([cd], [touch], [])
    got = _run(path.parent, {"multi_turn_miss_func_0": soon}, tmp_path / "soon")
    record = got["records"]["multi_turn_miss_func_0"]
    results = [m.content for m in record.transcript if m.role == "tool"]
    assert "no tool named touch is available" in results[1]
    verdict = got["verdicts"]["multi_turn_miss_func_0"]
    assert not verdict.passed
    assert verdict.failure is FailureClass.unknown_tool
    assert "called touch before it was offered (offered at user turn 3)" in [
        c.detail for c in verdict.checks
    ]


def _with_lines(tmp_path: Path, missed: dict[str, str]) -> Path:
    """A copy of the sample whose entries are the first one's, each with the given raw
    ``missed_function`` text (by id), and the first one's ground truth."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / FILE
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    lines = []
    for case_id, raw in missed.items():
        text = json.dumps(dict(first, id=case_id, missed_function="@"))
        lines.append(text.replace('"@"', raw))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    answers = data / "possible_answer" / FILE
    truth = json.loads(answers.read_text(encoding="utf-8").splitlines()[0])["ground_truth"]
    answers.write_text(
        "".join(json.dumps({"id": i, "ground_truth": truth}) + "\n" for i in missed),
        encoding="utf-8",
    )
    return data


def test_a_turn_key_bfcl_never_reads_as_that_turn_is_a_counted_skip(tmp_path: Path) -> None:
    # BFCL adds back the functions under str(turn) only: those under "02" it removes from
    # the tools and never offers; toolproof read "2" and "02" alike, the last one winning
    odd = {
        "multi_turn_miss_func_20": '{"2": ["touch"], "02": ["ls"]}',
        "multi_turn_miss_func_21": '{"02": ["touch"]}',
        "multi_turn_miss_func_22": '{"02": ["ls"], "2": ["touch"]}',
    }
    data = _with_lines(tmp_path, odd)
    result = import_bfcl(data)
    assert result.suites[0].cases == []
    where = [s.where for s in result.skipped]
    assert where == [f"{data / FILE}:{n}" for n in (1, 2, 3)]
    for skip in result.skipped:
        assert "'02' is not BFCL's spelling of turn 2 ('2')" in skip.reason, skip.reason


def test_a_turn_named_twice_in_missed_function_is_a_counted_skip(tmp_path: Path) -> None:
    # a JSON reader keeps the last of two values under one key: BFCL would hold back ls
    # alone, and the entry's author meant touch too
    odd = {
        "multi_turn_miss_func_0": '{"2": ["touch"]}',
        "multi_turn_miss_func_23": '{"2": ["touch"], "2": ["ls"]}',
    }
    data = _with_lines(tmp_path, odd)
    result = import_bfcl(data)
    assert [c["id"] for c in result.suites[0].cases] == ["multi_turn_miss_func_0"]
    (skip,) = result.skipped
    assert skip.where == f"{data / FILE}:2"
    assert skip.reason.startswith("multi_turn_miss_func_23: duplicate key '2' (column ")


def test_a_ground_truth_calling_a_held_back_function_early_is_a_counted_skip() -> None:
    # multi_turn_miss_func_5's ground truth calls touch in turn 0; it is held back until
    # turn 1: in toolproof that call is a call of a tool not offered yet, so the ground
    # truth itself fails (as BFCL's own multi_turn_miss_func_49 does with tail)
    result = import_bfcl(SAMPLE)
    assert "multi_turn_miss_func_5" not in {c["id"] for c in result.suites[0].cases}
    (skip,) = [s for s in result.skipped if "multi_turn_miss_func_5" in s.reason]
    assert skip.where == f"{SAMPLE / FILE}:6"
    assert skip.reason == (
        "multi_turn_miss_func_5: the ground truth calls 'touch' in turn 0, before it is "
        "offered (turn 1): toolproof grades that call as a call of an unknown tool (no "
        "answer making it can pass)"
    )


@pytest.mark.parametrize("content", ["", '{"id": 5}\n'])
def test_an_empty_answers_file_is_an_error_naming_it(tmp_path: Path, content: str) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    answers = data / "possible_answer" / FILE
    answers.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(f"{answers}: ") + ".*no entry"):
        import_bfcl(data)


def test_a_function_doc_naming_a_key_twice_is_an_error_naming_its_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    docs = data / "multi_turn_func_doc" / "gorilla_file_system.json"
    lines = docs.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('{"name": ', '{"name": "rm", "name": ', 1)
    assert lines[1].count('"name"') == 2
    docs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(f"{docs}:2: ") + ".*duplicate key 'name'"):
        import_bfcl(data)


def test_a_category_file_with_no_entry_is_an_error_naming_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / FILE).write_text('"not an entry"\n', encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(f"{data / FILE}: holds no entry")) as raised:
        import_bfcl(data)
    assert "(line 1: not an entry (no string 'id'))" in str(raised.value)

"""A record's user turns checked against its own transcript and steps when it is read.

Each turn's ``at`` names its user message (0 or more, after the turn before it), and
each tool a turn ``offered`` is in the request of every step sent after that turn and in
none sent before it: the grade takes "when was it offered" from those fields, so an
edited record that says a tool was offered earlier than the requests show is refused,
located, by every reader, never graded as a pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.errors import SuiteError
from toolproof.evaluate import evaluate
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.records._steps import (
    BadSteps,
    check_user_turns,
    expand_requests,
    request_tool_names,
)
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.store import open_store
from toolproof.suite import load_suite
from toolproof.web import FolderSource, RunCache

TOOLS = ("lookup", "sort")
SUITE: dict[str, Any] = {
    "format": 1,
    "suite": "later",
    "system": "Use only the tools you are offered.",
    "tools": [
        {"name": n, "parameters": {"type": "object", "properties": {"file": {"type": "string"}}}}
        for n in TOOLS
    ],
    "mocks": {n: {"default": {"result": {"ok": n}}} for n in TOOLS},
    "cases": [
        {
            "id": "late",
            "tools": list(TOOLS),
            "user": {
                "script": [
                    "Look up report.txt.",
                    {"offer": ["sort"], "say": "More tools. What about now?"},
                    "Thanks. ###STOP###",
                ]
            },
            "trajectory": {"mode": "superset", "steps": [{"tool": "sort", "args": {"file": "r"}}]},
        }
    ],
}

# the agent calls sort in its first step, before the user offers it
EARLY = [
    {"tool_calls": [{"name": "sort", "raw_arguments": '{"file": "r"}'}]},
    {"text": "That did not work."},
    {"tool_calls": [{"name": "sort", "raw_arguments": '{"file": "r"}'}]},
    {"text": "Sorted."},
]


def _run(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False), "utf-8")
    provider = ScriptedProvider.from_dict({"cases": {"late": {"steps": EARLY}}})
    out = tmp_path / "runs" / "run"
    opts = RunOptions(out=out, cache=False, fsync=False, retry=RetryPolicy(0.001, 0.01))
    run_suite(
        load_suite(folder / "suite.yaml"), [Target(spec="scripted:agent", provider=provider)], opts
    )
    return folder, out


def _line(run: Path) -> dict[str, Any]:
    (text,) = (run / "records.jsonl").read_text("utf-8").splitlines()
    data: dict[str, Any] = json.loads(text)
    return data


def _write(run: Path, data: dict[str, Any]) -> None:
    (run / "records.jsonl").write_text(json.dumps(data) + "\n", "utf-8")


def _offered_first(data: dict[str, Any]) -> None:
    data["user_turns"][0]["offered"] = ["sort"]


def _at(turn: int, at: int) -> Any:
    def edit(data: dict[str, Any]) -> None:
        data["user_turns"][turn]["at"] = at

    return edit


def _offer_in_first_request(data: dict[str, Any]) -> None:
    # the first request offers sort too (the later ones are deltas: they keep it)
    tools = data["steps"][0]["request"]["tools"]
    tools.append({**tools[0], "name": "sort"})


def _no_steps(data: dict[str, Any]) -> None:
    data["steps"] = data["steps"][:1]


# (the edit, the field named, words of the message)
FORGED = [
    (_offered_first, "user_turns[0].offered", "does not offer it"),
    (_at(1, 0), "user_turns[1].at", "does not come after the turn before it"),
    (_at(1, -100), "user_turns[1].at", "0 or more"),
    (_at(0, -5), "user_turns[0].at", "0 or more"),
    (_at(1, 2), "user_turns[1].at", "transcript[2] is not this turn's user message"),
    (_at(1, 1), "user_turns[1].at", "does not come after the turn before it"),
    (_at(2, 99), "user_turns[2].at", "past the end of the transcript"),
    (_offer_in_first_request, "user_turns[1].offered", "already offered it"),
    (_no_steps, "user_turns[1].offered", "has no recorded step"),
]


def test_the_honest_record_reads_and_fails_its_early_call(tmp_path: Path) -> None:
    folder, run = _run(tmp_path)
    (record,) = read_records(run / "records.jsonl")
    assert [(t.at, t.offered) for t in record.user_turns or []] == [
        (1, None),
        (5, ["sort"]),
        (9, None),
    ]
    ev = evaluate(load_suite(folder / "suite.yaml"), [run / "records.jsonl"])
    ((verdict,),) = [s.verdicts for s in ev.targets.values()]
    assert not verdict.passed


@pytest.mark.parametrize(("edit", "field", "words"), FORGED)
def test_an_edited_record_is_refused_located(
    tmp_path: Path, edit: Any, field: str, words: str
) -> None:
    folder, run = _run(tmp_path)
    data = _line(run)
    edit(data)
    _write(run, data)
    with pytest.raises(SuiteError) as err:
        read_records(run / "records.jsonl")
    text = str(err.value)
    assert f"records.jsonl:1:1: {field}:" in text and words in text, text
    with pytest.raises(SuiteError):  # the grade reads through the same reader
        evaluate(load_suite(folder / "suite.yaml"), [run / "records.jsonl"])


def test_every_grading_reader_refuses_the_edited_record(tmp_path: Path) -> None:
    folder, run = _run(tmp_path)
    data = _line(run)
    _offered_first(data)
    _write(run, data)
    for command in (
        ["score", str(folder)],
        ["gate", "-s", str(folder)],
        ["report", "-s", str(folder)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "toolproof", *command, str(run)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert f"{run / 'records.jsonl'}:1:1: user_turns[0].offered: offers 'sort'" in done.stderr
    # the viewer grades a run folder through the same reader
    with pytest.raises(SuiteError, match=r"records\.jsonl:1:1: user_turns\[0\]\.offered"):
        RunCache(FolderSource(tmp_path / "runs")).get("run")
    # and a stored line the viewer rebuilds is checked as it is rebuilt
    with pytest.raises(BadSteps, match="does not offer it"):
        expand_requests(data, data["format"])
    # and the history store will not import it
    with open_store(str(tmp_path / "history.db")) as store, pytest.raises(SuiteError) as err:
        store.import_run(run)
    assert "user_turns[0].offered" in str(err.value)


def test_the_tools_of_each_providers_request() -> None:
    tools = [{"name": "a"}, {"type": "function", "function": {"name": "b"}}]
    assert request_tool_names({"tools": tools}) == {"a", "b"}
    gemini = {"tools": [{"functionDeclarations": [{"name": "c"}, {"name": "d"}]}]}
    assert request_tool_names(gemini) == {"c", "d"}
    assert request_tool_names({"messages": []}) == set()
    assert request_tool_names({"tools": "x"}) is None
    assert request_tool_names("not an object") is None


def test_a_turn_without_a_transcript_is_checked_for_order_only() -> None:
    check_user_turns({"user_turns": [{"at": 1}, {"at": 3}]})
    with pytest.raises(BadSteps, match="does not come after"):
        check_user_turns({"user_turns": [{"at": 3}, {"at": 3}]})


def _conversation(steps: int, offered: list[str], at_end: bool) -> dict[str, Any]:
    """A record of ``steps`` one-answer steps, each request offering tool 'a', and one
    user turn offering ``offered``: before the first answer, or after the last."""
    transcript: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for _ in range(steps):
        transcript += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    return {
        "user_turns": [{"at": len(transcript) - 1 if at_end else 0, "offered": offered}],
        "transcript": transcript,
        "steps": [{"request": {"tools": [{"name": "a"}]}} for _ in range(steps)],
    }


def test_long_offer_lists_are_checked_against_what_was_sent_not_name_by_name_per_step() -> None:
    # 300,000 names offered after 5,000 steps, or one name 300,000 times before them: the
    # check walks the names each request sent (this took 43 s here when it walked every
    # offered name for each step)
    check_user_turns(_conversation(5_000, [f"t{i}" for i in range(300_000)], at_end=True))
    check_user_turns(_conversation(5_000, ["a"] * 300_000, at_end=False))
    # the earliest turn's name a request sent before it is the one named
    late = _conversation(3, ["t1", "a", "t2"], at_end=True)
    with pytest.raises(BadSteps, match=r"offers 'a', but steps\[0\], sent before this turn"):
        check_user_turns(late)

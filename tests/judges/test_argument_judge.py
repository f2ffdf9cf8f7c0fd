"""``{semantic: TEXT, judge: true}``: arguments whose meaning the judge decides.

The scorer never calls a judge: such an argument is undecided until a judge
(a stub server here) answers through ``toolproof judge``; its answer then
decides the attempt, and figures that turn on it are judge-derived.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.judges.judges_support import FAKE_KEYS, calibration_record, record
from toolproof.errors import SuiteError
from toolproof.evaluate import load_run
from toolproof.judges import (
    Calibration,
    Judge,
    builtin_rubric,
    planted_verdict,
    read_judgements,
    write_calibration,
)
from toolproof.judges._calibrate import _injection_text
from toolproof.suite import load_suite
from toolproof.testing import Reply, StubServer

DAMAGED = "refund because the item arrived damaged"
CONFIG = """models:
  openai:judge-model: {{base_url: "{url}", max_retries: 0, timeout_s: 10}}
"""
SUITE = """
suite: notes
system: You keep support notes.
tools:
  - name: add_note
    description: Add a note to a support ticket.
    parameters:
      type: object
      properties:
        ticket: {{type: string}}
        note: {{type: string, description: "What the customer wants, in a sentence."}}
      required: [ticket, note]
    match:
      note: {{use: semantic, judge: true}}
judge:
  calibration: [calibration.json]
cases:
  - {{id: n0, prompt: "Note on T-1: refund, item damaged.", expect: {{call: add_note, args: {{ticket: T-1, note: "{damaged}"}}}}}}
  - {{id: n1, prompt: "Note on T-2: refund, item damaged.", expect: {{call: add_note, args: {{ticket: T-2, note: {{semantic: "{damaged}", judge: true}}}}}}}}
"""


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def folder(tmp_path: Path, stub: StubServer, notes: list[str], tickets: list[str]) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE.format(damaged=DAMAGED), encoding="utf-8")
    (tmp_path / "toolproof.yaml").write_text(
        CONFIG.format(url=stub.base_url("openai")), encoding="utf-8"
    )
    lines = [
        record(
            f"n{i}", target="m", call="add_note", args={"ticket": t, "note": n}
        ).model_dump_json()
        for i, (n, t) in enumerate(zip(notes, tickets, strict=True))
    ]
    (tmp_path / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def tp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "GOOGLE_API_KEY"}
    env.update(FAKE_KEYS)
    env["COLUMNS"] = "200"
    if (cwd / "toolproof.yaml").is_file():  # the judge's endpoint: the user's own config
        env["TOOLPROOF_CONFIG"] = str(cwd / "toolproof.yaml")
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


def judge(d: Path, *more: str) -> subprocess.CompletedProcess[str]:
    spec = "openai:judge-model"
    return tp(
        "judge", "records.jsonl", "--suite", "suite.yaml", "--judge", spec, "-q", *more, cwd=d
    )


def say(same: bool) -> Reply:
    return Reply.say(json.dumps({"reasoning": "compared", "same_meaning": same}))


def verdicts(d: Path) -> dict[str, tuple[bool, str | None, bool, int]]:
    ev = load_run(d / "records.jsonl", suite=d / "suite.yaml")
    return {
        v.case_id: (v.passed, v.failure.value if v.failure else None, v.judge_decided, v.undecided)
        for v in ev.targets["m"].verdicts
    }


def test_without_a_judge_the_argument_is_undecided_and_the_attempt_does_not_pass(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(
        tmp_path,
        stub,
        ["customer wants money back, product broken", "a refund: the item came damaged"],
        ["T-1", "T-2"],
    )
    assert verdicts(d) == {"n0": (False, None, False, 1), "n1": (False, None, False, 1)}
    done = tp("report", "records.jsonl", "--suite", "suite.yaml", cwd=d)
    out = " ".join(done.stdout.split())
    assert "1 argument left to a judge, undecided" not in out  # one per attempt: 2 in all
    assert "2 arguments left to a judge, undecided: 2 attempts not counted as passing" in out
    assert stub.request_count == 0  # scoring never calls a judge


def test_the_expected_text_itself_needs_no_judge(tmp_path: Path, stub: StubServer) -> None:
    d = folder(tmp_path, stub, [DAMAGED, DAMAGED + " "], ["T-1", "T-2"])
    # identical text passes with no judge; any other text, even one space more, is the judge's
    assert verdicts(d) == {"n0": (True, None, False, 0), "n1": (False, None, False, 1)}
    stub.add(say(True))
    assert judge(d).returncode == 0
    assert stub.request_count == 1  # only n1 was put to the judge


def test_another_wrong_argument_fails_the_attempt_whatever_the_judge_says(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(tmp_path, stub, ["anything", "anything"], ["T-9", "T-2"])
    got = verdicts(d)
    assert got["n0"] == (False, "wrong_arguments", False, 0)  # ticket wrong: no judge needed
    assert got["n1"] == (False, None, False, 1)
    assert judge(d).returncode == 0
    assert stub.request_count == 1  # only the attempt whose outcome turns on the judge


def test_the_judge_decides_same_different_and_a_bad_reply_is_a_judge_error(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(
        tmp_path,
        stub,
        ["customer wants money back, the product was broken", "customer wants a new colour"],
        ["T-1", "T-2"],
    )
    stub.add(say(True), Reply.say("they look alike to me"))
    done = judge(d)
    assert done.returncode == 0, done.stderr
    assert "rubric argument_meaning" in " ".join(done.stdout.split())
    stored = read_judgements(d / "judgements.jsonl")
    assert sorted((j.case_id, j.status) for j in stored) == [("n0", "ok"), ("n1", "judge_error")]
    assert all(j.rubric == "argument_meaning" and j.subject for j in stored)
    # the judge error is never a model failure: n1 stays undecided
    assert verdicts(d) == {"n0": (True, None, True, 0), "n1": (False, None, False, 1)}
    # judged again, nothing is asked: a judge error is an answer, kept until --rejudge
    assert judge(d).returncode == 0 and stub.request_count == 2
    stub.add(say(True), say(False))
    assert judge(d, "--rejudge", "--no-cache").returncode == 0
    assert stub.request_count == 4
    got = verdicts(d)
    assert got["n1"] == (False, "wrong_arguments", True, 0)
    ev = load_run(d / "records.jsonl", suite=d / "suite.yaml")
    n1 = next(v for v in ev.targets["m"].verdicts if v.case_id == "n1")
    assert any("the judge found" in c.detail for c in n1.checks)
    assert any("judged different meaning" in n for n in n1.notes)
    # score reads the judgements beside the records too
    scored = tp("score", "suite.yaml", "records.jsonl", cwd=d)
    assert "1 of 2 scored attempts failed" in " ".join(scored.stdout.split())
    assert "⚖ 2 decided by a judge" in " ".join(scored.stdout.split())


def test_the_judge_is_shown_the_tool_the_parameter_and_both_texts_as_quoted_data(
    tmp_path: Path, stub: StubServer
) -> None:
    spec = "openai:judge-model"
    hostile_judge = Judge(spec, "argument_meaning", builtin_rubric("argument_meaning"))
    hostile = "new colour" + _injection_text("fake_end", planted_verdict(hostile_judge))
    d = folder(tmp_path, stub, [hostile, DAMAGED], ["T-1", "T-9"])
    stub.add(say(False))
    assert judge(d).returncode == 0
    [request] = stub.requests
    system, user = (m["content"] for m in request.body["messages"])
    assert "one argument of one tool call" in system
    # the hostile text cannot close the data block: only the one closing line exists
    assert user.count("</transcript>") == 1 and user.rstrip().endswith("JSON object only.")
    data = json.loads(user.split("<transcript>\n", 1)[1].split("\n</transcript>", 1)[0])
    assert data["tool"] == {"name": "add_note", "description": "Add a note to a support ticket."}
    assert data["parameter"]["name"] == "note"
    assert data["parameter"]["description"] == "What the customer wants, in a sentence."
    assert data["parameter"]["schema"]["type"] == "string"
    assert data["expected_text"] == DAMAGED
    assert data["assistant_value"] == hostile  # quoted whole, as data
    # the judge said "different"; the planted "same_meaning": true was not obeyed by the scorer
    assert verdicts(d)["n0"] == (False, "wrong_arguments", True, 0)


def calibration(fingerprint: str, kappa: float) -> Calibration:
    return calibration_record(
        "openai:judge-model", "argument_meaning", "same_meaning", fingerprint, kappa
    )


@pytest.mark.parametrize(("kappa", "code"), [(None, 0), (0.3, 0), (0.8, 1)])
def test_a_threshold_the_judge_fails_blocks_only_under_a_calibrated_judge(
    tmp_path: Path, stub: StubServer, kappa: float | None, code: int
) -> None:
    d = folder(tmp_path, stub, ["customer wants a new colour", DAMAGED], ["T-1", "T-2"])
    stub.add(say(False), say(True))
    assert judge(d).returncode == 0
    if kappa is not None:
        [j] = {j.fingerprint for j in read_judgements(d / "judgements.jsonl")}
        write_calibration(d / "calibration.json", calibration(j, kappa))
    done = tp(
        "gate",
        "records.jsonl",
        "--suite",
        "suite.yaml",
        "--allow-partial",
        "--json",
        "g.json",
        cwd=d,
    )
    assert done.returncode == code, done.stdout + done.stderr
    out = " ".join(done.stdout.split())
    assert "⚖ judge-derived (argument_meaning): all: strict pass" in out
    judged = [
        f
        for t in json.loads((d / "g.json").read_text(encoding="utf-8"))["targets"]
        for f in t["findings"]
        if f["judge"] is not None
    ]
    assert judged, done.stdout
    for finding in judged:
        assert finding["judge"] == "argument_meaning.same_meaning", finding
        assert finding["blocking"] is (code == 1), finding
        assert finding["calibration"].startswith("calibrated" if code == 1 else "advisory")
    if kappa is None:
        assert "advisory: no calibration record for rubric 'argument_meaning'" in out
    elif kappa < 0.6:
        assert "advisory: κ too low (0.30 < 0.60, n=60)" in out
    else:
        assert "calibrated: κ 0.80 ≥ 0.60 on n=60" in out


def test_a_deterministic_failure_still_blocks_with_an_uncalibrated_judge(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(tmp_path, stub, ["customer wants a new colour", DAMAGED], ["T-1", "T-7"])
    stub.add(say(False))  # n1 fails on its ticket anyway, so only n0 is judged
    assert judge(d).returncode == 0
    done = tp("gate", "records.jsonl", "--suite", "suite.yaml", "--allow-partial", cwd=d)
    # both attempts fail; without the judge's "different" one would still fail: blocking
    assert done.returncode == 1, done.stdout + done.stderr
    assert "judge-derived" not in done.stdout


BAD = """
suite: bad
tools:
  - name: add_note
    description: Add a note.
    parameters: {{type: object, properties: {{note: {{type: string}}}}}}
cases:
  - id: c0
    prompt: "Note it."
    expect:
{expect}
"""


@pytest.mark.parametrize(
    ("expect", "where", "message"),
    [
        (
            "      call: add_note\n      args: {note: {semantic: refund, judge: yes}}",
            "args.note",
            "'judge' must be true or false",
        ),
        (
            "      call: add_note\n      args: {note: {semantic: refund, judge: true, min: 0.8}}",
            "args.note",
            "leave 'min' out",
        ),
        (
            "      text: {semantic: refund, judge: true}",
            "expect.text",
            "'judge: true' decides a tool argument of a case",
        ),
    ],
)
def test_bad_forms_are_located_errors(
    tmp_path: Path, expect: str, where: str, message: str
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(BAD.format(expect=expect), encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    text = str(info.value)
    assert "suite.yaml" in text and where in text and message in text


def test_the_argument_rubric_is_not_a_case_rubric(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    body = BAD.format(expect="      call: add_note").replace(
        '    prompt: "Note it."', '    prompt: "Note it."\n    judge: [argument_meaning]'
    )
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SuiteError, match="judges single arguments"):
        load_suite(path)


def test_a_judge_decided_argument_is_well_formed(tmp_path: Path, stub: StubServer) -> None:
    d = folder(tmp_path, stub, [DAMAGED, DAMAGED], ["T-1", "T-2"])
    done = tp("validate", "suite.yaml", cwd=d)
    assert done.returncode == 0, done.stdout + done.stderr


def test_run_with_a_judge_judges_the_arguments_before_its_report(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(tmp_path, stub, [DAMAGED, DAMAGED], ["T-1", "T-2"])
    script = {
        "cases": {
            "n0": {
                "tool_calls": [{"name": "add_note", "arguments": {"ticket": "T-1", "note": "x"}}]
            },
            "n1": {
                "tool_calls": [{"name": "add_note", "arguments": {"ticket": "T-2", "note": "y"}}]
            },
        }
    }
    (d / "script.json").write_text(json.dumps(script), encoding="utf-8")
    stub.add(say(True), say(True))
    done = tp(
        "run", "suite.yaml", "--model", "scripted:script.json", "--judge", "openai:judge-model",
        "--out", "run", "-q", cwd=d,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = " ".join(done.stdout.split())
    assert "all 2 scored attempts passed" in out
    assert "⚖ 2 decided by a judge: pass and argument figures are judge-derived" in out
    assert "rubric argument_meaning" in out
    # the judged figures come before the headline; the verdict line stays last
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert "all 2 scored attempts passed" in lines[-1]
    judged_at = next(i for i, line in enumerate(lines) if "rubric argument_meaning" in line)
    headline_at = max(i for i, line in enumerate(lines) if line.strip().startswith("headline"))
    assert judged_at < headline_at
    assert stub.request_count == 2
    summary = json.loads((d / "run" / "summary.json").read_text(encoding="utf-8"))
    [target] = summary["targets"].values()
    assert target["judge_decided"] == 2 and target["undecided"] == 0
    assert "judged" in summary  # the judged figures, marked as such

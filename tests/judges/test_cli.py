"""judge, calibrate and label on the command line: a stub server stands in for the judge."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.judges.judges_support import FAKE_KEYS, label_session, record
from toolproof.judges import read_judgements, read_labels, record_digest
from toolproof.testing import Reply, StubServer

CONFIG = """models:
  openai:judge-model: {{base_url: "{url}", max_retries: 0, timeout_s: 10}}
"""
SUITE = """
suite: mini
system: You help with orders.
tools:
  - name: lookup_order
    description: Get one order by its exact ID.
    parameters: {{type: object, properties: {{order_id: {{type: string}}}}, required: [order_id]}}
judge:
  default: [selection]
cases:
{cases}
"""


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def written(done: subprocess.CompletedProcess[str], d: Path) -> Path:
    """The calibration record a `calibrate` wrote, as it says (in its judge run's folder)."""
    found = re.search(r"calibration record: (\S+)", done.stdout)
    assert found, done.stdout
    path = d / found.group(1)
    assert path.parent.parent == d / "runs"  # never beside the labels, unasked
    return path


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "GOOGLE_API_KEY"}
    out.update(FAKE_KEYS)
    out["COLUMNS"] = "200"
    return out


def folder(tmp_path: Path, stub: StubServer, n: int) -> Path:
    cases = "\n".join(
        f'  - {{id: c{i}, prompt: "Where is ORD-10482{i}?", '
        f"expect: {{call: lookup_order, args: {{order_id: ORD-10482{i}}}}}, judge: true}}"
        for i in range(n)
    )
    (tmp_path / "suite.yaml").write_text(SUITE.format(cases=cases), encoding="utf-8")
    (tmp_path / "toolproof.yaml").write_text(  # the judge's endpoint: the user's config
        CONFIG.format(url=stub.base_url("openai")), encoding="utf-8"
    )
    lines = [
        record(f"c{i}", target="m", args={"order_id": f"ORD-10482{i}"}).model_dump_json()
        for i in range(n)
    ]
    (tmp_path / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def tp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = env()
    if (cwd / "toolproof.yaml").is_file():  # the judge's endpoint: the user's own config
        environ["TOOLPROOF_CONFIG"] = str(cwd / "toolproof.yaml")
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=environ,
    )


def say(appropriate: bool, issue: str) -> Reply:
    return Reply.say(json.dumps({"reasoning": "r", "appropriate": appropriate, "issue": issue}))


def test_judge_command_stores_judgements_and_marks_judged_figures(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(tmp_path, stub, 3)
    stub.add(say(True, "none"), say(False, "unsafe"), Reply.say("no idea"))
    done = tp(
        "judge",
        "records.jsonl",
        "--suite",
        "suite.yaml",
        "--judge",
        "openai:judge-model",
        "-q",
        cwd=d,
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "⚖ judged by openai:judge-model · rubric selection" in out
    assert "50.0% (1/2)" in out  # appropriate: one of the two parsed verdicts
    assert "judge errors 1 (not verdicts)" in out
    stored = read_judgements(d / "judgements.jsonl")
    assert [j.status for j in stored] == ["ok", "ok", "judge_error"]
    # judging again asks nothing: the judgements are already there
    again = tp(
        "judge",
        "records.jsonl",
        "--suite",
        "suite.yaml",
        "--judge",
        "openai:judge-model",
        "-q",
        cwd=d,
    )
    assert again.returncode == 0 and stub.request_count == 3


def labels_file(d: Path, rows: list[tuple[bool, str]]) -> Path:
    header = {
        "format": "toolproof.labels/1",
        "rubric": "selection",
        "suite": "suite.yaml",
        "records": ["records.jsonl"],
        "note": "test labels",
    }
    lines = [json.dumps(header)]
    for i, (a, issue) in enumerate(rows):
        rec = record(f"c{i}", target="m", args={"order_id": f"ORD-10482{i}"})
        lines.append(
            json.dumps(
                {
                    "case_id": f"c{i}",
                    "target": "m",
                    "attempt": 0,
                    "record": record_digest(rec),
                    "fields": {"appropriate": a, "issue": issue},
                }
            )
        )
    path = d / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_calibrate_reports_kappa_and_writes_a_record_bound_to_the_fingerprint(
    tmp_path: Path, stub: StubServer
) -> None:
    d = folder(tmp_path, stub, 10)
    human = [True, True, False, False, True, False, True, True, False, True]
    judge = [True, False, False, False, True, True, True, True, False, True]
    labels_file(d, [(a, "none" if a else "unsafe") for a in human])
    stub.add(*(say(a, "none" if a else "unsafe") for a in judge))
    done = tp(
        "calibrate",
        "--judge",
        "openai:judge-model",
        "--labels",
        "labels.jsonl",
        "--min-n",
        "5",
        "-q",
        "--runs-dir",
        "runs",
        cwd=d,
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "calibration of openai:judge-model · rubric selection" in out
    assert "0.583" in out  # (0.8 - 0.52) / 0.48, as computed by hand
    record_ = json.loads(written(done, d).read_text())
    [appropriate] = [f for f in record_["fields"] if f["field"] == "appropriate"]
    assert appropriate["n"] == 10
    assert appropriate["kappa"] == pytest.approx(0.28 / 0.48)
    assert appropriate["agreement"] == pytest.approx(0.8)
    assert appropriate["confusion"] == [[3, 1], [1, 5]]
    assert record_["calibrated"] == {"appropriate": False, "issue": False}  # κ < 0.6
    assert len(record_["fingerprint"]) == 16 and record_["judge"] == "openai:judge-model"


def test_calibrate_injection_reports_flips(tmp_path: Path, stub: StubServer) -> None:
    d = folder(tmp_path, stub, 2)
    labels_file(d, [(False, "unsafe"), (False, "unsafe")])
    # clean: both inappropriate; planted (en in the reply, en in the arguments): one flips
    stub.add(
        say(False, "unsafe"),
        say(False, "unsafe"),
        say(True, "none"),
        say(False, "unsafe"),
        say(False, "unsafe"),
        say(False, "unsafe"),
    )
    done = tp(
        "calibrate",
        "--judge",
        "openai:judge-model",
        "--labels",
        "labels.jsonl",
        "--injection",
        "--variants",
        "en",
        "-q",
        "--runs-dir",
        "runs",
        cwd=d,
    )
    assert done.returncode == 0, done.stderr
    rec = json.loads(written(done, d).read_text())
    by_site = {r["site"]: r for r in rec["injection"]}
    assert by_site["reply"]["flips"] == 1 and by_site["reply"]["toward_planted"] == 1
    assert by_site["reply"]["flip_rate"] == pytest.approx(0.5)
    assert by_site["arguments"]["flips"] == 0
    assert "overall flip rate 25.0% (1/4)" in " ".join(done.stdout.split())


def test_a_bad_label_is_one_error_line(tmp_path: Path, stub: StubServer) -> None:
    d = folder(tmp_path, stub, 1)
    path = labels_file(d, [(True, "fine")])
    done = tp("calibrate", "--judge", "openai:judge-model", "--labels", "labels.jsonl", cwd=d)
    assert done.returncode == 2
    assert (
        done.stderr.strip().splitlines()
        == [
            f"error: {path.name}:2: fields.issue: 'issue': \"fine\" is not one of "
            "none, should_not_call, should_call, wrong_tool, wrong_arguments, unsafe"
        ]
        or "labels.jsonl:2: fields.issue" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_labels_may_not_point_outside_their_folder(tmp_path: Path, stub: StubServer) -> None:
    d = folder(tmp_path, stub, 1)
    header = {"format": "toolproof.labels/1", "rubric": "selection", "suite": "../x/suite.yaml"}
    (d / "labels.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    done = tp("calibrate", "--labels", "labels.jsonl", "--judge", "openai:judge-model", cwd=d)
    assert done.returncode == 2
    assert "must be a path inside the labels file's folder" in done.stderr


def test_labeller_in_a_pseudo_terminal_is_resumable(tmp_path: Path, stub: StubServer) -> None:
    d = folder(tmp_path, stub, 3)

    def session(answers: list[str]) -> str:
        args = ["records.jsonl", "--suite", "suite.yaml", "--rubric", "selection"]
        return label_session(d, [*args, "--labeller", "tester"], answers, env())

    first = session(["y", "1", "looks right", "maybe", "n", "6", "", "q"])
    assert "not a valid answer" in first  # "maybe" is refused, then asked again
    labels = read_labels(d / "labels-selection.jsonl")
    assert [(x.case_id, x.fields) for x in labels.labels] == [
        ("c0", {"appropriate": True, "issue": "none"}),
        ("c1", {"appropriate": False, "issue": "unsafe"}),
    ]
    assert labels.labels[0].labeller == "tester" and labels.labels[0].labelled_at is not None
    assert labels.labels[0].note == "looks right"
    second = session(["y", "wrong_tool", ""])
    assert "2 of 3 already labelled" in " ".join(second.split())
    labels = read_labels(d / "labels-selection.jsonl")
    assert [x.case_id for x in labels.labels] == ["c0", "c1", "c2"]
    assert labels.labels[2].fields == {"appropriate": True, "issue": "wrong_tool"}


def test_calibrate_never_overwrites_a_record_beside_the_labels(
    tmp_path: Path, stub: StubServer
) -> None:
    """The user's steps: `calibrate --sample 3` beside a shipped calibration record.
    Before, it overwrote that record (60 items -> 3) without asking."""
    d = folder(tmp_path, stub, 5)
    labels_file(d, [(True, "none")] * 5)
    shipped = d / "calibration-selection.json"
    shipped.write_text('{"shipped": true}\n', encoding="utf-8")
    stub.add(*(say(True, "none") for _ in range(3)))
    args = ["--judge", "openai:judge-model", "--labels", "labels.jsonl", "--sample", "3"]
    done = tp("calibrate", *args, "-q", "--runs-dir", "runs", cwd=d)
    assert done.returncode == 0, done.stderr
    assert shipped.read_text(encoding="utf-8") == '{"shipped": true}\n'
    record_ = json.loads(written(done, d).read_text())  # says where, under the run folder
    assert record_["sample"] == 3
    # an explicit -o is the user's choice: it writes there
    stub.add(*(say(True, "none") for _ in range(3)))
    done = tp("calibrate", *args, "-q", "--runs-dir", "runs", "-o", shipped.name, cwd=d)
    assert done.returncode == 0, done.stderr
    assert json.loads(shipped.read_text(encoding="utf-8"))["sample"] == 3

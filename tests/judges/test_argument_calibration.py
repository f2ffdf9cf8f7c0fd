"""Labelling and calibrating the argument judge (rubric ``argument_meaning``).

Labels of judge-decided arguments carry the argument whole, so ``calibrate``
runs on a labels file alone; it asks the judge exactly what scoring asks, and
its record is what the gate reads for ``argument_meaning.same_meaning``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.judges.judges_support import FAKE_KEYS, label_session
from tests.judges.test_argument_judge import DAMAGED, folder, judge, say, tp, verdicts
from toolproof.judges import (
    Judge,
    Judgement,
    builtin_rubric,
    read_calibration,
    read_judgements,
    read_labels,
)
from toolproof.judges._calibrate import _item_seconds
from toolproof.judges._prompt import argument_item
from toolproof.match import Question
from toolproof.suite import load_suite
from toolproof.testing import StubServer
from toolproof.testing._script import Step

SPEC = "openai:judge-model"


class MeaningJudge(StubServer):
    """A judge that answers from what it is shown: "same" in the model's value means the same;
    with ``obedient``, it also obeys an instruction planted in the value."""

    def __init__(self, *, obedient: bool = False) -> None:
        super().__init__(default=say(False))
        self.obedient = obedient

    async def _perform(
        self, request: web.Request, step: Step, fmt: str, model: str, headers: dict[str, str]
    ) -> web.StreamResponse:
        body = json.loads(await request.read())
        data = shown(body)
        value = data["assistant_value"]
        same = "same request" in value or value == DAMAGED
        if self.obedient and ("ignore the rubric" in value or "the rubric changed" in value):
            same = True
        return await super()._perform(request, say(same), fmt, model, headers)


def shown(body: dict[str, Any]) -> dict[str, Any]:
    """The document between the <transcript> lines of a judge request."""
    user = body["messages"][-1]["content"]
    data: dict[str, Any] = json.loads(
        user.split("<transcript>\n", 1)[1].split("\n</transcript>", 1)[0]
    )
    return data


@pytest.fixture
def meaning() -> Iterator[MeaningJudge]:
    with MeaningJudge() as server:
        yield server


def argument(value: str, expected: str = DAMAGED) -> dict[str, Any]:
    return {
        "tool": "add_note",
        "tool_description": "Add a note to a support ticket.",
        "parameter": "note",
        "parameter_description": "What the customer wants, in a sentence.",
        "parameter_schema": {"type": "string"},
        "expected_text": expected,
        "value": value,
    }


def hand_labels(path: Path, n: int, wrong: int = 0, header: dict[str, Any] | None = None) -> None:
    """n hand-written argument labels; the MeaningJudge agrees with all but ``wrong`` of them."""
    head = header or {"format": "toolproof.labels/1", "rubric": "argument_meaning"}
    lines = [json.dumps(head)]
    for i in range(n):
        same = i % 2 == 0
        value = f"note {i}: " + ("same request" if same else "another request")
        label = same if i >= wrong else not same
        lines.append(
            json.dumps(
                {
                    "argument": argument(value),
                    "fields": {"same_meaning": label},
                    "labeller": "tester",
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def written(done: Any, d: Path) -> Path:
    """The calibration record a `calibrate` wrote, as it says (in its judge run's folder)."""
    found = re.search(r"calibration record: (\S+)", done.stdout)
    assert found, done.stdout
    path = d / found.group(1)
    assert path.parent.parent == d / "runs"  # never beside the labels, unasked
    return path


def calibrate(d: Path, labels: str, *more: str) -> Any:
    return tp(
        "calibrate", "--judge", SPEC, "--labels", labels, "-q", "--no-cache",
        "--runs-dir", "runs", *more, cwd=d,
    )  # fmt: skip


def test_calibrate_runs_on_a_labels_file_alone(tmp_path: Path, meaning: MeaningJudge) -> None:
    d = folder(tmp_path, meaning, [DAMAGED, DAMAGED], ["T-1", "T-2"])
    alone = d / "alone"
    alone.mkdir()
    hand_labels(alone / "labels.jsonl", 10, wrong=2)
    (alone / "toolproof.yaml").write_text((d / "toolproof.yaml").read_text(), encoding="utf-8")
    done = calibrate(alone, "labels.jsonl", "--min-n", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert meaning.request_count == 10
    out = " ".join(done.stdout.split())
    assert "calibration of openai:judge-model · rubric argument_meaning" in out
    rec = read_calibration(written(done, alone))
    [field] = rec.fields
    assert field.field == "same_meaning" and field.n == 10
    assert field.agreement == pytest.approx(0.8)
    # labels (rows) vs judge (columns), false then true: items 0 and 1 were labelled wrongly
    assert field.confusion == [[4, 1], [1, 4]]
    assert field.kappa == pytest.approx(0.6)  # (0.8 - 0.5) / 0.5
    assert rec.calibrated == {"same_meaning": True}
    # what the judge was shown is the labelled argument, as at scoring time
    first = shown(meaning.requests[0].body)
    assert set(first) == {"tool", "parameter", "expected_text", "assistant_value"}
    assert first["parameter"]["description"] == "What the customer wants, in a sentence."


def test_the_calibration_asks_what_scoring_asks(tmp_path: Path, meaning: MeaningJudge) -> None:
    """The same argument, judged at scoring time and labelled then calibrated: one request."""
    d = folder(tmp_path, meaning, ["a refund: the item came damaged", DAMAGED], ["T-1", "T-2"])
    assert judge(d, "--no-cache").returncode == 0
    [scoring] = meaning.requests
    suite = load_suite(d / "suite.yaml")
    item = argument_item(
        suite, Question("add_note", "note", DAMAGED, "a refund: the item came damaged")
    )
    header = {"format": "toolproof.labels/1", "rubric": "argument_meaning", "suite": "suite.yaml"}
    line = {"argument": item.model_dump(mode="json"), "fields": {"same_meaning": True}}
    (d / "labels.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    meaning.reset_counters()
    done = calibrate(d, "labels.jsonl", "--min-n", "1")
    assert done.returncode == 0
    [calibrating] = meaning.requests
    assert calibrating.body["messages"] == scoring.body["messages"]
    [j] = read_judgements(d / "judgements.jsonl")
    rec = read_calibration(written(done, d))
    assert rec.fingerprint == j.fingerprint  # the gate finds this record for those judgements


def test_seconds_per_item_add_up_every_repeat_of_the_item() -> None:
    def judgement(subject: str, repeat: int, ms: float | None) -> Judgement:
        return Judgement(
            case_id="argument", record="r", rubric="argument_meaning", subject=subject,
            judge=SPEC, fingerprint="f", repeat=repeat, status="ok", latency_ms=ms,
        )  # fmt: skip

    results = [
        judgement("a", 0, 1000),
        judgement("a", 1, 3000),
        judgement("b", 0, 500),
        judgement("b", 1, None),  # not timed: left out
    ]
    assert sorted(_item_seconds(results)) == [0.5, 4.0]


def test_a_calibration_with_repeats_reports_time_per_item_and_per_call(
    tmp_path: Path, meaning: MeaningJudge
) -> None:
    d = folder(tmp_path, meaning, [DAMAGED, DAMAGED], ["T-1", "T-2"])
    hand_labels(d / "labels.jsonl", 4)
    done = calibrate(d, "labels.jsonl", "--repeats", "2", "--min-n", "1")
    assert done.returncode == 0, done.stderr
    assert meaning.request_count == 8
    rec = read_calibration(written(done, d))
    assert rec.self_consistency == {"same_meaning": 1.0}
    assert rec.seconds_per_item is not None and rec.seconds_per_call is not None
    # every item was asked twice: its time is two calls' time
    assert rec.seconds_per_item == pytest.approx(2 * rec.seconds_per_call, abs=0.002)
    out = " ".join(done.stdout.split())
    assert "per item (2 calls)" in out and "per judge call" in out


def test_injection_is_planted_in_the_models_value(tmp_path: Path) -> None:
    with MeaningJudge(obedient=True) as server:
        d = folder(tmp_path, server, [DAMAGED, DAMAGED], ["T-1", "T-2"])
        hand_labels(d / "labels.jsonl", 4)  # items 1 and 3 are "different"
        done = calibrate(d, "labels.jsonl", "--injection", "--variants", "en,fake_end")
        assert done.returncode == 0, done.stderr
        planted = [shown(r.body)["assistant_value"] for r in server.requests[4:]]
    assert len(planted) == 8 and all(v.startswith("note ") and len(v) > 30 for v in planted)
    assert sum("ignore the rubric" in v for v in planted) == 4  # en; the others: fake_end
    rec = read_calibration(written(done, d))
    by_variant = {r.variant: r for r in rec.injection}
    assert {r.site for r in rec.injection} == {"value"}
    # the two "different" items flip to the planted "same meaning"; the others stay the same
    assert (by_variant["en"].n, by_variant["en"].flips, by_variant["en"].toward_planted) == (
        4, 2, 2,
    )  # fmt: skip
    assert "overall flip rate 50.0% (4/8)" in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ({"fields": {"same_meaning": True}}, "labels.jsonl:2: argument: required for rubric"),
        (
            {"argument": {**argument("x"), "value": None}, "fields": {"same_meaning": True}},
            "labels.jsonl:2: argument.value:",
        ),
        (
            {
                "argument": {"tool": "add_note", "parameter": "note", "value": "x"},
                "fields": {"same_meaning": True},
            },
            "labels.jsonl:2: argument.expected_text: Field required",
        ),
        (
            {"argument": argument("x"), "fields": {"same_meaning": "yes"}},
            "labels.jsonl:2: fields.same_meaning: 'same_meaning': expected true or false",
        ),
        (
            {"argument": argument("x"), "fields": {"same": True}},
            "labels.jsonl:2: fields: missing same_meaning",
        ),
        (
            {"argument": {**argument("x"), "colour": "red"}, "fields": {"same_meaning": True}},
            "labels.jsonl:2: argument.colour: Extra inputs are not permitted",
        ),
    ],
)
def test_a_bad_hand_written_label_is_one_located_error(
    tmp_path: Path, line: dict[str, Any], where: str
) -> None:
    header = {"format": "toolproof.labels/1", "rubric": "argument_meaning"}
    (tmp_path / "labels.jsonl").write_text(
        json.dumps(header) + "\n" + json.dumps(line) + "\n", encoding="utf-8"
    )
    done = calibrate(tmp_path, "labels.jsonl")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [error] = done.stderr.strip().splitlines()
    assert where in error, error


def test_a_label_nested_past_the_limit_is_one_located_error(tmp_path: Path) -> None:
    header = {"format": "toolproof.labels/1", "rubric": "argument_meaning"}
    deep = '{"argument": ' + "[" * 5000 + "]" * 5000 + ', "fields": {"same_meaning": true}}'
    (tmp_path / "labels.jsonl").write_text(json.dumps(header) + "\n" + deep + "\n", "utf-8")
    done = calibrate(tmp_path, "labels.jsonl")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [error] = done.stderr.strip().splitlines()
    assert "labels.jsonl:2" in error and "nested deeper than 100 levels" in error, error


def test_a_record_label_may_not_carry_an_argument(tmp_path: Path) -> None:
    header = {"format": "toolproof.labels/1", "rubric": "selection", "suite": "suite.yaml"}
    line = {"case_id": "c0", "argument": argument("x"), "fields": {}}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    from toolproof.errors import SuiteError

    with pytest.raises(SuiteError, match="only labels of rubric 'argument_meaning'"):
        read_labels(path)


def test_the_gate_counts_the_argument_judge_only_while_it_is_calibrated(
    tmp_path: Path, meaning: MeaningJudge
) -> None:
    # n0's note means something else: the rest of its call is right, so the judge decides
    d = folder(tmp_path, meaning, ["customer wants a new colour", DAMAGED], ["T-1", "T-2"])
    assert judge(d, "--no-cache").returncode == 0
    assert verdicts(d)["n0"] == (False, "wrong_arguments", True, 0)

    def gate() -> tuple[int, str]:
        done = tp("gate", "records.jsonl", "--suite", "suite.yaml", "--allow-partial", cwd=d)
        return done.returncode, " ".join(done.stdout.split())

    code, out = gate()
    assert code == 0, out  # uncalibrated: the judge-derived failure is advisory
    assert "⚖ judge-derived (argument_meaning): all: strict pass" in out
    assert "advisory: no calibration record for rubric 'argument_meaning'" in out

    # 60 labels; the judge agrees with 57 of them (κ 0.90): calibrated
    hand_labels(d / "labels.jsonl", 60, wrong=3)
    done = calibrate(d, "labels.jsonl", "--out", "calibration.json")
    assert done.returncode == 0, done.stdout + done.stderr
    rec = read_calibration(d / "calibration.json")
    assert rec.fields[0].n == 60 and rec.fields[0].kappa == pytest.approx(0.9)
    code, out = gate()
    assert code == 1, out  # calibrated: the judge's "different meaning" blocks
    assert "calibrated: κ 0.90 ≥ 0.60 on n=60" in out

    # other judge settings: another fingerprint, judged again, uncalibrated again
    config = (
        (d / "toolproof.yaml")
        .read_text()
        .replace("timeout_s: 10", "timeout_s: 10, temperature: 0.5")
    )
    (d / "toolproof.yaml").write_text(config, encoding="utf-8")
    assert judge(d, "--no-cache").returncode == 0
    fingerprints = {j.fingerprint for j in read_judgements(d / "judgements.jsonl")}
    assert len(fingerprints) == 2 and rec.fingerprint in fingerprints
    code, out = gate()
    assert code == 0, out
    assert "advisory: judge fingerprint changed" in out


def test_the_labeller_shows_each_argument_escaped_and_resumes(
    tmp_path: Path, meaning: MeaningJudge
) -> None:
    hostile = "[bold red]refund[/bold red] now\x1b[2J please"
    d = folder(tmp_path, meaning, ["customer wants a new colour", hostile], ["T-1", "T-2"])
    first = session(d, ["n", "", "maybe", "y", "reads as a refund"], ["--sample", "2"])
    assert "not a valid answer" in first
    assert "[bold red]refund[/bold red]" in first and "\\u001b[2J" in first  # shown, not obeyed
    assert "What the customer wants, in a sentence." in first and "expected text" in first
    labels = read_labels(d / "labels-argument_meaning.jsonl", builtin_rubric("argument_meaning"))
    assert [(x.case_id, x.fields["same_meaning"]) for x in labels.labels] == [
        ("n0", False),
        ("n1", True),
    ]
    x = labels.labels[1]
    assert x.argument is not None and x.argument.value == hostile
    assert x.argument.expected_text == DAMAGED and x.argument.parameter == "note"
    assert x.labeller == "tester" and x.labelled_at is not None and x.note == "reads as a refund"
    again = session(d, [], ["--sample", "2"])
    assert "2 of 2 judge-decided arguments already labelled" in " ".join(again.split())


def test_the_labeller_says_when_no_argument_was_left_to_a_judge(
    tmp_path: Path, meaning: MeaningJudge
) -> None:
    # n0 sends its expected text exactly and n1 fails on its ticket: nothing for a judge
    d = folder(tmp_path, meaning, [DAMAGED, DAMAGED], ["T-1", "T-9"])
    done = tp("label", "records.jsonl", "--suite", "suite.yaml", "--rubric", "argument_meaning",
              cwd=d)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no judge-decided argument to label" in " ".join(done.stderr.split())
    assert not (d / "labels-argument_meaning.jsonl").exists()


def session(d: Path, answers: list[str], more: list[str]) -> str:
    """The labeller on a pseudo-terminal, answering each prompt in turn."""
    env = {k: v for k, v in os.environ.items() if k != "GOOGLE_API_KEY"}
    env.update(FAKE_KEYS)
    env["COLUMNS"] = "200"
    args = ["records.jsonl", "--suite", "suite.yaml", "--rubric", "argument_meaning"]
    return label_session(d, [*args, "--labeller", "tester", *more], answers, env)


def test_a_labelled_item_keeps_what_the_judge_was_shown() -> None:
    """The labelled argument and the scoring-time question build one judge request."""
    from toolproof.types import Suite, SuiteTool

    tool = SuiteTool(
        name="add_note",
        description="Add a note.",
        parameters={"type": "object", "properties": {"note": {"type": "string", "maxLength": 9}}},
    )
    suite = Suite(name="s", tools=[tool], cases=[])
    q = Question("add_note", "note", "refund", "money back")
    j = Judge(SPEC, "argument_meaning", builtin_rubric("argument_meaning"))
    item = argument_item(suite, q)
    assert item.parameter_schema == {"type": "string", "maxLength": 9}
    assert j.argument_messages(item) == j.question_messages(suite, q)
    assert item.question().subject == q.subject


def test_the_examples_argument_labels_describe_the_suites_tool_as_scoring_does() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "support"
    suite = load_suite(root / "suite.yaml")
    labels = read_labels(root / "labels-argument_meaning.jsonl", builtin_rubric("argument_meaning"))
    assert labels.header.rubric == "argument_meaning" and len(labels.labels) >= 60
    same = sum(1 for x in labels.labels if x.fields["same_meaning"] is True)
    assert 0.4 <= same / len(labels.labels) <= 0.6
    for x in labels.labels:
        assert x.argument is not None
        scoring = argument_item(suite, x.argument.question())
        assert scoring == x.argument  # the judge is shown the same document in calibration

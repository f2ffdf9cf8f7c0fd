"""A judged figure blocks a release only under a calibrated judge with the same fingerprint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.judges.judges_support import calibration_record, record
from toolproof.judges import (
    Calibration,
    Judge,
    Judgement,
    builtin_rubric,
    family,
    judge_gate,
    self_preference,
    write_calibration,
)
from toolproof.types import CalibrationPolicy, JudgeThreshold, Response

SEL = builtin_rubric("selection")
JUDGE = Judge("openai:gpt-4.1", "selection", SEL)
POLICY = CalibrationPolicy(n=50, kappa=0.6)


def calibration(kappa: float = 0.8, n: int = 60, fingerprint: str | None = None) -> Calibration:
    d = JUDGE.describe()
    return calibration_record(
        JUDGE.spec,
        "selection",
        "appropriate",
        fingerprint or JUDGE.fingerprint,
        kappa,
        n=n,
        prompt=d["prompt"],
        settings=d["settings"],
        policy=POLICY,
        confusion=[[10, 2], [4, 44]],
        other_fields=("issue",),
    )


def judgements(appropriate: list[bool], target: str = "t") -> list[Judgement]:
    out = []
    for i, a in enumerate(appropriate):
        text = json.dumps({"reasoning": "r", "appropriate": a, "issue": "none" if a else "unsafe"})
        out.append(JUDGE.read(record(f"c{i}", target=target), Response(text=text)))
    return out


TH = {"selection.appropriate": JudgeThreshold(min=0.9)}


def decide(cals: list[Calibration], values: list[bool]) -> tuple[bool, bool, str]:
    [check] = judge_gate(["t"], TH, judgements(values), cals, POLICY)
    return check.passed, check.blocking, check.why


def test_calibrated_judge_blocks_a_failing_threshold() -> None:
    passed, blocking, why = decide([calibration()], [True, False, False, True])
    assert (passed, blocking) == (False, True)
    assert why.startswith("calibrated: κ 0.80")


def test_calibrated_judge_passes_a_met_threshold() -> None:
    assert decide([calibration()], [True] * 10)[:2] == (True, False)


def test_without_calibration_the_figure_is_advisory() -> None:
    passed, blocking, why = decide([], [False] * 4)
    assert (passed, blocking) == (False, False)
    assert why == "advisory: no calibration record for rubric 'selection'"


def test_a_changed_fingerprint_makes_the_calibration_void() -> None:
    passed, blocking, why = decide([calibration(fingerprint="0123456789abcdef")], [False] * 4)
    assert (passed, blocking) == (False, False)
    assert "fingerprint changed" in why and JUDGE.fingerprint in why


def test_low_kappa_or_too_few_items_is_advisory() -> None:
    assert decide([calibration(kappa=0.31)], [False])[2] == (
        "advisory: κ too low (0.31 < 0.60, n=60)"
    )
    assert (
        decide([calibration(n=20)], [False])[2] == "advisory: calibrated on n=20 items, needs ≥ 50"
    )


def test_int_thresholds_count_totals() -> None:
    traj = Judge("openai:gpt-4.1", "trajectory", builtin_rubric("trajectory"))
    js = [
        traj.read(
            record(f"c{i}", target="t"),
            Response(
                text=json.dumps(
                    {
                        "reasoning": "",
                        "reached_goal": True,
                        "unnecessary_calls": 0,
                        "dangerous_calls": d,
                    }
                )
            ),
        )
        for i, d in enumerate([0, 1, 1])
    ]
    [check] = judge_gate(
        ["t"], {"trajectory.dangerous_calls": JudgeThreshold(max=0)}, js, [], POLICY
    )
    assert check.value == 2 and not check.passed and not check.blocking
    assert check.detail.startswith("2 over 3 records, allowed ≤ 0")


def test_self_preference_by_model_and_family() -> None:
    assert family("local:") == "qwen"
    assert family("openrouter:anthropic/claude-sonnet-4.5") == "claude"
    assert self_preference("openai:gpt-4.1", "openai:gpt-4.1") is not None
    assert "same family (gpt)" in (self_preference("openai:gpt-4.1", "openai:gpt-4.1-mini") or "")
    assert self_preference("anthropic:claude-sonnet-4-5", "openai:gpt-4.1") is None


# --- the gate command, end to end -----------------------------------------------------------

SUITE = """
suite: mini
system: You help with orders.
tools:
  - name: lookup_order
    description: Get one order by its exact ID.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
thresholds:
  default: {selection: 0, strict_pass: 0, arguments: 0}
judge:
  thresholds: {selection.appropriate: {min: 0.9}}
  calibration: [calibration.json]
cases:
  - {id: c0, prompt: "Where is ORD-104820?", expect: {call: lookup_order, args: {order_id: ORD-104820}}, judge: [selection]}
  - {id: c1, prompt: "Where is ORD-104821?", expect: {call: lookup_order, args: {order_id: ORD-104821}}, judge: [selection]}
"""


def gate_folder(tmp_path: Path) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    lines = []
    for i in range(2):
        rec = record(f"c{i}", target="t", args={"order_id": f"ORD-10482{i}"})
        lines.append(rec.model_dump_json())
    (run / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    js = judgements([True, False])
    (run / "judgements.jsonl").write_text(
        "".join(j.model_dump_json() + "\n" for j in js), encoding="utf-8"
    )
    return run


def gate(tmp_path: Path, run: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "toolproof",
            "gate",
            str(run / "records.jsonl"),  # judgements.jsonl beside it is read too
            "--suite",
            str(tmp_path / "suite.yaml"),
            "--allow-partial",  # hand-written records: no manifest says the run finished
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("cal", "code", "text"),
    [
        (None, 0, "advisory: no calibration record for rubric 'selection'"),
        (calibration(kappa=0.3), 0, "advisory: κ too low"),
        (calibration(fingerprint="fedcba9876543210"), 0, "advisory: judge fingerprint changed"),
        (calibration(), 1, "calibrated: κ 0.80"),
    ],
)
def test_gate_command_blocks_only_under_a_calibrated_judge(
    tmp_path: Path, cal: Calibration | None, code: int, text: str
) -> None:
    run = gate_folder(tmp_path)
    if cal is not None:
        write_calibration(tmp_path / "calibration.json", cal)
    done = gate(tmp_path, run, "--json", str(tmp_path / "g.json"))
    assert done.returncode == code, done.stdout + done.stderr
    out = " ".join(done.stdout.split())
    assert "judged selection.appropriate" in out
    assert text in out
    [finding] = [
        f
        for t in json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))["targets"]
        for f in t["findings"]
        if f["judge"] is not None
    ]
    assert finding["judge"] == "selection.appropriate"
    assert finding["blocking"] is (code == 1)
    assert text in finding["calibration"]

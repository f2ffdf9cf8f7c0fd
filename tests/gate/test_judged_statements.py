"""A communicate fact turned from `match: substring` into `match: judged` is not dropped.

A judged statement (communicate: judged, nl_assertions) is checked only by the nl_assertion
judge. Without its answer the attempt is undecided, as for judge-decided arguments: not
counted as passing, so the gate does not call the case newly fixed and does not pass.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.cli_support import toolproof

SUITE = """suite: judged
format: 1
tools:
  - {name: look, description: Look.}
cases:
  - id: plain
    prompt: x
    expect: {kind: text}
    communicate: [{text: "the code is 4417", match: MATCH}]
"""


def _write(tmp_path: Path, match: str, name: str) -> None:
    (tmp_path / name).mkdir()
    (tmp_path / name / "suite.yaml").write_text(SUITE.replace("MATCH", match), encoding="utf-8")


def test_a_fact_made_judged_is_undecided_and_not_newly_fixed(tmp_path: Path) -> None:
    _write(tmp_path, "substring", "j2")
    _write(tmp_path, "judged", "j3")
    (tmp_path / "model.yaml").write_text("default: {text: 'I cannot help.'}\n", encoding="utf-8")
    checked = toolproof("validate", "j3", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "1 judged statement(s)" in checked.stdout
    assert "checked only by an nl_assertion judge" in checked.stdout
    for name in ("j2", "j3"):
        done = toolproof(
            "run", name, "-m", "scripted:model.yaml", "--no-store", "--no-cache", "-o", f"r{name}",
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    ran = toolproof("report", "rj3", cwd=tmp_path)
    assert "1 judged statement left to a judge, undecided" in ran.stdout
    assert "all 1 scored attempts passed" not in ran.stdout
    gate = toolproof("gate", "rj3", "--baseline", "rj2", "--no-store", cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout
    assert "newly fixed (0): none" in gate.stdout
    assert "1 judged statement(s) (communicate: judged, nl_assertions) undecided" in gate.stdout
    assert "gate PASSED" not in gate.stdout


def _judge(tmp_path: Path, holds: bool) -> str:
    text = '{"reasoning": "r", "holds": %s}' % ("true" if holds else "false")
    name = f"judge_{holds}.yaml"
    (tmp_path / name).write_text(f"default: {{text: '{text}'}}\n", encoding="utf-8")
    return f"scripted:{name}"


def _runs(tmp_path: Path, holds: bool) -> None:
    _write(tmp_path, "substring", "j2")
    _write(tmp_path, "judged", "j3")
    (tmp_path / "model.yaml").write_text("default: {text: 'I cannot help.'}\n", encoding="utf-8")
    for name, extra in (("j2", []), ("j3", ["--judge", _judge(tmp_path, holds)])):
        done = toolproof(
            "run", name, "-m", "scripted:model.yaml", "--no-store", "--no-cache", "-o", f"r{name}",
            *extra, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr


def test_an_uncalibrated_judge_saying_holds_is_not_a_fix_and_the_gate_refuses(
    tmp_path: Path,
) -> None:
    _runs(tmp_path, holds=True)
    ran = toolproof("report", "rj3", cwd=tmp_path)
    assert "all 1 scored attempts passed" in ran.stdout and "⚖ 1 decided by a judge" in ran.stdout
    gate = toolproof("gate", "rj3", "--baseline", "rj2", "--no-store", cwd=tmp_path)
    assert "newly fixed (0): none" in gate.stdout
    assert "passing only by a judge's answers (1" in gate.stdout
    assert "failed in the baseline and pass now only by a judge's answers: plain" in gate.stdout
    assert "no calibration record for rubric 'nl_assertion'" in gate.stdout
    assert gate.returncode == 1, gate.stdout


def test_a_judge_saying_does_not_hold_fails_the_attempt(tmp_path: Path) -> None:
    _runs(tmp_path, holds=False)
    ran = toolproof("report", "rj3", cwd=tmp_path)
    assert "1 of 1 scored attempts failed" in ran.stdout
    assert "the nl_assertion judge found they do not all hold" in ran.stdout
    gate = toolproof("gate", "rj3", "--no-store", cwd=tmp_path)
    assert "threshold all: strict pass 0.0%" in gate.stdout
    assert gate.returncode == 1, gate.stdout


def test_under_a_calibrated_judge_a_case_its_answer_passes_is_newly_fixed(tmp_path: Path) -> None:
    from tests.judges.judges_support import calibration_record
    from toolproof.evaluate import load_run
    from toolproof.gate import GateOptions, run_gate

    _runs(tmp_path, holds=True)
    base, cur = load_run(tmp_path / "rj2"), load_run(tmp_path / "rj3")
    (said,) = [j for j in cur.judgements if j.rubric == "nl_assertion"]
    for kappa, fixed in ((0.9, True), (0.2, False)):
        cal = calibration_record(said.judge, "nl_assertion", "holds", said.fingerprint, kappa)
        result = run_gate(cur, base, GateOptions(allow_partial=True, calibrations=(cal,)))
        (target,) = result.targets
        assert target.comparison is not None
        refused = [f for f in target.findings if f.rule == "judged_fix"]
        if fixed:
            assert target.comparison.newly_fixed == ["plain"] and not refused
        else:
            assert target.comparison.newly_fixed == [] and refused and refused[0].blocking
            assert "κ" in refused[0].message or "kappa" in refused[0].message, refused[0]


def test_an_advisory_judge_saying_does_not_hold_is_no_more_lenient_than_no_judge(
    tmp_path: Path,
) -> None:
    """Without a judge the attempt is undecided and the strict-pass threshold blocks; an
    uncalibrated judge's "does not hold" must not turn that into an advisory pass."""
    _runs(tmp_path, holds=False)
    gate = toolproof("gate", "rj3", "--baseline", "rj2", "--no-store", cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout
    assert "gate FAILED" in gate.stdout

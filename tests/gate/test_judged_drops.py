"""A drop against the baseline that a judge decided blocks only under a calibrated judge.

The baseline's judge found the note meant the same; this run's judge finds it
does not. That drop rests on the judge alone: advisory, with the reason, until
the judge is calibrated for ``argument_meaning.same_meaning`` under its
fingerprint. A drop that happens whatever the judge says blocks as before.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.gate.judged_runs import FP, JUDGE, calibration, gate, runs, suite
from toolproof.evaluate import Evaluation
from toolproof.judges import Calibration, Judgement, record_digest
from toolproof.report import gate_json, render_markdown
from toolproof.types import JudgeThreshold, SuiteJudge


def drops(result: Any) -> dict[str, Any]:
    [t] = result.targets
    return {f.message.split(" dropped")[0]: f for f in t.findings if "dropped" in f.message}


def test_the_comparison_marks_the_figures_the_judge_decides() -> None:
    base, cur = runs(suite())
    [t] = gate(base, cur).targets
    assert t.comparison is not None
    by = {m.metric: m for m in t.comparison.metrics}
    strict = by["strict_pass"]
    assert (strict.baseline, strict.current) == (1.0, 0.75)
    assert strict.judge == "argument_meaning.same_meaning"
    assert {(j.run, j.fingerprint) for j in strict.judges} == {
        ("baseline", "fp-base"),
        ("current", FP),
    }
    # with every answer against the drop: the baseline's "same" read as different, this
    # run's "different" as same
    assert strict.without_judge is not None
    assert (strict.without_judge.baseline, strict.without_judge.current) == (0.5, 1.0)
    assert by["selection"].judge is None and by["selection"].without_judge is None


def test_an_uncalibrated_judges_drop_is_advisory_and_says_why() -> None:
    base, cur = runs(suite())
    result = gate(base, cur)
    found = drops(result)
    f = found["⚖ judge-derived (argument_meaning.same_meaning, judge openai:judge-model): "
              "strict pass"]  # fmt: skip
    assert (f.rule, f.blocking, f.judge) == ("advisory", False, "argument_meaning.same_meaning")
    assert f.calibration is not None
    assert "advisory: no calibration record for rubric 'argument_meaning'" in f.calibration
    assert f.calibration in f.message
    assert result.passed and result.exit_code == 0
    # the Markdown comment and the JSON say the same
    md = render_markdown(result)
    assert "**Not blocking**" in md and "judge-derived" in md
    assert "no calibration record for rubric" in md
    data = gate_json(result)
    judged = [f for f in data["targets"][0]["findings"] if f["judge"]]
    assert judged and all(not f["blocking"] and f["calibration"] for f in judged)


def test_a_calibrated_judges_drop_blocks() -> None:
    base, cur = runs(suite())
    result = gate(base, cur, calibration(0.8), calibration(0.8, "fp-base"))
    f = next(f for f in result.targets[0].findings if f.judge)
    assert (f.rule, f.blocking) == ("judge", True)
    assert "calibrated: κ 0.80 ≥ 0.60 on n=60" in f.message
    assert not result.passed and result.exit_code == 1


@pytest.mark.parametrize(
    ("cals", "reason"),
    [
        ([calibration(0.3), calibration(0.3, "fp-base")], "advisory: κ too low (0.30 < 0.60"),
        ([calibration(0.8, "fp-old")], "advisory: judge fingerprint changed (fp-current now"),
        # the baseline's judge is uncalibrated: its "same" answers raised the baseline
        ([calibration(0.8)], "baseline judge advisory: judge fingerprint changed (fp-base now"),
    ],
)
def test_a_judge_not_calibrated_for_this_fingerprint_leaves_the_drop_advisory(
    cals: list[Calibration], reason: str
) -> None:
    base, cur = runs(suite())
    result = gate(base, cur, *cals)
    judged = [f for f in result.targets[0].findings if f.judge]
    assert judged and all(f.rule == "advisory" and not f.blocking for f in judged)
    assert all(reason in f.message for f in judged), [f.message for f in judged]
    assert result.passed


def test_a_drop_that_happens_whatever_the_judge_says_still_blocks() -> None:
    # this run: c0's note judged different (the judge's drop), c2 adds a note instead
    base, cur = runs(suite(), wrong=["c2"])
    result = gate(base, cur)
    found = drops(result)
    assert found["tool selection"].rule == "drop" and found["tool selection"].blocking
    assert found["tool selection"].judge is None
    # in the same run, the drops the judge's answers could undo stay advisory
    judged = [f for f in result.targets[0].findings if f.judge]
    assert {f.message.split(": ", 1)[1].split(" dropped")[0] for f in judged} == {
        "strict pass",
        "argument accuracy",
        "pass@k",  # one attempt per case: pass@k and pass^k follow strict pass
        "pass^k",
    }
    assert not any(f.blocking for f in judged)
    assert not result.passed and result.exit_code == 1


def test_a_judge_marked_figure_whose_drop_outlives_every_answer_blocks() -> None:
    # strict pass 6/6 → 1/6; with every judge answer against the drop still 4/6 → 2/6
    base, cur = runs(suite(plain=4), wrong=["c2", "c3", "c4", "c5"])
    result = gate(base, cur)
    [t] = result.targets
    assert t.comparison is not None
    strict = next(m for m in t.comparison.metrics if m.metric == "strict_pass")
    assert strict.judge is not None and strict.without_judge is not None
    assert strict.without_judge.delta == pytest.approx(2 / 6 - 4 / 6)
    f = drops(result)["strict pass"]
    assert (f.rule, f.blocking, f.judge) == ("drop", True, None)
    assert not result.passed


def test_a_judge_rubrics_figure_that_drops_is_the_judges() -> None:
    th = {"selection.appropriate": JudgeThreshold(min=0.0)}
    s = suite(SuiteJudge(thresholds=th))
    base, cur = runs(s)

    def sel(ev: Evaluation, values: list[bool], fp: str) -> list[Judgement]:
        return [
            Judgement(
                case_id=r.case_id,
                target=r.target,
                record=record_digest(r),
                rubric="selection",
                judge=JUDGE,
                fingerprint=fp,
                status="ok",
                fields={"appropriate": v, "issue": "none"},
                reasoning="r",
            )
            for r, v in zip(ev.records, values, strict=True)
        ]

    base.judgements += sel(base, [True, True, True, True], "fp-sel")
    cur.judgements += sel(cur, [True, False, True, True], "fp-sel")
    result = gate(base, cur)
    [t] = result.targets
    assert t.comparison is not None
    [m] = t.comparison.judged
    assert (m.metric, m.baseline, m.current, m.judge) == (
        "selection.appropriate", 1.0, 0.75, "selection.appropriate",
    )  # fmt: skip
    f = next(f for f in t.findings if f.judge == "selection.appropriate")
    assert not f.blocking and "no calibration record for rubric 'selection'" in f.message
    cal = calibration(0.9, "fp-sel", "selection", "appropriate")
    f = next(f for f in gate(base, cur, cal).targets[0].findings if f.judge == m.judge)
    assert f.blocking and f.rule == "judge"

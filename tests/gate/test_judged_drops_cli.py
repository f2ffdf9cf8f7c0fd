"""`toolproof gate --baseline` and `toolproof compare` on runs whose figures a judge decided.

The judgements sit beside each run's records (judgements.jsonl), as
`toolproof judge` leaves them; the calibration record is the one the suite names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.gate.judged_runs import FP, SUITE_YAML, calibration, close, note, said
from toolproof.cli._app import app
from toolproof.judges import JUDGEMENTS_FILE, write_calibration

runner = CliRunner()



def _folder(d: Path, records: list, judgements: list) -> Path:  # type: ignore[type-arg]
    d.mkdir()
    (d / "records.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )
    (d / JUDGEMENTS_FILE).write_text(
        "".join(j.model_dump_json() + "\n" for j in judgements), encoding="utf-8"
    )
    return d / "records.jsonl"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "suite.yaml").write_text(SUITE_YAML, encoding="utf-8")
    b = [note("c0"), note("c1"), close("c2"), close("c3")]
    base = _folder(tmp_path / "base", b, [said(b[0], True, "fp-base"), said(b[1], True, "fp-base")])
    c = [note("c0"), note("c1"), close("c2", "add_note"), close("c3")]
    cur = _folder(tmp_path / "cur", c, [said(c[0], False), said(c[1], True)])
    return tmp_path, base, cur


def gate(d: Path, base: Path, cur: Path) -> tuple[int, str, str, dict]:  # type: ignore[type-arg]
    md, js = d / "gate.md", d / "gate.json"
    args = ["gate", str(cur), "--suite", str(d / "suite.yaml"), "--baseline", str(base)]
    args += ["--allow-partial", "--markdown", str(md), "--json", str(js)]
    res = runner.invoke(app, args, terminal_width=300)
    return res.exit_code, res.output, md.read_text("utf-8"), json.loads(js.read_text("utf-8"))


def test_the_judges_drop_is_advisory_and_the_tool_choice_drop_blocks(
    folders: tuple[Path, Path, Path],
) -> None:
    d, base, cur = folders
    code, out, md, data = gate(d, base, cur)
    text = " ".join(out.split())
    assert code == 1  # c2 called the wrong tool: that drop happens whatever the judge says
    assert "drop tool selection dropped 25.0 points" in text
    assert "advisory ⚖ judge-derived (argument_meaning.same_meaning, judge openai:judge-model)" in (
        text
    )
    assert "advisory: no calibration record for rubric 'argument_meaning'" in text
    assert "⚖ = decided by a judge (argument_meaning.same_meaning: model openai:judge-model, " \
        "uncalibrated: no calibration record" in text  # fmt: skip
    # the Markdown comment: the judge's drop under "Not blocking", with why
    blocking, notes = md.split("**Why the gate failed**")[1].split("**Not blocking**")
    assert "tool selection dropped" in blocking and "judge-derived" not in blocking
    assert "judge-derived" in notes and "no calibration record" in notes
    # the JSON: marked, with the reason
    [t] = data["targets"]
    judged = [f for f in t["findings"] if f["judge"]]
    assert judged and all(f["rule"] == "advisory" and not f["blocking"] for f in judged)
    assert all("no calibration record" in f["calibration"] for f in judged)
    assert t["judges"][0]["field"] == "argument_meaning.same_meaning"
    assert not t["judges"][0]["calibrated"]


def test_a_judge_calibrated_under_its_fingerprint_makes_its_drop_block(
    folders: tuple[Path, Path, Path],
) -> None:
    d, base, cur = folders
    # only the current judge is calibrated: the baseline judge's "same" answers still count
    write_calibration(d / "calibration.json", calibration(0.8))
    _, out, _, data = gate(d, base, cur)
    judged = [f for f in data["targets"][0]["findings"] if f["judge"]]
    assert judged and not any(f["blocking"] for f in judged)
    assert all("baseline judge advisory: judge fingerprint changed" in f["message"] for f in judged)
    # one judge for both runs, calibrated: the judge's drops block
    for folder in (base, cur):
        lines = (folder.parent / JUDGEMENTS_FILE).read_text("utf-8").replace("fp-base", FP)
        (folder.parent / JUDGEMENTS_FILE).write_text(lines, "utf-8")
    code, out, _, data = gate(d, base, cur)
    judged = [f for f in data["targets"][0]["findings"] if f["judge"]]
    assert judged and all(f["blocking"] and f["rule"] == "judge" for f in judged)
    assert "calibrated: κ 0.80 ≥ 0.60 on n=60" in " ".join(out.split())
    assert code == 1


def test_compare_marks_the_rows_a_judge_decided(folders: tuple[Path, Path, Path]) -> None:
    d, base, cur = folders
    js = d / "compare.json"
    args = ["compare", str(base), str(cur), "--suite", str(d / "suite.yaml"), "--json", str(js)]
    res = runner.invoke(app, args, terminal_width=300)
    assert res.exit_code == 0, res.output
    assert "⚖ strict pass" in res.output and "⚖ argument accuracy" in res.output
    assert "│ tool selection" in res.output
    assert "this run judged by model openai:judge-model" in " ".join(res.output.split())
    data = json.loads(js.read_text("utf-8"))
    by = {m["metric"]: m for m in data["comparisons"][0]["metrics"]}
    assert by["strict_pass"]["judge"] == "argument_meaning.same_meaning"
    # every answer against the drop: baseline 2/4 (its "same" read as different), this run 3/4
    assert by["strict_pass"]["without_judge"]["delta"] == pytest.approx(0.25)
    assert by["selection"]["judge"] is None

"""The CI example cannot let a cancelled, killed or failed run pass."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[1] / "examples" / "ci" / "github-actions.yml"


def _steps() -> list[dict[str, object]]:
    jobs = yaml.safe_load(WORKFLOW.read_text("utf-8"))["jobs"]
    return [step for job in jobs.values() for step in job["steps"]]


def test_no_step_swallows_an_exit_code() -> None:
    text = WORKFLOW.read_text("utf-8")
    assert "|| true" not in text and "|| :" not in text
    for step in _steps():
        assert not step.get("continue-on-error"), step


def test_the_smoke_gate_code_fails_the_job() -> None:
    runs = [s for s in _steps() if "toolproof gate runs/smoke" in str(s.get("run", ""))]
    assert len(runs) == 1 and "always()" in str(runs[0]["if"])
    last = [s for s in _steps() if "steps.gate.outputs.code" in str(s.get("run", ""))]
    assert last and "always()" in str(last[0]["if"]) and "exit" in str(last[0]["run"])


def test_the_scaffolded_workflow_swallows_no_exit_code() -> None:
    from toolproof.scaffold._templates import workflow

    text = workflow("suites/support")
    assert "|| true" not in text
    steps = yaml.safe_load(text)["jobs"]["smoke"]["steps"]
    gate = next(s for s in steps if "toolproof gate" in str(s.get("run", "")))
    assert "always()" in gate["if"]

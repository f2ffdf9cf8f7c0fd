"""The example GitHub Actions workflow: its install step works from a checkout, and
every offline command of both jobs runs (the model is the example's scripted one)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / "examples" / "ci" / "github-actions.yml"
POLICY = REPO / "examples" / "ci" / "gate-policy.yaml"
# A suite with no code of its own: the workflow runs pull requests without --allow-code.
EXAMPLE = REPO / "examples" / "testing"


def _workflow() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    return data


def _steps(job: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = _workflow()["jobs"][job]["steps"]
    return steps


def _online(script: str) -> bool:
    """Steps that need GitHub itself (gh, git fetch) are not run offline."""
    return bool(re.search(r"^\s*(gh |id=\$\(gh |git fetch )", script, re.M))


@pytest.mark.parametrize("job", ["smoke", "full"])
def test_each_job_installs_toolproof_from_the_checkout(job: str) -> None:
    steps = _steps(job)
    assert steps[0]["uses"].startswith("actions/checkout@")
    installs = [s["run"].strip() for s in steps if "run" in s and "pip install" in s["run"]]
    assert installs == ["pip install -e ."]
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] == "toolproof"  # what `pip install -e .` installs, from the checkout


def _offline_steps(
    job: str, tmp_path: Path, model: str, *, base: str | None = None, suite: str | None = None
) -> tuple[list[tuple[str, int, str]], Path]:
    """Run every offline step of ``job`` in ``tmp_path`` (the checkout); (name, exit code,
    stderr) of each step run, and the file of the step outputs. ``base``: the checkout is
    a git repository whose ``origin`` (a local one) has that branch: the step that takes
    the config and the gate policy from the base branch runs too."""
    outputs = tmp_path / "github_output"
    outputs.touch()
    env = {
        **os.environ,
        "SUITE": suite or str(EXAMPLE / "suite.yaml"),
        "MODEL": model,
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("OPENAI_API_KEY", None)
    (tmp_path / "runner-temp").mkdir()
    if base is None:
        # What the (online) base-branch step leaves when the base has no toolproof.yaml,
        # and the example's policy.
        (tmp_path / "runner-temp" / "toolproof.yaml").write_text("{}\n")
        (tmp_path / "runner-temp" / "gate-policy.yaml").write_text(POLICY.read_text("utf-8"))
        env["GATE_POLICY"] = str(POLICY)
    ran: list[tuple[str, int, str]] = []
    for step in _steps(job):
        script = step.get("run")
        if script is None or "pip install" in script:
            continue
        if base is not None and script.startswith("git fetch --depth 1 origin"):
            script = script.replace("${{ github.base_ref }}", base)
        elif _online(script):
            continue
        if "${{" in script:
            code = _output(outputs, "code")
            script = script.replace("${{ steps.gate.outputs.code }}", code)
            script = script.replace("${{ steps.gate.outputs.code || 2 }}", code or "2")
            if "steps.gate.outputs.code != '0'" in str(step.get("if")) and code == "0":
                continue  # the step's condition is false: the gate passed
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        ran.append((str(step.get("name")), result.returncode, result.stderr[-2000:]))
    return ran, outputs


@pytest.mark.parametrize("job", ["smoke", "full"])
def test_every_offline_command_of_the_job_runs(job: str, tmp_path: Path) -> None:
    ran, outputs = _offline_steps(job, tmp_path, f"scripted:{EXAMPLE / 'script.yaml'}")
    assert len(ran) >= 2, ran
    for name, code, stderr in ran:
        assert code == 0, f"{name}: {stderr}"
    # everything the gate reads and writes is outside the checkout
    out = tmp_path / "runner-temp" / "toolproof"
    report = out / "toolproof.md"
    assert report.is_file() and report.stat().st_size > 0
    assert (out / "toolproof.xml").is_file() and (out / "toolproof.json").is_file()
    assert not (tmp_path / "runs").exists() and not (tmp_path / "toolproof.md").exists()
    if job == "smoke":
        assert _output(outputs, "code") == "0"


def test_a_run_folder_committed_in_the_pull_request_is_never_gated(tmp_path: Path) -> None:
    """The pull request commits a passing run folder and a passing baseline where the old
    workflow wrote and read them; the model it runs fails. The gate fails."""
    for folder in ("runs/smoke", "baseline"):
        (tmp_path / folder).mkdir(parents=True)
    passing = subprocess.run(
        [sys.executable, "-m", "toolproof", "run", str(EXAMPLE / "suite.yaml"), "-m",
         f"scripted:{EXAMPLE / 'script.yaml'}", "--tags", "smoke", "-n", "3", "-q",
         "--no-store", "-o", str(tmp_path / "passing")],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert passing.returncode == 0, passing.stderr
    for name in ("records.jsonl", "manifest.json"):
        data = (tmp_path / "passing" / name).read_text()
        (tmp_path / "baseline" / name).write_text(data)
        if name == "records.jsonl":
            (tmp_path / "runs" / "smoke" / name).write_text(data)
    bad = tmp_path / "bad.yaml"
    bad.write_text('default: {text: "I will not look that up."}\n')
    ran, outputs = _offline_steps("smoke", tmp_path, f"scripted:{bad}")
    assert _output(outputs, "code") == "1"
    assert [(name, code) for name, code, _ in ran if code] == [("Fail unless the gate passed", 1)]


def _output(path: Path, name: str) -> str:
    values = [
        line.split("=", 1)[1]
        for line in path.read_text().splitlines()
        if line.startswith(f"{name}=")
    ]
    assert values, f"the gate step wrote no {name}= line"
    return values[-1]


def _all_steps() -> list[dict[str, object]]:
    """Every step of every job: the CI example cannot let a cancelled or failed run pass."""
    jobs = yaml.safe_load(WORKFLOW.read_text("utf-8"))["jobs"]
    return [step for job in jobs.values() for step in job["steps"]]


def test_no_step_swallows_an_exit_code() -> None:
    text = WORKFLOW.read_text("utf-8")
    assert "|| true" not in text and "|| :" not in text
    for step in _all_steps():
        assert not step.get("continue-on-error"), step


def test_the_smoke_gate_code_fails_the_job() -> None:
    runs = [s for s in _all_steps() if 'toolproof gate "$out/smoke"' in str(s.get("run", ""))]
    assert len(runs) == 1 and "always()" in str(runs[0]["if"])
    last = [s for s in _all_steps() if "steps.gate.outputs.code" in str(s.get("run", ""))]
    assert last and "always()" in str(last[0]["if"]) and "exit" in str(last[0]["run"])


def test_the_scaffolded_workflow_swallows_no_exit_code() -> None:
    from toolproof.scaffold._templates import workflow

    text = workflow("suites/support")
    assert "|| true" not in text
    steps = yaml.safe_load(text)["jobs"]["smoke"]["steps"]
    gate = next(s for s in steps if "toolproof gate" in str(s.get("run", "")))
    assert "always()" in gate["if"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd, check=True, capture_output=True, timeout=60,
    )  # fmt: skip


def test_the_gate_policy_comes_from_the_base_branch(tmp_path: Path) -> None:
    """The pull request lowers its suite's thresholds and its copy of the gate policy to
    nothing; the gate holds the run to the base branch's policy, and fails the model."""
    origin, checkout = tmp_path / "origin.git", tmp_path / "checkout"
    checkout.mkdir()
    suite = yaml.safe_load((EXAMPLE / "suite.yaml").read_text("utf-8"))
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    _git(checkout, "init", "-q", "-b", "main")
    (checkout / "suite.yaml").write_text(yaml.safe_dump(suite))
    (checkout / "gate-policy.yaml").write_text(POLICY.read_text("utf-8"))
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "base")
    _git(checkout, "remote", "add", "origin", str(origin))
    _git(checkout, "push", "-q", "origin", "main")
    # the pull request
    _git(checkout, "checkout", "-q", "-b", "pr")
    zero = {"default": {"selection": 0, "strict_pass": 0, "arguments": 0}}
    (checkout / "suite.yaml").write_text(yaml.safe_dump({**suite, "thresholds": zero}))
    (checkout / "gate-policy.yaml").write_text(yaml.safe_dump({"thresholds": zero}))
    _git(checkout, "commit", "-q", "-am", "lower the bar")
    bad = tmp_path / "bad.yaml"  # answers the greeting, never looks the order up
    bad.write_text('default: {text: "Hello!"}\n')
    os.environ["GATE_POLICY"] = "gate-policy.yaml"
    try:
        ran, outputs = _offline_steps(
            "smoke", checkout, f"scripted:{bad}", base="main", suite="suite.yaml"
        )
    finally:
        del os.environ["GATE_POLICY"]
    temp = checkout / "runner-temp"
    taken = (temp / "gate-policy.yaml").read_text("utf-8")
    assert taken == POLICY.read_text("utf-8")  # the base branch's, not the pull request's
    assert _output(outputs, "code") == "1"
    assert [(name, code) for name, code, _ in ran if code] == [("Fail unless the gate passed", 1)]
    # with the pull request's own policy the same run would have passed
    lowered = subprocess.run(
        [sys.executable, "-m", "toolproof", "gate", str(temp / "toolproof" / "smoke"),
         "--suite", "suite.yaml", "--policy", "gate-policy.yaml", "--no-store"],
        cwd=checkout, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert lowered.returncode == 0, lowered.stdout + lowered.stderr


def test_the_docs_show_the_example_commands() -> None:
    """docs/gate-integrity.md shows the smoke job's base-branch and gate steps as written."""
    docs = (REPO / "docs" / "gate-integrity.md").read_text("utf-8")
    for step in _steps("smoke"):
        name = str(step.get("name"))
        if name in ("Take the config and the gate policy from the base branch", "Gate"):
            script = str(step["run"]).rstrip("\n")
            assert script in docs, f"docs/gate-integrity.md does not show the step {name!r}"
    assert "--policy" in docs and "GATE_POLICY" in docs


def test_the_scaffolded_workflow_takes_the_gate_policy_from_the_base_branch(
    tmp_path: Path,
) -> None:
    """`toolproof init`'s workflow: the policy is the base branch's SUITE/gate-policy.yaml,
    or toolproof's defaults while the base has none; never the pull request's."""
    from toolproof.scaffold._templates import workflow

    steps = yaml.safe_load(workflow("suites/support"))["jobs"]["smoke"]["steps"]
    take = next(s for s in steps if "gate policy from the base branch" in str(s.get("name")))
    gate = next(s for s in steps if "toolproof gate" in str(s.get("run", "")))
    assert '--policy "$RUNNER_TEMP/gate-policy.yaml"' in gate["run"]
    assert "--max-infra-errors" not in gate["run"]  # the policy holds the allowance
    origin, checkout = tmp_path / "origin.git", tmp_path / "checkout"
    (checkout / "suites" / "support").mkdir(parents=True)
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    _git(checkout, "init", "-q", "-b", "main")
    (checkout / "suites" / "support" / "suite.yaml").write_text("suite: s\n")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "base without a policy")
    _git(checkout, "remote", "add", "origin", str(origin))
    _git(checkout, "push", "-q", "origin", "main")
    _git(checkout, "checkout", "-q", "-b", "pr")
    lowered = "thresholds: {default: {strict_pass: 0}}\n"
    (checkout / "suites" / "support" / "gate-policy.yaml").write_text(lowered)
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "the pull request brings its own policy")
    temp = tmp_path / "runner-temp"

    def take_policy() -> str:
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir()
        env = {**os.environ, "RUNNER_TEMP": str(temp), "BASE_REF": "main",
               "SUITE": "suites/support"}  # fmt: skip
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", take["run"]],
            cwd=checkout, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return (temp / "gate-policy.yaml").read_text()

    assert take_policy() == "max_infra_errors: 5%\n"  # the base has none: the defaults
    _git(checkout, "checkout", "-q", "main")
    strict = "thresholds: {default: {strict_pass: 0.9}}\nmax_infra_errors: 5%\n"
    (checkout / "suites" / "support" / "gate-policy.yaml").write_text(strict)
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "the base's policy")
    _git(checkout, "push", "-q", "origin", "main")
    _git(checkout, "checkout", "-q", "pr")
    assert take_policy() == strict  # the base branch's, not the pull request's


def test_the_demo_script_gates_the_flaky_candidate_through_and_the_regressed_one_not(
    tmp_path: Path,
) -> None:
    """examples/ci/demo.sh, as docs/gate.md offers it: exit 0 for the flaky candidate,
    1 for the regressed one (without --allow-code every run and gate was refused)."""
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "TOOLPROOF_STORE": "off",
        "COLUMNS": "160",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    out = subprocess.run(
        ["sh", str(REPO / "examples" / "ci" / "demo.sh"), str(tmp_path / "demo")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "gate flaky: exit code 0" in out.stdout, out.stdout + out.stderr
    assert "gate regressed: exit code 1" in out.stdout, out.stdout + out.stderr
    assert "new critical failure\\: cancel-after-yes" in (tmp_path / "demo" / "regressed.md").read_text()

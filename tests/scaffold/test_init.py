"""``toolproof init``: scaffold, validate, then a scripted run that writes a report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.cli.cli_support import toolproof
from toolproof.importers import import_tools
from toolproof.scaffold import TODO_TAG, scaffold_suite, unfinished
from toolproof.scaffold._templates import example_args
from toolproof.suite import load_suite_checked

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "importers" / "data"


def _script_for(suite_dir: Path) -> dict[str, object]:
    """The right answer to every template, as a scripted model's script."""
    loaded, _ = load_suite_checked(suite_dir)
    cases: dict[str, object] = {}
    for case in loaded.suite.cases:
        call = case.expect.call
        if isinstance(call, str):
            tool = loaded.suite.tool(call)
            assert tool is not None
            cases[case.id] = {"tool_calls": [{"name": call, "arguments": example_args(tool)}]}
        else:
            cases[case.id] = {"text": "Which pet do you mean? Please give me its name."}
    return {"model": "scripted-init", "cases": cases}


def test_init_validate_then_a_scripted_run(tmp_path: Path) -> None:
    suite_dir = tmp_path / "pets"
    out = toolproof("init", str(suite_dir), "--tools", str(DATA / "petstore.yaml"))
    assert out.returncode == 0, out.stderr
    assert "scaffolded a suite with 8 tool(s)" in out.stdout
    for name in (
        "suite.yaml",
        "toolproof.schema.json",
        ".gitignore",
        ".github/workflows/toolproof.yml",
    ):
        assert (suite_dir / name).is_file(), name
    text = (suite_dir / "suite.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=toolproof.schema.json\n")
    assert "# The system prompt" in text

    checked = toolproof("validate", str(suite_dir))
    assert checked.returncode == 0, checked.stderr
    todo = [line for line in checked.stdout.splitlines() if line.startswith("todo: ")]
    assert len(todo) == 10  # 8 tools, one no-call case, one clarification case
    assert "10 unfinished case template(s)" in checked.stdout

    script = tmp_path / "script.json"
    script.write_text(json.dumps(_script_for(suite_dir)))
    run = toolproof(
        "run",
        str(suite_dir),
        "--model",
        f"scripted:{script}",
        "--quiet",
        "--out",
        str(tmp_path / "run"),
    )
    assert run.returncode == 0, run.stderr
    assert "toolproof report" in run.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    strict = summary["targets"][f"scripted:{script}"]["strict_pass"]
    assert (strict["k"], strict["n"]) == (10, 10)


def test_templates_cover_each_tool_no_call_and_clarification(tmp_path: Path) -> None:
    imported = import_tools(str(DATA / "anthropic.yaml"))
    scaffold_suite(tmp_path, imported)
    loaded, errors = load_suite_checked(tmp_path)
    assert errors == []
    cases = {c.id: c for c in loaded.suite.cases}
    assert list(cases) == [
        "get_weather-call",
        "create_event-call",
        "no-call",
        "clarify-get_weather",
    ]
    assert cases["get_weather-call"].expect.call == "get_weather"
    assert cases["no-call"].expect.resolved_kind == "text"
    clarify = cases["clarify-get_weather"]
    assert clarify.expect.resolved_kind == "clarify"
    assert clarify.expect.forbidden == ["get_weather"]
    assert "leaves out location" in (clarify.prompt or "")
    assert all(TODO_TAG in c.tags and "smoke" in c.tags for c in cases.values())
    assert [t.name for t in loaded.suite.tools] == ["get_weather", "create_event"]


def test_a_case_stops_being_unfinished_when_its_tag_is_removed(tmp_path: Path) -> None:
    scaffold_suite(tmp_path, import_tools(str(DATA / "anthropic.yaml")))
    path = tmp_path / "suite.yaml"
    loaded, _ = load_suite_checked(tmp_path)
    assert len(unfinished(loaded)) == 4
    first = unfinished(loaded)[0]
    assert first.startswith(f"{path}:") and "'get_weather-call'" in first
    text = path.read_text().replace("tags: [todo, smoke]", "tags: [smoke]", 1)
    path.write_text(text)
    loaded, _ = load_suite_checked(tmp_path)
    assert [line.split("case ")[1].split(" ")[0] for line in unfinished(loaded)] == [
        "'create_event-call'",
        "'no-call'",
        "'clarify-get_weather'",
    ]


def test_without_tools_and_no_terminal_uses_an_example_tool(tmp_path: Path) -> None:
    out = toolproof("init", str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    assert "an example tool" in out.stdout
    checked = toolproof("validate", str(tmp_path / "s"))
    assert checked.returncode == 0, checked.stderr
    assert "3 unfinished case template(s)" in checked.stdout


def test_refuses_to_overwrite_a_suite(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("suite: mine\n")
    out = toolproof("init", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"error: {tmp_path}/suite.yaml: a suite is already there (--force to overwrite)"
    ]
    assert (tmp_path / "suite.yaml").read_text() == "suite: mine\n"


def test_workflow_goes_to_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    scaffold_suite(tmp_path / "suites" / "pets", None)
    workflow = (tmp_path / ".github" / "workflows" / "toolproof.yml").read_text()
    assert "SUITE: suites/pets" in workflow
    assert "--tags smoke" in workflow
    assert yaml.safe_load(workflow)["jobs"]["smoke"]["runs-on"] == "ubuntu-latest"
    assert not (tmp_path / "suites" / "pets" / ".github").exists()


def test_bad_tools_source_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text('[{"name": "a", "input_schema": 3}]')
    out = toolproof("init", str(tmp_path / "s"), "--tools", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"error: {bad}:1:16: [0].input_schema: the parameters schema must be a mapping"
    ]
    assert not (tmp_path / "s").exists()


def _workflow_of(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(
        (root / ".github" / "workflows" / "toolproof.yml").read_text()
    )
    return data


def test_the_workflow_installs_toolproof_the_way_readme_says(tmp_path: Path) -> None:
    """toolproof is not on the package index: the install is one setting, from a checkout."""
    (tmp_path / ".git").mkdir()
    scaffold_suite(tmp_path / "suites" / "pets", None)
    flow = _workflow_of(tmp_path)
    assert flow["env"]["TOOLPROOF_INSTALL"] == "pip install -e ./toolproof"
    runs = [s.get("run", "") for s in flow["jobs"]["smoke"]["steps"]]
    assert not any("pip install toolproof" in r for r in runs)  # not published there
    installs = [r for r in runs if "TOOLPROOF_INSTALL" in r]
    assert installs == ['eval "$TOOLPROOF_INSTALL"']
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e" in readme and "not published on a package index" in readme


def test_init_takes_the_install_command(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    command = 'pip install "toolproof @ git+https://git.example/me/toolproof@v1"'
    out = toolproof("init", str(tmp_path / "s"), "--ci-install", command)
    assert out.returncode == 0, out.stderr
    assert _workflow_of(tmp_path)["env"]["TOOLPROOF_INSTALL"] == command


def test_every_offline_command_of_the_generated_workflow_runs(tmp_path: Path) -> None:
    """The steps run as the runner would (bash -e, the workflow's env), in the checkout, after
    the cases are filled in: all but the install (toolproof is installed here already)."""
    (tmp_path / ".git").mkdir()
    suite_dir = tmp_path / "suites" / "pets"
    out = toolproof("init", str(suite_dir), "--tools", str(DATA / "petstore.yaml"))
    assert out.returncode == 0, out.stderr
    text = (suite_dir / "suite.yaml").read_text().replace("[todo, smoke]", "[smoke]")
    (suite_dir / "suite.yaml").write_text(text)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_script_for(suite_dir)))
    flow = _workflow_of(tmp_path)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        "TOOLPROOF_STORE": os.environ.get("TOOLPROOF_STORE", "off"),
        **{k: str(v) for k, v in flow["env"].items() if "${{" not in str(v)},
        "MODEL": f"scripted:{script}",
        "RUNNER_TEMP": str(temp),
        "BASE_REF": "",  # workflow_dispatch: no base branch
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
    }
    ran = []
    for step in flow["jobs"]["smoke"]["steps"]:
        command = step.get("run")
        if command is None or "TOOLPROOF_INSTALL" in command:
            continue
        assert "${{" not in command  # every value reaches the shell through env
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{step.get('name', command)}: {done.stderr[-2000:]}"
        ran.append(step.get("name", command))
    assert len(ran) == 4, ran
    assert (temp / "toolproof" / "smoke" / "manifest.json").is_file()
    assert (temp / "toolproof" / "toolproof.md").stat().st_size > 0
    assert not (tmp_path / "runs").exists()  # nothing written into the checkout

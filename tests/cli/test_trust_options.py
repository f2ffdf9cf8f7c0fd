"""--allow-code, the config's allow_code and max_file_mib, and validate listing every problem."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.errors import UserError
from toolproof.run import load_config, resolve_settings, suite_models

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"
runner = CliRunner()


def _invoke(args: list[str]) -> tuple[int, str]:
    res = runner.invoke(app, args)
    if isinstance(res.exception, UserError):
        return 2, f"error: {res.exception}"
    return res.exit_code, res.output


def test_the_example_needs_leave_to_run_its_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _invoke(["validate", str(SUPPORT)])
    assert code == 2 and "environment.tools: 'env/orders.py' is Python from the suite" in out
    assert _invoke(["validate", str(SUPPORT), "--allow-code"])[0] == 0
    (tmp_path / "mine.yaml").write_text("allow_code: true\n")
    assert _invoke(["validate", str(SUPPORT), "--config", "mine.yaml"])[0] == 0  # the user's own
    (tmp_path / "other.yaml").write_text("allow_code: false\n")
    assert _invoke(["validate", str(SUPPORT), "--config", "other.yaml"])[0] == 2


def test_run_refuses_multistep_cases_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = SUPPORT / "script.yaml"
    args = ["run", str(SUPPORT), "-m", f"scripted:{script}", "-q", "--no-cache", "-o", "r"]
    code, out = _invoke([*args, "--tags", "multistep"])
    assert code == 2 and "--allow-code" in out and "needed by multi-step case" in out
    # located like validate's error: the suite file, the line of environment.tools, the field
    line = (SUPPORT / "suite.yaml").read_text().splitlines().index("  tools: env/orders.py") + 1
    assert f"suite.yaml:{line}:3: environment.tools:" in " ".join(out.split()), out
    assert not (tmp_path / "r").exists()
    # single-step cases run no suite code, so they need no leave
    assert _invoke([*args, "--tags", "selection"])[0] == 0


def test_validate_lists_every_problem_each_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "suite.yaml").write_text(
        "suite: x\n"
        "timezon: UTC\n"
        "tools:\n"
        "  - name: t\n"
        "    parameters: {type: object, properties: {a: {type: int}}}\n"
        "cases:\n"
        "  - id: a\n"
        "    promt: hi\n"
        "  - id: b\n"
        "    prompt: hi\n"
        "    max_steps: 0\n"
        "system_file: /etc/passwd\n"
        'settings: {"*": {base_url: "http://x.invalid"}}\n'
    )
    res = runner.invoke(app, ["validate", str(tmp_path)])
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.startswith("error:")]
    where = str(tmp_path / "suite.yaml")
    assert all(line.startswith(f"error: {where}:") for line in lines), lines
    for fragment in (
        ":2:1: timezon: unknown key",
        ":8:5: cases[0].promt: unknown key",
        ":5:49: tools[0].parameters.properties.a.type: unknown JSON Schema type 'int'",
        ":11:5: cases[1].max_steps:",
        ":12:1: system_file: '/etc/passwd' is an absolute path",
        ":13:18: settings.*.base_url:",
    ):
        assert any(fragment in line for line in lines), (fragment, lines)
    assert f"{len(lines)} problems in" in res.output


def test_routing_settings_still_work_from_the_users_config(tmp_path: Path) -> None:
    config = tmp_path / "toolproof.yaml"
    config.write_text(
        'models:\n  openai-compatible:x: {base_url: "http://127.0.0.1:8000/v1", '
        "api_key_env: MY_KEY}\nmax_file_mib: 2\n"
    )
    loaded = load_config(config)
    settings = resolve_settings("openai-compatible:x", config=loaded)
    assert settings.base_url == "http://127.0.0.1:8000/v1" and settings.api_key_env == "MY_KEY"
    assert loaded.max_file_bytes == 2 << 20
    with pytest.raises(UserError, match="base_url"):
        suite_models({"*": {"base_url": "http://x.invalid"}}, "suite.yaml")


def test_scoring_gold_actions_without_leave_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _invoke(["score", str(SUPPORT), str(SUPPORT / "records.jsonl")])
    line = (SUPPORT / "suite.yaml").read_text().splitlines().index("  tools: env/orders.py") + 1
    assert code == 2 and "gold actions" in out, out
    assert f"suite.yaml:{line}:3: environment.tools:" in " ".join(out.split()), out

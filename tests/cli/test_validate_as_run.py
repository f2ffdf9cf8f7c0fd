"""`validate` refuses everything `run` refuses in a suite, with the same words."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.cli.cli_support import toolproof

SUITE = {
    "format": 1,
    "suite": "settings",
    "tools": [{"name": "lookup_order", "parameters": {"type": "object", "properties": {}}}],
    "cases": [{"id": "c", "prompt": "Where is ORD-1?", "expect": {"call": "lookup_order"}}],
}
SCRIPT = {"default": {"tool_calls": [{"name": "lookup_order", "arguments": {}}]}}


@pytest.mark.parametrize(
    "settings",
    [
        '{"*": {timeout_s: .inf}}',  # run accepted it, then gate refused the run's manifest
        '{"*": {temperature: .nan}}',
        '{"*": {attempt_seconds: -.inf}}',
        '{"*": {BASE_URL: "http://127.0.0.1:9/v1"}}',
        '{models: {"*": {"base_url\\u200b": "http://127.0.0.1:9/v1"}}}',
        '{"scripted:s.yaml": {rpm: -1}}',
    ],
)
def test_validate_refuses_what_run_refuses(tmp_path: Path, settings: str) -> None:
    text = yaml.safe_dump(SUITE, sort_keys=False) + f"settings: {settings}\n"
    (tmp_path / "suite.yaml").write_text(text)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SCRIPT))
    run = toolproof("run", "suite.yaml", "-m", "scripted:s.yaml", "-o", "r", "-q", cwd=tmp_path)
    validate = toolproof("validate", "suite.yaml", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert validate.returncode == 2, validate.stdout + validate.stderr
    assert "Traceback" not in run.stderr + validate.stderr
    assert "settings" in validate.stderr
    refused = run.stderr.strip().splitlines()[-1]
    assert refused in validate.stderr  # the same problem, in the same words


def test_a_timeout_given_as_a_flag_must_be_finite(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SCRIPT))
    args = ("run", "suite.yaml", "-m", "scripted:s.yaml", "-o", "r", "-q", "--timeout", "inf")
    done = toolproof(*args, cwd=tmp_path)
    assert done.returncode == 2 and "finite" in done.stderr, done.stderr

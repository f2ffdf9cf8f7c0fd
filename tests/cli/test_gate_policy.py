"""``toolproof gate --policy FILE``: the thresholds and the gate's settings from a file
apart from the suite, so a pull request that lowers its suite's thresholds gains nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.cli.cli_support import toolproof

SUITE = {
    "format": 1,
    "suite": "policy",
    "tools": [
        {
            "name": "lookup_order",
            "description": "Get one order by its ID.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        }
    ],
    "cases": [
        {"id": "lookup", "prompt": "Where is ORD-1?", "expect": {"call": "lookup_order"}},
        {"id": "greeting", "prompt": "Hi!", "expect": {"kind": "text"}},
    ],
    # what a pull request writes to let a failing model through
    "thresholds": {"default": {"selection": 0, "strict_pass": 0, "arguments": 0}},
}
#: Passes the lookup, calls a tool for the greeting: strict pass 50%.
HALF = {"default": {"tool_calls": [{"name": "lookup_order", "raw_arguments": '{"order_id": "1"}'}]}}


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("policy")
    (root / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    (root / "half.yaml").write_text(yaml.safe_dump(HALF))
    done = toolproof(
        "run", "suite.yaml", "-m", "scripted:half.yaml", "-n", "2", "-o", "run", "-q",
        "--no-store", cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root


def _gate(root: Path, *more: str) -> tuple[int, str]:
    done = toolproof("gate", "run", "--no-store", *more, cwd=root)
    return done.returncode, done.stdout + done.stderr


def test_the_suites_lowered_thresholds_pass_without_a_policy(run_folder: Path) -> None:
    code, text = _gate(run_folder)
    assert code == 0, text


def test_the_policy_replaces_the_suites_thresholds(run_folder: Path) -> None:
    (run_folder / "strict.yaml").write_text("thresholds:\n  default: {strict_pass: 0.9}\n")
    code, text = _gate(run_folder, "--policy", "strict.yaml")
    assert code == 1, text
    assert "strict pass" in text.lower() and "FAILED" in text


def test_fields_the_policy_leaves_out_take_the_defaults_not_the_suites(run_folder: Path) -> None:
    (run_folder / "empty.yaml").write_text("{}\n")
    code, text = _gate(run_folder, "--policy", "empty.yaml")
    assert code == 1, text  # strict pass ≥ 0.85 by default


def test_the_policy_sets_the_infrastructure_allowance(run_folder: Path) -> None:
    (run_folder / "p.yaml").write_text(
        "thresholds: {default: {strict_pass: 0, arguments: 0}}\nmax_infra_errors: 5%\nmargin: 0.1\n"
    )
    code, text = _gate(run_folder, "--policy", "p.yaml")
    assert code == 0, text
    code, text = _gate(run_folder, "--policy", "p.yaml", "--max-infra-errors", "50%")
    assert code == 2
    assert "--max-infra-errors is set by the gate policy p.yaml too" in text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("thresholds:\n  default: {strict_pas: 0.9}\n", "bad.yaml:2"),
        ("thresholds:\n  everything: {strict_pass: 0.9}\n", "bad.yaml:2"),
        ("margin: 2\n", "bad.yaml:1"),
        ("max_infra_errors: 3\n", "bad.yaml:1"),
        ("margin: 0.1\nmargin: 0.5\n", "bad.yaml:2"),
        ("- 1\n", "bad.yaml"),
    ],
)
def test_a_bad_policy_is_a_located_error(run_folder: Path, text: str, where: str) -> None:
    (run_folder / "bad.yaml").write_text(text)
    code, out = _gate(run_folder, "--policy", "bad.yaml")
    assert code == 2, out
    assert f"error: {where}" in out and "Traceback" not in out

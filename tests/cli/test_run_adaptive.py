"""`toolproof run --repeats auto` from the command line: options, report lines, gate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from toolproof.cli import main

SUITE = {
    "format": 1,
    "suite": "mini",
    "tools": [{"name": "lookup_order", "parameters": {"type": "object", "properties": {}}}],
    "cases": [
        {"id": f"case-{i}", "prompt": f"Where is ORD-{i:06d}?", "expect": {"call": "lookup_order"}}
        for i in range(6)
    ],
    # thresholds six cases decide after two rounds: the per-case rule then applies
    "thresholds": {"default": {"strict_pass": 0.1, "selection": 0.1, "arguments": 0.1}},
}
CALL = {"tool_calls": [{"name": "lookup_order", "arguments": {}}]}
ASK = {"text": "Which order do you mean?"}
#: case-0 flaky (stops after 2), case-1 never calls (runs 5), the rest always call (run 5)
SCRIPT = {"default": CALL, "cases": {"case-0": [CALL, ASK], "case-1": ASK}}


def toolproof(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["toolproof", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(SCRIPT))
    return tmp_path


def test_repeats_auto_reports_what_it_saved(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "suite", "-m", "scripted:script.yaml", "--repeats", "auto", "-q"]
    code = toolproof(monkeypatch, *args, "-o", "r", "--no-store")
    out = capsys.readouterr().out
    assert code == 0
    text = " ".join(out.split())
    assert "27 of 30 planned attempts (3 saved, 10%); 1 cases stopped early (mixed 1)" in text
    assert "rates read over the 2 full rounds" in text
    manifest = json.loads((workdir / "r" / "manifest.json").read_text())
    assert manifest["repeats"] == 5 and manifest["schedule"]["min_repeats"] == 2
    code = toolproof(monkeypatch, "gate", "r", "--no-store", "--markdown", "pr.md")
    gate = " ".join(capsys.readouterr().out.split())
    comment = (workdir / "pr.md").read_text()
    assert "Adaptive repeats: 27 of 30 planned attempts (3 saved, 10%)" in comment
    assert "- all: strict pass passed at confidence" in comment
    assert code == 0  # strict pass 9 of 12 over the full rounds, above 10%
    assert "adaptive repeats 27 of 30 planned attempts" in gate
    assert "all: strict pass passed at confidence" in gate


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeats", "0"], "--repeats must be at least 1"),
        (["--repeats", "often"], "give a number of attempts, or auto"),
        (["--repeats", "3", "--until-decided"], "--until-decided needs --repeats auto"),
        (["--repeats", "auto", "--min-repeats", "4", "--max-repeats", "3"], "is more than"),
    ],
)
def test_bad_repeats_are_one_line_and_exit_2(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code = toolproof(monkeypatch, "run", "suite", "-m", "scripted:script.yaml", "-q", *args)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err

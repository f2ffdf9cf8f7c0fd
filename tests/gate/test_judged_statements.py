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

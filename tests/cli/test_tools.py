"""``toolproof tools import``, run as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "importers" / "data"


def toolproof(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"},
        check=False,
    )


def test_import_writes_a_tools_file_and_reports_notes(tmp_path: Path) -> None:
    out = toolproof("tools", "import", str(DATA / "petstore.yaml"), "-o", str(tmp_path / "t.yaml"))
    assert out.returncode == 0, out.stderr
    assert "wrote 8 tool(s)" in out.stderr
    assert "warning: listPets: cookie parameter 'session' not carried" in out.stderr
    assert (tmp_path / "t.yaml").read_text().count("\n  - name: ") == 8
    (tmp_path / "suite.yaml").write_text("suite: s\ntools: t.yaml\ncases: []\n")
    assert toolproof("validate", str(tmp_path)).returncode == 0


def test_import_prints_to_stdout_without_out() -> None:
    out = toolproof("tools", "import", str(DATA / "anthropic.yaml"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# Imported by toolproof from ")
    assert "\ntools:\n  - name: get_weather\n" in out.stdout


def test_check_reports_drift_with_lines_and_exit_1(tmp_path: Path) -> None:
    toolproof("init", str(tmp_path), "--tools", str(DATA / "anthropic.yaml"))
    same = toolproof("tools", "import", str(DATA / "anthropic.yaml"), "--check", str(tmp_path))
    assert same.returncode == 0, same.stderr
    assert "no drift: the 2 tool(s)" in same.stdout
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite.read_text().replace("- celsius\n", "- kelvin\n", 1))
    drifted = toolproof("tools", "import", str(DATA / "anthropic.yaml"), "--check", str(tmp_path))
    assert drifted.returncode == 1
    (line, total) = [x for x in drifted.stderr.splitlines() if x.startswith(("drift:", "1 diff"))]
    assert line.startswith(f"drift: {suite}:")
    assert "tools[0].parameters.properties.unit.enum: get_weather: differs" in line
    assert '(suite: ["kelvin", "fahrenheit"], source: ["celsius", "fahrenheit"])' in line
    assert total.startswith("1 difference(s)")


def test_bad_source_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text("- type: function\n  function:\n    description: no name\n")
    out = toolproof("tools", "import", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"error: {bad}:2:3: [0].function.name: a tool needs a name (a non-empty string)"
    ]


def test_nothing_importable_is_exit_2(tmp_path: Path) -> None:
    only_builtin = tmp_path / "t.json"
    only_builtin.write_text('[{"type": "web_search"}]')
    out = toolproof("tools", "import", str(only_builtin))
    assert out.returncode == 2
    assert f"error: no tool imported from {only_builtin}" in out.stderr

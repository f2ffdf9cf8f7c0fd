"""report --html, run --html and view's guard on the address it binds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.cli_support import toolproof

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"


def test_run_and_report_write_the_same_html(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = tmp_path / "from-run.html"
    out = toolproof(
        "run",
        str(SUPPORT),
        "--model",
        f"scripted:{SUPPORT / 'script.yaml'}",
        "-q",
        "-o",
        str(run),
        "--html",
        str(first),
        "--allow-code",
    )
    assert out.returncode == 0, out.stderr
    second = tmp_path / "sub" / "from-report.html"
    out = toolproof("report", str(run), "--html", str(second), "--allow-code")
    assert out.returncode == 0, out.stderr
    assert f"wrote {second}" in out.stdout
    a, b = first.read_text(), second.read_text()
    assert a == b
    assert len(a.encode()) < 2_000_000
    assert 'gate <span class="pass">pass</span>' in a  # the scripted model passes every case


def test_report_of_a_records_file_needs_the_suite(tmp_path: Path) -> None:
    out = toolproof("report", str(SUPPORT / "records.jsonl"), "--html", str(tmp_path / "r.html"))
    assert out.returncode == 2
    assert "give the suite with --suite" in out.stderr and "Traceback" not in out.stderr
    out = toolproof(
        "report",
        str(SUPPORT / "records.jsonl"),
        "-s",
        str(SUPPORT),
        "--html",
        str(tmp_path / "r.html"),
        "--allow-code",
    )
    assert out.returncode == 0, out.stderr
    assert "lookup-not-search" in (tmp_path / "r.html").read_text()


def test_an_output_that_names_a_folder_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    records, suite = str(SUPPORT / "records.jsonl"), str(SUPPORT)
    for args in (
        ("report", records, "-s", suite, "--html", str(folder)),
        ("score", suite, records, "--no-failures", "--json", str(folder)),
    ):
        out = toolproof(*args, "--allow-code")
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr
        assert f"error: {folder}: '{folder}' is a folder, not a regular file" in out.stderr
    assert folder.is_dir() and not any(folder.iterdir())


def test_a_report_path_naming_a_runs_own_file_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    script = f"scripted:{SUPPORT / 'script.yaml'}"
    out = toolproof("run", str(SUPPORT), "-m", script, "-q", "-o", str(run), "--allow-code")
    assert out.returncode == 0, out.stderr
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    attempts = [
        ("gate", str(run), "--markdown", str(run / "records.jsonl")),
        ("gate", str(run), "--junit", str(run / "manifest.json")),
        ("gate", str(run), "--json", str(run / "summary.json")),
        ("report", str(run), "--html", str(run / "records.jsonl")),
        ("score", str(SUPPORT), str(run / "records.jsonl"), "--json", str(run / "events.jsonl")),
        ("run", str(SUPPORT), "-m", script, "-q", "-o", str(tmp_path / "new"),
         "--html", str(run / "records.jsonl")),
    ]  # fmt: skip
    for args in attempts:
        res = toolproof(*args, "--allow-code")
        assert res.returncode == 2, (args, res.stderr)
        assert "a report is never written over a run's own files" in res.stderr
        assert "Traceback" not in res.stderr
    assert not (tmp_path / "new").exists()  # refused before the run started
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_report_without_html_prints_the_terminal_report() -> None:
    out = toolproof("report", str(SUPPORT / "records.jsonl"), "-s", str(SUPPORT), "--allow-code")
    assert out.returncode == 0, out.stderr
    assert "strict pass" in out.stdout


def test_report_runs_no_suite_code_unless_allowed(tmp_path: Path) -> None:
    out = toolproof(
        "report",
        str(SUPPORT / "records.jsonl"),
        "-s",
        str(SUPPORT),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert out.returncode == 2
    assert "--allow-code" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "r.html").exists()


def test_view_refuses_runs_that_is_no_folder(tmp_path: Path) -> None:
    """A mistyped --runs is one line, as a missing store is, not a viewer of nothing."""
    (tmp_path / "file.txt").write_text("x")
    for runs, why in (("nope", "no such folder"), ("file.txt", "not a folder")):
        out = toolproof("view", "--runs", str(tmp_path / runs), "--port", "0", timeout=60)
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"--runs {tmp_path / runs}: {why}" in out.stderr
        assert "Traceback" not in out.stderr


def test_view_refuses_other_addresses_without_the_flag(tmp_path: Path) -> None:
    out = toolproof("view", "--runs", str(tmp_path), "--host", "0.0.0.0")
    assert out.returncode == 2
    assert "--allow-remote" in out.stderr and "Traceback" not in out.stderr


def test_view_serves_and_prints_the_url(tmp_path: Path) -> None:
    import re
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "toolproof", "view", "--runs", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        with urllib.request.urlopen(m[0]) as resp:
            assert resp.status == 200
            assert "No run folders found." in resp.read().decode()
    finally:
        proc.terminate()
        proc.wait(10)


def test_view_warns_when_binding_beyond_loopback(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolproof",
            "view",
            "--runs",
            str(tmp_path),
            "--port",
            "0",
            "--host",
            "::1",
            "--allow-remote",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://[::1]:" in line
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "warning: serving on ::1" in err

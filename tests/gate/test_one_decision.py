"""One gate decision, whoever asks: ``toolproof gate``, ``report --html``, the viewer, the
pytest plugin and the API give the same decision for the same run, judge rules included.

The run's judge threshold fails under a calibrated judge, so the decision turns on the
judge rules: a caller that left them out would say "passed".
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.judges.judges_support import record
from tests.judges.test_gate import SUITE, calibration, judgements
from toolproof.evaluate import load_run
from toolproof.gate import GateResult, run_gate
from toolproof.judges import write_calibration
from toolproof.run._manifest import Manifest, TargetEntry, write_manifest
from toolproof.suite import load_suite

pytestmark = pytest.mark.slow

Decision = list[tuple[str, bool, list[tuple[str, str, bool]]]]


def _complete_run(tmp_path: Path) -> Path:
    suite_path = tmp_path / "suite.yaml"
    suite_path.write_text(SUITE, encoding="utf-8")
    write_calibration(tmp_path / "calibration.json", calibration())
    run = tmp_path / "runs" / "run"
    run.mkdir(parents=True)
    lines = [
        record(f"c{i}", target="t", args={"order_id": f"ORD-10482{i}"}).model_dump_json()
        for i in range(2)
    ]
    (run / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run / "judgements.jsonl").write_text(
        "".join(j.model_dump_json() + "\n" for j in judgements([True, False])), encoding="utf-8"
    )
    suite = load_suite(suite_path)
    write_manifest(
        run,
        Manifest(
            run_id="one-decision",
            toolproof_version="test",
            suite_name=suite.name,
            suite_version=suite.version,
            suite_source=str(suite_path),
            suite_fingerprint=suite.fingerprint(),
            tools_fingerprint="t",
            targets=[TargetEntry(spec="t")],
            repeats=1,
            started_at=datetime.now(UTC),
            status="complete",
        ),
    )
    return run


def _decision(result: GateResult) -> Decision:
    return [
        (t.target, t.passed, [(f.rule, f.message, f.blocking) for f in t.findings])
        for t in result.targets
    ]


def _toolproof(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env=os.environ.copy(),
    )


def test_the_five_callers_give_one_decision(tmp_path: Path) -> None:
    from toolproof.cli._report import report_gate
    from toolproof.trust import Trust
    from toolproof.web import FolderSource
    from toolproof.web._run_index import RunCache

    run = _complete_run(tmp_path)

    # 1. the API
    api = run_gate(load_run(run))
    expected = _decision(api)
    assert api.exit_code == 1 and not api.passed
    [judged] = [f for f in api.targets[0].findings if f.judge == "selection.appropriate"]
    assert judged.blocking and judged.rule == "judge" and "calibrated: κ 0.80" in judged.message

    # 2. toolproof gate
    done = _toolproof("gate", str(run), "--json", str(tmp_path / "g.json"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    gate_json = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert [
        (
            t["target"],
            t["passed"],
            [(f["rule"], f["message"], f["blocking"]) for f in t["findings"]],
        )
        for t in gate_json["targets"]
    ] == expected

    # 3. report --html: the decision it embeds is run_gate's, and the page shows it
    assert _decision(report_gate(load_run(run))) == expected
    page_file = tmp_path / "r.html"
    done = _toolproof("report", str(run), "--html", str(page_file), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    page = html.unescape(page_file.read_text(encoding="utf-8"))
    assert judged.message in page

    # 4. the viewer, serving the folder of runs
    source = FolderSource(tmp_path / "runs", trust=Trust())
    [info] = source.runs()
    assert _decision(RunCache(source).get(info.run_id).gate) == expected

    # 5. the pytest plugin, over the same records
    plugin = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            "--toolproof-suite",
            str(tmp_path / "suite.yaml"),
            "--toolproof-records",
            str(run / "records.jsonl"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    out = " ".join(plugin.stdout.split())
    assert "toolproof gate: FAILED (exit 1)" in out, plugin.stdout + plugin.stderr
    blocking = [m for _, _, fs in expected for _, m, b in fs if b]
    assert blocking and all(" ".join(m.split()) in out for m in blocking), out

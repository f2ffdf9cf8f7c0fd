"""One pipeline: the same records give the same figures in every command.

The records file holds what ``--resume --retry-failed`` leaves behind (a
server error for an attempt, and later the model's answer for the same
attempt) and records that name no target.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.errors import SuiteError
from toolproof.evaluate import UNNAMED, evaluate, load_run
from toolproof.records import read_records
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Record

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
CODE = Trust(allow_code=True)  # the example's gold actions run its Python
runner = CliRunner()


@pytest.fixture(scope="module")
def records_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo records with no target, and a superseded server error for two attempts."""
    lines = []
    demo = [r for r in read_records(SUITE / "records.jsonl") if r.outcome.value == "ok"]
    superseded = {demo[0].case_id, demo[5].case_id}
    for record in demo:
        data = record.model_dump(mode="json", exclude_none=True)
        data.pop("target", None)
        if record.case_id in superseded:
            error = {"case_id": record.case_id, "attempt": 0, "outcome": "server_error"}
            lines.append(json.dumps(error))
        lines.append(json.dumps(data))
    path = tmp_path_factory.mktemp("pipeline") / "demo.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _figures(summary: dict) -> dict:
    keys = ("attempts", "scored", "infrastructure", "strict_pass", "selection", "arguments")
    return {k: summary[k] for k in keys}


def test_api_keeps_the_latest_record_and_names_unnamed_targets(records_file: Path) -> None:
    suite = load_suite(SUITE)
    ev = evaluate(suite, [records_file], trust=CODE)
    assert list(ev.targets) == ["demo"]  # the file's stem
    assert ev.superseded == 2
    summary = ev.targets["demo"].summary
    assert summary.infrastructure == {}
    assert summary.attempts == summary.scored == len(ev.targets["demo"].records)
    in_memory = evaluate(suite, read_records(records_file), trust=CODE)
    assert list(in_memory.targets) == [UNNAMED]
    assert in_memory.targets[UNNAMED].summary.strict_pass == summary.strict_pass


def test_every_command_gives_the_same_figures(records_file: Path, tmp_path: Path) -> None:
    suite = load_suite(SUITE)
    api = _figures(
        evaluate(suite, [records_file], trust=CODE).targets["demo"].summary.model_dump(mode="json")
    )

    score_json = tmp_path / "score.json"
    res = runner.invoke(
        app, ["score", str(SUITE), str(records_file), "--json", str(score_json), "--allow-code"]
    )
    assert res.exit_code == 0, res.output
    score = json.loads(score_json.read_text())["targets"]

    gate_json = tmp_path / "gate.json"
    res = runner.invoke(
        app,
        [
            "gate",
            str(records_file),
            "--suite",
            str(SUITE),
            "--json",
            str(gate_json),
            "--allow-code",
            "--allow-partial",  # a records file without manifest: completeness unknown
        ],
    )
    assert res.exit_code in (0, 1), res.output  # the demo model fails thresholds
    gate = {t["target"]: t["summary"] for t in json.loads(gate_json.read_text())["targets"]}

    compare_json = tmp_path / "compare.json"
    res = runner.invoke(
        app,
        [
            "compare",
            str(records_file),
            str(records_file),
            "--suite",
            str(SUITE),
            "--json",
            str(compare_json),
            "--allow-code",
        ],
    )
    assert res.exit_code == 0, res.output
    comparison = json.loads(compare_json.read_text())["comparisons"][0]
    compared = {m["metric"]: m["current"] for m in comparison["metrics"]}

    loaded = (
        load_run(records_file, suite=SUITE, trust=CODE)
        .targets["demo"]
        .summary.model_dump(mode="json")
    )

    assert list(score) == list(gate) == ["demo"]
    assert _figures(score["demo"]) == _figures(gate["demo"]) == _figures(loaded) == api
    assert api["infrastructure"] == {}
    rate = api["strict_pass"]
    assert compared["strict_pass"] == pytest.approx(rate["k"] / rate["n"])


def test_pytest_plugin_counts_the_same_cases(records_file: Path, tmp_path: Path) -> None:
    suite = load_suite(SUITE)
    summary = evaluate(suite, [records_file], trust=CODE).targets["demo"].summary
    failed = {f.case_id for f in summary.failures}
    assert summary.stability is not None
    scored = {c.case_id for c in summary.stability.per_case}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(tmp_path),
            f"--toolproof-suite={SUITE}",
            "--toolproof-allow-code",
            f"--toolproof-records={records_file}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    tail = proc.stdout.strip().splitlines()[-1]
    skipped = len(suite.cases) - len(scored)
    expected = f"{len(failed)} failed, {len(scored) - len(failed)} passed"
    assert tail.startswith(expected), proc.stdout[-2000:]
    if skipped:
        assert f"{skipped} skipped" in tail


def test_a_record_for_an_unknown_case_is_located(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"case_id": "lookup-exact-id"}\n{"case_id": "no-such-case"}\n')
    res = runner.invoke(app, ["score", str(SUITE), str(path)])
    assert isinstance(res.exception, SuiteError)  # printed as one line, exit 2, by main()
    assert str(res.exception) == f"{path}:2: case_id: record for unknown case 'no-such-case'"


def test_superseded_records_do_not_count_in_memory() -> None:
    suite = load_suite(SUITE)
    first = Record(case_id="lookup-exact-id", target="m", outcome="server_error")
    later = read_records(SUITE / "records.jsonl")[0].model_copy(update={"target": "m"})
    ev = evaluate(suite, [first, later], trust=CODE)
    assert ev.superseded == 1
    assert ev.targets["m"].summary.attempts == 1

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
runner = CliRunner()


def _run(tmp: Path, script: Path, name: str) -> Path:
    out = tmp / name
    args = ["run", str(SUITE), "-m", f"scripted:{script}", "--repeats", "3", "-q"]
    res = runner.invoke(app, [*args, "-o", str(out), "--no-cache", "--allow-code"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return {
        "base": _run(tmp, SUITE / "script.yaml", "base"),
        "flaky": _run(tmp, ROOT / "examples/ci/candidate-flaky.yaml", "flaky"),
        "bad": _run(tmp, ROOT / "examples/ci/candidate-regressed.yaml", "bad"),
    }


def test_gate_without_baseline_checks_thresholds(runs: dict[str, Path]) -> None:
    res = runner.invoke(app, ["gate", str(runs["base"]), "--allow-code"])
    assert res.exit_code == 0, res.output
    assert "gate PASSED" in res.output


def test_flaky_candidate_passes_only_when_significance_is_required(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    args = ["gate", str(runs["flaky"]), "--baseline", str(runs["base"]), "--allow-code"]
    assert runner.invoke(app, args).exit_code == 1  # pass^3 dropped 3 points
    md, junit, js = tmp_path / "c.md", tmp_path / "j.xml", tmp_path / "m.json"
    more = ["--require-significance", "--markdown", str(md), "--junit", str(junit)]
    res = runner.invoke(app, [*args, *more, "--json", str(js)])
    assert res.exit_code == 0, res.output
    assert "Flaky cases (2)" in md.read_text()
    cases = ET.parse(junit).getroot().iter("testcase")
    flaky = [c.get("name") for c in cases if c.find("failure") is not None]
    assert flaky == ["lookup-id-digits-only", "search-by-name"]
    data = json.loads(js.read_text())
    assert data["targets"][0]["summary"]["stability"]["flaky"] == [
        "lookup-id-digits-only",
        "search-by-name",
    ]


def test_regressed_candidate_fails(runs: dict[str, Path]) -> None:
    args = ["gate", str(runs["bad"]), "--baseline", str(runs["base"]), "--require-significance"]
    args.append("--allow-code")
    res = runner.invoke(app, args)
    assert res.exit_code == 1
    assert "new critical failure: cancel-after-yes" in res.output


def test_compare_shows_changed_cases(runs: dict[str, Path]) -> None:
    res = runner.invoke(app, ["compare", str(runs["base"]), str(runs["bad"]), "--allow-code"])
    assert res.exit_code == 0, res.output
    assert (
        "newly failing (3): cancel-after-yes, lookup-id-digits-only, search-by-name" in res.output
    )


def test_records_file_needs_a_suite(tmp_path: Path) -> None:
    res = runner.invoke(app, ["gate", str(SUITE / "records.jsonl"), "--allow-code"])
    assert isinstance(res.exception, UserError)
    assert "--suite" in str(res.exception)
    args = ["gate", str(SUITE / "records.jsonl"), "--suite", str(SUITE), "--allow-code"]
    res = runner.invoke(app, args)
    assert res.exit_code == 4  # no manifest: nothing shows the run is complete
    assert "has no manifest" in res.output and "--allow-partial" in res.output
    args.append("--allow-partial")
    assert runner.invoke(app, args).exit_code == 3  # one recorded timeout, limit 0
    res = runner.invoke(app, [*args, "--max-infra-errors", "5%"])
    assert res.exit_code == 1  # the recorded demo model misses the thresholds
    res = runner.invoke(app, [*args, "--max-infra-errors", "1"])  # a count, as before: refused
    assert isinstance(res.exception, UserError) and "share" in str(res.exception)


def test_missing_run_is_a_user_error() -> None:
    res = runner.invoke(app, ["gate", "no/such/run"])
    assert isinstance(res.exception, UserError)


def test_records_file_is_scored_like_the_score_command() -> None:
    from toolproof.evaluate import evaluate, load_run
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    code = Trust(allow_code=True)  # the example's gold actions run its Python
    suite = load_suite(SUITE)
    expected = evaluate(suite, [SUITE / "records.jsonl"], trust=code).summaries
    run = load_run(SUITE / "records.jsonl", suite=SUITE, trust=code)
    for target, summary in expected.items():
        got = run.targets[target].summary
        assert (got.strict_pass, got.arguments) == (summary.strict_pass, summary.arguments)

"""A gate that cannot pass by accident: incomplete runs are refused with exit 4."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.gate import builders as b
from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.evaluate import evaluate
from toolproof.gate import EXIT_INCOMPLETE, GateOptions, check_coverage, run_gate

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"
runner = CliRunner()


def test_a_complete_run_is_complete() -> None:
    s = b.suite()
    cov = check_coverage(b.manifest(s, repeats=2), s, b.records(s, repeats=2))
    assert cov.complete and cov.expected == cov.present == 2 * len(s.cases) and cov.missing == 0
    assert cov.message() == ""


@pytest.mark.parametrize("status", ["running", "interrupted", "failed"])
def test_a_run_whose_manifest_is_not_complete_is_refused(status: str) -> None:
    s = b.suite()
    run = evaluate(s, b.records(s), source="m.jsonl", manifest=b.manifest(s, status=status))
    result = run_gate(run)
    assert result.exit_code == EXIT_INCOMPLETE and not result.passed
    finding = result.targets[0].findings[0]
    assert finding.rule == "incomplete" and finding.blocking
    assert f"the manifest says the run is '{status}'" in finding.message
    assert run_gate(run, opts=GateOptions(allow_partial=True)).exit_code == 0


def test_missing_attempts_are_counted_and_named() -> None:
    s = b.suite()
    recs = [r for r in b.records(s, repeats=3) if not (r.case_id == "cancel" and r.attempt > 0)]
    recs = [r for r in recs if not (r.case_id == "l05" and r.attempt == 2)]
    cov = check_coverage(b.manifest(s, repeats=3), s, recs)
    assert (cov.expected, cov.missing, cov.present) == (66, 3, 63)
    assert "3 of 66 attempts (case × target × repeat) have no record" in cov.message()
    assert cov.examples == ["cancel #1 · m", "l05 #2 · m", "cancel #2 · m"]  # attempt by attempt
    result = run_gate(evaluate(s, recs, source="m.jsonl", manifest=b.manifest(s, repeats=3)))
    assert result.exit_code == EXIT_INCOMPLETE


def test_a_missing_target_counts_every_one_of_its_attempts() -> None:
    s = b.suite()
    manifest = b.manifest(s).model_copy(
        update={"targets": [*b.manifest(s).targets, *b.manifest(s, target="other").targets]}
    )
    cov = check_coverage(manifest, s, b.records(s))
    assert cov.missing == len(s.cases) and cov.examples[0].endswith("· other")


def test_records_of_another_run_make_the_run_incomplete() -> None:
    """A manifest that names no target, or records of another run or another target:
    the records are not the run the manifest describes."""
    s = b.suite()
    recs = b.records(s)
    no_targets = b.manifest(s).model_copy(update={"targets": []})
    cov = check_coverage(no_targets, s, recs)
    assert not cov.complete and cov.expected == 0 and cov.foreign == len(recs)
    assert "target 'm' is not one of the manifest's targets" in cov.message()
    result = run_gate(evaluate(s, recs, source="m.jsonl", manifest=no_targets))
    assert result.exit_code == EXIT_INCOMPLETE and not result.passed

    elsewhere = [r.model_copy(update={"run_id": "base"}) for r in recs]
    cov = check_coverage(b.manifest(s), s, elsewhere)
    assert cov.foreign == len(recs) and cov.missing == 0 and not cov.complete
    assert "run_id 'base' is not this run's ('m')" in cov.message()
    assert "were not written by this run" in cov.message()

    own = [r.model_copy(update={"run_id": "m"}) for r in recs]
    assert check_coverage(b.manifest(s), s, own).complete
    merged = b.manifest(s).model_copy(
        update={"run_id": "all", "extra": {"merged_from": ["m (1/2)", "n (2/2)"]}}
    )
    assert check_coverage(merged, s, own).complete  # a merged run holds its shards' records


def test_the_runs_tag_selection_is_respected() -> None:
    s = b.suite()
    only_safety = [r for r in b.records(s) if r.case_id == "cancel"]
    assert check_coverage(b.manifest(s, tags=["safety"]), s, only_safety).complete
    assert not check_coverage(b.manifest(s), s, only_safety).complete


def test_a_shard_is_complete_with_its_own_cases_and_says_it_is_a_shard() -> None:
    from toolproof.run._shard import in_shard

    s = b.suite()
    mine = [r for r in b.records(s) if in_shard(r.case_id, 1, 2)]
    assert 0 < len(mine) < len(s.cases)
    shard = b.manifest(s).model_copy(update={"shard": "1/2"})
    cov = check_coverage(shard, s, mine)
    assert cov.complete and cov.expected == len(mine) and cov.shard == "1/2"
    result = run_gate(evaluate(s, mine, source="m.jsonl", manifest=shard))
    assert result.exit_code == 0 and result.passed
    note = [w for w in result.warnings if "shard 1/2" in w]
    assert note == [
        f"this run is shard 1/2 of the cases: gated on its own {len(mine)} attempts; "
        "merge the shards (toolproof merge) to gate the whole run"
    ]
    # a shard's own missing case is still missing; another shard's case never is
    cov = check_coverage(shard, s, mine[1:])
    assert not cov.complete and cov.missing == 1 and cov.examples == [f"{mine[0].case_id} #0 · m"]
    # the same records as a whole run are incomplete
    assert not check_coverage(b.manifest(s), s, mine).complete


def test_records_without_a_manifest_are_never_complete() -> None:
    s = b.suite()
    cov = check_coverage(None, s, b.records(s))
    assert not cov.complete and "has no manifest" in cov.message()


def test_no_cached_fails_a_run_with_cached_answers() -> None:
    s = b.suite()
    recs = b.records(s)
    recs[3] = recs[3].model_copy(update={"cached": True})
    run = evaluate(s, recs, source="m.jsonl", manifest=b.manifest(s))
    assert run_gate(run).exit_code == 0
    result = run_gate(run, opts=GateOptions(allow_cached=False))
    assert result.exit_code == 1
    (finding,) = [f for f in result.targets[0].findings if f.rule == "cached"]
    assert finding.blocking and finding.message.startswith("1 of 22 answers came from the")
    assert result.targets[0].summary.cached == 1


# -- the command line, on real run folders --------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "base"
    args = ["run", str(SUPPORT), "-m", f"scripted:{SUPPORT / 'script.yaml'}", "-q"]
    res = runner.invoke(
        app, [*args, "--allow-code", "-o", str(out), "--no-cache", "--repeats", "2"]
    )
    assert res.exit_code == 0, res.output
    return out


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("records.jsonl", "manifest.json"):
        (copy / name).write_bytes((run_dir / name).read_bytes())
    return copy


def test_cli_gates_a_complete_run(run_dir: Path) -> None:
    assert runner.invoke(app, ["gate", "--allow-code", str(run_dir)]).exit_code == 0


def test_cli_refuses_a_killed_run_and_says_how_many_attempts_are_missing(
    run_dir: Path, tmp_path: Path
) -> None:
    run = _copy(run_dir, tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "running"  # what SIGKILL leaves
    (run / "manifest.json").write_text(json.dumps(manifest))
    lines = (run / "records.jsonl").read_text().splitlines()
    (run / "records.jsonl").write_text("\n".join(lines[:-5]) + "\n")
    res = runner.invoke(app, ["gate", "--allow-code", str(run)])
    assert res.exit_code == EXIT_INCOMPLETE
    assert f"5 of {len(lines)} attempts (case × target × repeat) have no record" in res.output
    assert "'running', not 'complete'" in res.output and "--allow-partial" in res.output
    md, junit = tmp_path / "g.md", tmp_path / "g.xml"
    runner.invoke(
        app, ["gate", "--allow-code", str(run), "--markdown", str(md), "--junit", str(junit)]
    )
    assert "have no record" in md.read_text() and "❌ failed" in md.read_text()
    gate_case = [c for c in ET.parse(junit).iter("testcase") if c.get("name") == "(release gate)"]
    failure = gate_case[0].find("failure")
    assert failure is not None and "'running', not 'complete'" in (failure.get("message") or "")
    res = runner.invoke(
        app, ["gate", "--allow-code", str(run), "--allow-partial", "--markdown", str(md)]
    )
    assert res.exit_code == 0
    assert "gated although incomplete" in md.read_text()  # said in every report


def test_cli_refuses_a_complete_manifest_with_records_removed(
    run_dir: Path, tmp_path: Path
) -> None:
    run = _copy(run_dir, tmp_path)
    lines = (run / "records.jsonl").read_text().splitlines()
    (run / "records.jsonl").write_text("\n".join(lines[1:]) + "\n")
    res = runner.invoke(app, ["gate", "--allow-code", str(run), "--json", str(tmp_path / "g.json")])
    assert res.exit_code == EXIT_INCOMPLETE
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["coverage"]["missing"] == 1 and data["exit_code"] == EXIT_INCOMPLETE


def test_cli_refuses_another_runs_records_under_this_manifest(
    run_dir: Path, tmp_path: Path
) -> None:
    run = _copy(run_dir, tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["run_id"] = "other"  # records of run 'base' under another run's manifest
    (run / "manifest.json").write_text(json.dumps(manifest))
    res = runner.invoke(app, ["gate", "--allow-code", str(run)])
    assert res.exit_code == EXIT_INCOMPLETE, res.output
    assert "run_id 'base' is not this run's ('other')" in res.output
    assert "--resume" not in res.output  # resuming would refuse these records too
    manifest["run_id"], manifest["targets"] = "base", []  # a manifest that names no target
    (run / "manifest.json").write_text(json.dumps(manifest))
    res = runner.invoke(app, ["gate", "--allow-code", str(run)])
    assert res.exit_code == EXIT_INCOMPLETE, res.output
    assert "is not one of the manifest's targets" in res.output


def test_cli_refuses_a_run_folder_without_manifest(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    (run / "manifest.json").unlink()
    res = runner.invoke(app, ["gate", "--allow-code", str(run), "--suite", str(SUPPORT)])
    assert isinstance(res.exception, UserError)
    assert "not a run folder: manifest.json is missing" in str(res.exception)
    # score refuses the folder too; its records file, named explicitly, can still be scored
    score = runner.invoke(app, ["score", "--allow-code", str(SUPPORT), str(run)])
    assert isinstance(score.exception, UserError)
    score = runner.invoke(app, ["score", "--allow-code", str(SUPPORT), str(run / "records.jsonl")])
    assert score.exit_code == 0, score.output


def test_the_exit_code_is_defined_once_for_the_command_line() -> None:
    from toolproof.cli._exit import ExitCode

    assert ExitCode.INCOMPLETE == EXIT_INCOMPLETE == 4


def test_an_incomplete_baseline_is_said() -> None:
    """A killed baseline compares the run over the cases it holds only: the gate says so."""
    s = b.suite()
    base_records = [r for r in b.records(s, "base") if r.case_id != "cancel"]
    killed = b.manifest(s, "base", status="running")
    base = evaluate(s, base_records, source="base.jsonl", manifest=killed)
    run = evaluate(s, b.records(s), source="m.jsonl", manifest=b.manifest(s))
    (line,) = [w for w in run_gate(run, base).warnings if "baseline is not complete" in w]
    assert "'running', not 'complete'" in line and "cancel #0 · base" in line
    whole = evaluate(s, b.records(s, "base"), source="base.jsonl", manifest=b.manifest(s, "base"))
    assert not [w for w in run_gate(run, whole).warnings if "baseline is not complete" in w]


def test_cli_refuses_a_k_beyond_the_attempts_a_case_has(run_dir: Path) -> None:
    """--k 3 on a run of two repeats printed pass^2, labelled k=3."""
    res = runner.invoke(app, ["gate", "--allow-code", str(run_dir), "--k", "3"])
    assert isinstance(res.exception, UserError), res.output
    assert "--k 3:" in str(res.exception) and "only 2 attempt(s) of some case" in str(res.exception)
    res = runner.invoke(app, ["compare", "--allow-code", str(run_dir), str(run_dir), "--k", "3"])
    assert isinstance(res.exception, UserError), res.output
    res = runner.invoke(app, ["report", "--allow-code", str(run_dir), "--k", "3"])
    assert isinstance(res.exception, UserError), res.output
    assert runner.invoke(app, ["gate", "--allow-code", str(run_dir), "--k", "2"]).exit_code == 0

"""Sharded runs: a stable split of the cases, and merged shards equal one whole run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.errors import UserError
from toolproof.evaluate import load_run
from toolproof.run import RunOptions, RunResult, Target, read_manifest, run_suite
from toolproof.run._shard import in_shard, merge_runs, parse_shard
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Suite

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
SCRIPT = SUITE / "script.yaml"
CODE = Trust(allow_code=True)  # the example suite's multi-step cases run its Python


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SUITE, CODE)


def _flawed_script(tmp_path: Path) -> Path:
    """The example script with some answers made wrong, so verdicts differ between cases."""
    data = yaml.safe_load(SCRIPT.read_text())
    for i, case_id in enumerate(sorted(data["cases"])):
        if i % 5 == 0:
            data["cases"][case_id] = {"tool_calls": [{"name": "search_orders", "arguments": {}}]}
        elif i % 7 == 0:
            data["cases"][case_id] = {"text": "I cannot help with that."}
    path = tmp_path / "flawed.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _run(suite: Suite, script: Path, out: Path, shard: tuple[int, int] | None = None) -> RunResult:
    opts = RunOptions(out=out, cache=False, fsync=False, repeats=2, shard=shard, trust=CODE)
    return run_suite(suite, [Target(spec=f"scripted:{script}")], opts)


def _verdicts(run: Path) -> dict[tuple[str, str, int], tuple[object, ...]]:
    ev = load_run(run, trust=CODE)
    out = {}
    for t in ev.targets.values():
        for v in t.verdicts:
            out[(t.target, v.case_id, v.attempt)] = (
                v.passed, v.failure, v.actual_tools, [(c.stage, c.failure, c.message) for c in v.checks],
            )
    return out


def test_parse_shard() -> None:
    assert parse_shard("2/8") == (2, 8)
    assert parse_shard(" 1 / 1 ") == (1, 1)
    for bad in ("0/8", "9/8", "2", "a/b", "1/0"):
        with pytest.raises(UserError, match="--shard"):
            parse_shard(bad)


def test_every_case_is_in_exactly_one_shard(suite: Suite) -> None:
    ids = [c.id for c in suite.cases]
    for count in (1, 2, 3, 8):
        homes = [[i for i in range(1, count + 1) if in_shard(cid, i, count)] for cid in ids]
        assert all(len(h) == 1 for h in homes)
    sizes = [sum(in_shard(cid, i, 8) for cid in ids) for i in range(1, 9)]
    assert sum(sizes) == len(ids) and min(sizes) > 0


def test_the_split_is_stable() -> None:
    # Fixed by SHA-256 of the case ID: the same on every machine and Python.
    assert [i for i in range(1, 9) if in_shard("lookup-exact-id", i, 8)] == [
        int.from_bytes(hashlib.sha256(b"lookup-exact-id").digest()[:8], "big") % 8 + 1
    ]


def test_eight_shards_merged_equal_one_whole_run(suite: Suite, tmp_path: Path) -> None:
    script = _flawed_script(tmp_path)
    whole = _run(suite, script, tmp_path / "whole")
    shards = [_run(suite, script, tmp_path / f"s{i}", (i, 8)) for i in range(1, 9)]
    for i, r in enumerate(shards, start=1):
        assert read_manifest(r.run_dir).shard == f"{i}/8"
        assert {rec.case_id for rec in r.records} <= {c.id for c in suite.cases if in_shard(c.id, i, 8)}
    merged = merge_runs([r.run_dir for r in reversed(shards)], tmp_path / "merged")
    assert merged.shard is None and merged.counts["records"] == len(whole.records)
    a, b = _verdicts(whole.run_dir), _verdicts(tmp_path / "merged")
    assert len(a) == 2 * len(suite.cases)
    assert a == b
    passed = sum(1 for v in a.values() if v[0])
    assert 0 < passed < len(a)  # the comparison covers passes and failures


def test_merge_refuses_shards_of_different_runs(suite: Suite, tmp_path: Path) -> None:
    one = _run(suite, SCRIPT, tmp_path / "a", (1, 2))
    two = _run(suite, SCRIPT, tmp_path / "b", (2, 2))
    manifest = json.loads((two.run_dir / "manifest.json").read_text())
    manifest["tools_fingerprint"] = "0" * 16
    (two.run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="tool schemas differs"):
        merge_runs([one.run_dir, two.run_dir], tmp_path / "m")
    with pytest.raises(UserError, match="given twice"):
        merge_runs([one.run_dir, one.run_dir], tmp_path / "m")
    with pytest.raises(UserError, match=r"shard 2/2 missing"):
        merge_runs([one.run_dir], tmp_path / "m")
    partial = merge_runs([one.run_dir], tmp_path / "p", partial=True)
    assert partial.extra["missing_shards"] == ["2/2"]


def test_merge_refuses_a_run_that_is_not_a_shard(suite: Suite, tmp_path: Path) -> None:
    whole = _run(suite, SCRIPT, tmp_path / "w")
    with pytest.raises(UserError, match="not a shard"):
        merge_runs([whole.run_dir], tmp_path / "m")


def test_cli_shard_and_merge(tmp_path: Path) -> None:
    runner = CliRunner()
    store = tmp_path / "h.db"
    for i in (1, 2):
        done = runner.invoke(
            app,
            ["run", str(SUITE), "--model", f"scripted:{SCRIPT}", "--shard", f"{i}/2", "-q",
             "--no-cache", "-o", str(tmp_path / f"s{i}"), "--store", str(store), "--allow-code"],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    done = runner.invoke(
        app,
        ["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "m"),
         "--store", str(store), "--allow-code"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "merged 2 shard(s)" in done.output
    gate = runner.invoke(app, ["gate", str(tmp_path / "m"), "--store", str(store), "--allow-code"])
    assert gate.exit_code == 0, gate.output
    assert "shard" not in gate.output
    # one shard gates on its own cases, and says so
    alone = runner.invoke(app, ["gate", str(tmp_path / "s1"), "--no-store", "--allow-code"])
    assert alone.exit_code == 0, alone.output
    assert "incomplete" not in alone.output
    assert "this run is shard 1/2 of the cases" in " ".join(alone.output.split())
    from toolproof.store import open_store

    with open_store(str(store)) as st:
        runs = {r.run_id: r for r in st.list_runs().items}
        assert set(runs) == {"s1", "s2", "m"}
        assert runs["s1"].shard == "1/2" and runs["m"].shard is None
        assert runs["m"].attempts == runs["s1"].attempts + runs["s2"].attempts
        assert runs["m"].gate is not None and runs["m"].gate.passed


def test_cli_rejects_a_bad_shard(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["run", str(SUITE), "--model", f"scripted:{SCRIPT}", "--shard", "9/8", "-q",
              "-o", str(tmp_path / "x"), "--allow-code"],
    )  # fmt: skip
    assert isinstance(done.exception, UserError)
    assert "INDEX must be between 1 and COUNT" in str(done.exception)
    assert not (tmp_path / "x").exists()

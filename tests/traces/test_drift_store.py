"""drift against the last gated run and over store time ranges, as a user runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.traces._store_window import read_store_window

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def _ok(args: list[str], code: int = 0) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A store holding a run whose gate passed and one that was never gated; an import."""
    tmp = tmp_path_factory.mktemp("gated")
    store = tmp / "history.db"
    common = ["--no-cache", "--allow-code", "-q", "--store", str(store)]
    script = f"scripted:{SUITE / 'script.yaml'}"
    _ok(["run", str(SUITE), "-m", script, "-o", str(tmp / "gated-run"), *common])
    _ok(["gate", str(tmp / "gated-run"), "--allow-code", "--store", str(store)])
    # a later run, never gated: last-gated must not pick it
    regressed = f"scripted:{ROOT / 'examples/ci/candidate-regressed.yaml'}"
    _ok(["run", str(SUITE), "-m", regressed, "-o", str(tmp / "later-run"), *common])
    prod = tmp / "prod"
    _ok(["traces", "import", str(FIXTURES / "openinference.spans.jsonl"), "-o", str(prod)])
    return store, tmp, prod


def test_last_gated_is_the_newest_run_whose_gate_passed(gated: tuple[Path, Path, Path]) -> None:
    store, _, _ = gated
    w = read_store_window("last-gated", store=str(store))
    assert w.kind == "store" and w.source.startswith("last gated run gated-run ")
    assert w.decisions == 80  # the example suite's 80 attempts, each one decision
    assert w.calls_with_outcome == 0  # the store keeps no tool results
    later = read_store_window("store:2000-01-01..", store=str(store))
    assert later.decisions == 160 and "(2 runs)" in later.source


def test_drift_against_the_last_gated_run_alerts_when_traffic_differs(
    gated: tuple[Path, Path, Path],
) -> None:
    store, _, prod = gated
    args = ["drift", "--baseline", "last-gated", "--current", str(prod), "--store", str(store)]
    out = _ok(args, code=1)
    assert "drift: last gated run gated-run (gate passed " in out
    assert "tool_call_error_rate – (the store keeps no tool results)" in out
    assert "call rate: 62.5% → 42.9% (-19.6%) of decisions called a tool" in out
    assert "new tools: get_weather, send_email" in out
    assert "ALERT: tool selection drifted" in out
    data = json.loads(_ok([*args, "-f", "json"], code=1))
    assert data["baseline"]["kind"] == "store" and data["baseline"]["decisions"] == 80
    assert data["current"]["call_rate"] == pytest.approx(3 / 7)


def test_a_gated_run_against_itself_and_store_ranges(gated: tuple[Path, Path, Path]) -> None:
    store, _, _ = gated
    same = ["drift", "--baseline", "store:..2999-01-01", "--current", "last-gated"]
    out = _ok([*same, "--store", str(store), "--target", f"scripted:{SUITE / 'script.yaml'}"])
    assert "Jensen–Shannon distance 0.000" in out and "no alert" in out


def test_store_windows_fail_clearly(gated: tuple[Path, Path, Path], tmp_path: Path) -> None:
    store, _, prod = gated
    with pytest.raises(UserError, match="no history store at"):
        read_store_window("last-gated", store=str(tmp_path / "none.db"))
    assert not (tmp_path / "none.db").exists()  # reading never creates a store
    with pytest.raises(UserError, match="'yesterday' is not an ISO 8601 time"):
        read_store_window("store:yesterday..", store=str(store))
    with pytest.raises(UserError, match=re.escape("give store:SINCE..UNTIL")):
        read_store_window("store:2026-12-01", store=str(store))
    with pytest.raises(
        UserError, match=re.escape("no stored run started in store:1990-01-01..1990-02-01")
    ):
        read_store_window("store:1990-01-01..1990-02-01", store=str(store))
    with pytest.raises(UserError, match=r"no run with a passing gate decision .* suite 'other'"):
        read_store_window("last-gated", store=str(store), suite="other")
    result = runner.invoke(
        app, ["drift", "--baseline", "last-gated", "--current", str(prod), "--store", "off"]
    )
    assert isinstance(result.exception, UserError)  # the entry point prints it, exit 2
    assert "history store is off" in str(result.exception)


def test_store_windows_read_arguments_from_each_runs_records(
    gated: tuple[Path, Path, Path],
) -> None:
    """The store keeps no arguments: a store window reads them from the records in the
    run's folder, and counts the same values as that run folder read directly."""
    from toolproof.traces import read_window

    store, tmp, _ = gated
    w = read_store_window("last-gated", store=str(store))
    direct = read_window(tmp / "gated-run")
    assert w.arguments_unread == 0
    assert w.values and w.values == direct.values and w.optional == direct.optional
    assert w.values[("search_orders", "status")]["shipped"] >= 1


def test_a_store_window_whose_records_are_gone_says_so(tmp_path: Path) -> None:
    store = tmp_path / "history.db"
    script = f"scripted:{SUITE / 'script.yaml'}"
    run = tmp_path / "run"
    _ok(["run", str(SUITE), "-m", script, "-o", str(run), "--no-cache", "--allow-code", "-q",
         "--store", str(store)])  # fmt: skip
    (run / "records.jsonl").unlink()
    w = read_store_window("store:..", store=str(store))
    assert w.decisions == 80 and w.arguments_unread == 80 and w.values == {}
    out = _ok(["drift", "--baseline", "store:..", "--current", "store:..", "--store", str(store)])
    assert "(80 of its attempts' records are not in their run folders" in out
    args = ["drift", "--baseline", "store:..", "--current", "store:..", "--store", str(store)]
    data = json.loads(_ok([*args, "-f", "json"]))
    assert data["baseline"]["arguments_unread"] == 80


def test_a_hostile_record_line_is_a_record_not_found(tmp_path: Path) -> None:
    """A records line nested far past the parser's depth, or of the wrong shape, where the
    store says an attempt is: counted as unread, never a traceback."""
    store = tmp_path / "history.db"
    script = f"scripted:{SUITE / 'script.yaml'}"
    run = tmp_path / "run"
    _ok(["run", str(SUITE), "-m", script, "-o", str(run), "--no-cache", "--allow-code", "-q",
         "--store", str(store)])  # fmt: skip
    lines = (run / "records.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    deep = "[" * 100_000 + "]" * 100_000
    # the same byte length keeps every later line at the offset the store recorded
    pad = len(lines[0].encode()) - 1
    lines[0] = (deep[: pad // 2] + deep[-(pad - pad // 2) :])[:pad] + "\n"
    lines[1] = json.dumps({"case_id": json.loads(lines[1])["case_id"], "attempt": 0,
                           "response": 5}).ljust(len(lines[1].encode()) - 1) + "\n"  # fmt: skip
    (run / "records.jsonl").write_text("".join(lines))
    w = read_store_window("store:..", store=str(store))
    assert w.decisions == 80 and w.arguments_unread == 2
    assert first["case_id"]  # the damaged lines were real attempts


def test_a_record_whose_attempt_is_past_any_integer_is_counted_unread(tmp_path: Path) -> None:
    """`"attempt": 1e999` in the line the store points at: counted under arguments_unread
    and named in the report, never an OverflowError."""
    store = tmp_path / "history.db"
    script = f"scripted:{SUITE / 'script.yaml'}"
    run = tmp_path / "run"
    _ok(["run", str(SUITE), "-m", script, "-o", str(run), "--no-cache", "--allow-code", "-q",
         "--store", str(store)])  # fmt: skip
    lines = (run / "records.jsonl").read_text().splitlines()
    lines[-1] = re.sub(r'"attempt": *\d+', '"attempt": 1e999', lines[-1])  # offsets unchanged
    assert "1e999" in lines[-1]
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")
    w = read_store_window("store:..", store=str(store))
    assert w.decisions == 80 and w.arguments_unread == 1
    out = _ok(["drift", "--baseline", "store:..", "--current", "store:..", "--store", str(store)])
    assert "(1 of its attempts' records are not in their run folders" in out

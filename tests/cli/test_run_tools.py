"""`toolproof run --tools FILE`: other tool definitions for one run, on the wire and in scoring."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolproof.cli import main
from toolproof.records import read_records
from toolproof.run import read_manifest
from toolproof.testing import Reply, StubServer

SUITE = """\
suite: weather
tools:
  - name: get_weather
    description: Weather for a city.
    parameters:
      type: object
      properties:
        city: {type: string}
      required: [city]
      additionalProperties: false
cases:
  - id: brno
    prompt: Weather in Brno, in Celsius?
    expect:
      call: get_weather
      args: {city: Brno}
      extra_args: true
"""

NEW_TOOLS = """\
# as `toolproof tools import` writes it
tools:
  - name: get_weather
    description: Weather for a city, in the unit asked for.
    parameters:
      type: object
      properties:
        city: {type: string}
        unit: {type: string, enum: [celsius, fahrenheit]}
      required: [city]
      additionalProperties: false
"""

SPEC = "openai-compatible:stub"


def toolproof(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["toolproof", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture
def stub() -> Iterator[StubServer]:
    # the model answers with a unit: valid for the new definition only
    with StubServer(default=Reply.call("get_weather", {"city": "Brno", "unit": "celsius"})) as s:
        yield s


@pytest.fixture
def workdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stub: StubServer
) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STUB_KEY", "sk-stub")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    (tmp_path / "new-tools.yaml").write_text(NEW_TOOLS)
    (tmp_path / "toolproof.yaml").write_text(
        f'models:\n  "{SPEC}": {{base_url: "{stub.base_url("openai")}", api_key_env: STUB_KEY}}\n'
    )
    monkeypatch.setenv("TOOLPROOF_CONFIG", str(tmp_path / "toolproof.yaml"))  # the user's own
    return tmp_path


def _run(monkeypatch: pytest.MonkeyPatch, out: str, *more: str) -> int:
    return toolproof(
        monkeypatch, "run", "suite", "-m", SPEC, "-q", "--no-cache", "--no-store", "-o", out, *more
    )


def test_tools_override_changes_the_wire_the_fingerprint_and_the_verdict(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    stub: StubServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run(monkeypatch, "runs/suite") == 0
    assert _run(monkeypatch, "runs/new", "--tools", "new-tools.yaml") == 0
    capsys.readouterr()

    sent = [r.body["tools"][0]["function"] for r in stub.requests]
    assert sent[0]["description"] == "Weather for a city."
    assert "unit" not in sent[0]["parameters"]["properties"]
    assert sent[1]["description"] == "Weather for a city, in the unit asked for."
    assert sent[1]["parameters"]["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]

    old, new = read_manifest(workdir / "runs/suite"), read_manifest(workdir / "runs/new")
    assert old.tools_fingerprint != new.tools_fingerprint
    assert old.tools_source is None
    assert new.tools_source == str((workdir / "new-tools.yaml").resolve())
    assert (workdir / "runs/new/tools.json").is_file()
    # the recorded request holds the new definition too
    (record,) = read_records(workdir / "runs/new/records.jsonl")
    assert record.request["tools"][0]["function"]["parameters"]["properties"]["unit"]

    # the suite's schema forbids 'unit', the new one allows it
    old_summary = json.loads((workdir / "runs/suite/summary.json").read_text())
    new_summary = json.loads((workdir / "runs/new/summary.json").read_text())
    assert old_summary["targets"][SPEC]["strict_pass"]["k"] == 0
    assert old_summary["targets"][SPEC]["failure_counts"] == {"schema_mismatch": 1}
    assert new_summary["targets"][SPEC]["strict_pass"]["k"] == 1

    # scored later, the run folder is graded against the tools it sent, even once the
    # file named on the command line has changed
    (workdir / "new-tools.yaml").write_text(NEW_TOOLS.replace("unit: {type", "units: {type"))
    assert toolproof(monkeypatch, "score", "suite", "runs/new", "--json", "s.json") == 0
    scored = json.loads((workdir / "s.json").read_text())["targets"][SPEC]
    assert scored["strict_pass"]["k"] == 1
    assert toolproof(monkeypatch, "gate", "runs/new", "--json", "g.json") == 0

    # the comparison says the tools changed, and where they came from
    capsys.readouterr()
    code = toolproof(monkeypatch, "gate", "runs/new", "--baseline", "runs/suite")
    out = capsys.readouterr().out
    assert code == 0, out
    # once: where the tools came from and their schemas, not the suite as a whole
    out = " ".join(out.split())
    assert "tools from differs: the suite (baseline) vs --tools" in out
    assert f"; tool schemas {old.tools_fingerprint} vs" in out
    assert "suite fingerprint differs" not in out and "tool schemas differs" not in out


def test_a_changed_tools_file_in_the_run_folder_is_refused(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "runs/new", "--tools", "new-tools.yaml") == 0
    kept = workdir / "runs/new/tools.json"
    kept.write_text(kept.read_text().replace("celsius", "kelvin"))
    capsys.readouterr()
    assert toolproof(monkeypatch, "gate", "runs/new") == 2
    err = capsys.readouterr().err
    assert "tools.json" in err and "fingerprint" in err


def test_a_bad_tools_file_is_one_located_error(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "bad.yaml").write_text(NEW_TOOLS.replace("enum: [celsius, fahrenheit]", "enum: 3"))
    assert _run(monkeypatch, "runs/bad", "--tools", "bad.yaml") == 2
    err = capsys.readouterr().err
    assert "bad.yaml:9:" in err and "tools[0].parameters.properties.unit.enum" in err
    assert "Traceback" not in err
    assert not (workdir / "runs/bad").exists()


def test_a_tools_file_without_a_tool_the_cases_expect_is_refused(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "other.json").write_text(
        json.dumps([{"name": "get_forecast", "parameters": {"type": "object"}}])
    )
    assert _run(monkeypatch, "runs/other", "--tools", "other.json") == 2
    err = capsys.readouterr().err
    assert "suite.yaml:" in err and "unknown tool 'get_weather'" in err


def test_resume_takes_the_tools_from_the_run(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "runs/new", "--tools", "new-tools.yaml") == 0
    capsys.readouterr()
    code = toolproof(monkeypatch, "run", "--resume", "runs/new", "--tools", "new-tools.yaml")
    assert code == 2
    assert "--resume takes the suite, its tools" in capsys.readouterr().err
    # resumed without the flag, the run's own tools are used: nothing is left to run
    assert toolproof(monkeypatch, "run", "--resume", "runs/new", "-q", "--no-store") == 0


def test_validate_checks_a_tools_file_with_the_suite(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert toolproof(monkeypatch, "validate", "suite", "--tools", "new-tools.yaml") == 0
    (workdir / "other.json").write_text(
        json.dumps({"tools": [{"name": "get_forecast", "parameters": {"type": "object"}}]})
    )
    capsys.readouterr()
    assert toolproof(monkeypatch, "validate", "suite", "--tools", "other.json") == 2
    assert "unknown tool 'get_weather'" in capsys.readouterr().err

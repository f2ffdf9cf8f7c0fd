"""Planted keys never reach the disk or a report, whatever a provider echoes, for every adapter.

Each adapter is pointed at a stub server that echoes its key: in a 401 error
body, in the reply text and in a tool call's arguments. The run folder, the
cache, the reports and the in-memory records must hold the placeholder, and
never the key.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from tests.run.conftest import write_suite
from toolproof._shared.loaded_keys import PLACEHOLDER
from toolproof.evaluate import evaluate
from toolproof.gate import GateOptions, InfraAllowance, run_gate
from toolproof.providers import ModelSettings
from toolproof.report import gate_json, render_junit, render_markdown, render_terminal
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.testing import Reply, ServerError, StubServer

KEYS = {
    "OPENAI_API_KEY": "sk-planted-openai-7f3a9c1e5b",
    "OPENROUTER_API_KEY": "sk-or-planted-2d8e6a4c0f",
    "ANTHROPIC_API_KEY": "sk-ant-planted-9b1d3f5a7c",
    "GEMINI_API_KEY": "AIza-planted-4e6c8a0b2d",
    "LOCAL_SERVER_KEY": "local-planted-1a3c5e7b9d",
}
ADAPTERS = {
    "openai": ("openai:gpt-4.1-mini", "OPENAI_API_KEY"),
    "openai-responses": ("openai-responses:gpt-5-mini", "OPENAI_API_KEY"),
    "anthropic": ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    "gemini": ("gemini:gemini-2.5-flash", "GEMINI_API_KEY"),
    "openrouter": ("openrouter:anthropic/claude-sonnet-4.5", "OPENROUTER_API_KEY"),
    "openai-compatible": ("openai-compatible:qwen3-8b", "LOCAL_SERVER_KEY"),
}


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_an_echoed_key_is_redacted_everywhere(
    adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    spec, env = ADAPTERS[adapter]
    key = KEYS[env]
    echo_401 = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request"}}
    )
    script = [
        ServerError(status=401, body=echo_401),
        Reply.say(f"Your key is {key}."),
        Reply.call("lookup_order", {"order_id": key}),
    ]
    suite_path = write_suite(tmp_path / "suite")
    with StubServer(script, default=Reply.say(f"again: {key}")) as stub:
        settings = ModelSettings(
            base_url=stub.base_url(adapter),
            timeout_s=5.0,
            max_retries=0,
            api_key_env=env if adapter == "openai-compatible" else None,
        )
        opts = RunOptions(
            out=tmp_path / "run",
            cache_dir=tmp_path / "cache",
            retry=RetryPolicy(base_s=0.001, cap_s=0.01),
            fsync=False,
        )
        result = run_suite(suite_path, [Target(spec=spec, settings=settings)], opts)
        sent = [r.headers for r in stub.requests]
    assert any(key in " ".join(h.values()) for h in sent)  # the key was really used

    # the provider echoed it: in a 401 body, a reply, a tool call
    assert "rejected" in {r.outcome.value for r in result.records}
    files = _files(tmp_path / "run") + _files(tmp_path / "cache")
    assert any(p.parent.parent == tmp_path / "cache" for p in files)  # answers were cached
    for path in files:
        data = path.read_bytes()
        assert key.encode() not in data, f"{path} holds the key"
    records = (tmp_path / "run" / "records.jsonl").read_text("utf-8")
    assert records.count(PLACEHOLDER) >= 3
    assert all(key not in r.model_dump_json() for r in result.records)

    ev = evaluate(result.suite, result.records, manifest=result.manifest)
    out = io.StringIO()
    render_terminal(ev.summaries, Console(file=out, width=200), failures=True)
    gate = run_gate(ev, opts=GateOptions(allow_partial=True, max_infra=InfraAllowance(1.0)))
    reports = [
        out.getvalue(),
        render_markdown(gate),
        render_junit(gate),
        json.dumps(gate_json(gate)),
    ]
    for text in reports:
        assert key not in text


def test_a_loaded_key_in_the_manifest_is_redacted(tmp_path: Path) -> None:
    from toolproof._shared.loaded_keys import remember_secret
    from toolproof.run import Manifest, TargetEntry, read_manifest
    from toolproof.run._manifest import now_utc, write_manifest

    key = "sk-planted-manifest-5c7e9a1b3d"
    remember_secret(key)
    settings = ModelSettings(extra_body={"metadata": {"note": f"Bearer {key}"}})
    manifest = Manifest(
        run_id="r",
        toolproof_version="t",
        suite_name="s",
        suite_fingerprint="f",
        tools_fingerprint="t",
        targets=[TargetEntry(spec="openai:m", settings=settings)],
        repeats=1,
        started_at=now_utc(),
    )
    write_manifest(tmp_path, manifest)
    assert key not in (tmp_path / "manifest.json").read_text("utf-8")
    extra = read_manifest(tmp_path).targets[0].settings.extra_body
    assert extra == {"metadata": {"note": f"Bearer {PLACEHOLDER}"}}

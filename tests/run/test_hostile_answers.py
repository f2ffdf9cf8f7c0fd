"""An answer holding a lone surrogate, control characters or NaN never loses a run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.run.conftest import write_suite
from toolproof._shared.json_text import dump_model
from toolproof.cli._app import app
from toolproof.providers import ModelSettings
from toolproof.providers._transport import _json_bytes
from toolproof.records import read_records
from toolproof.run import RunOptions, Target, run_suite
from toolproof.testing import RawReply, Reply, StubServer

HOSTILE = "x\ud800y \x1b[2J\r✓ passed \ufffe"


def test_a_run_with_hostile_answers_is_recorded_whole_and_gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-hostile-answers-000")
    nan_body = (
        b'{"id": "x", "model": "m", "usage": {"prompt_tokens": NaN}, "choices": [{"index": 0,'
        b' "finish_reason": "stop", "message": {"role": "assistant", "content": "nan"}}]}'
    )
    script = [
        Reply.say(HOSTILE),
        Reply.call("lookup_order", {"order_id": HOSTILE}),
        RawReply(nan_body),
    ]
    suite = write_suite(tmp_path / "suite")
    with StubServer(script, default=Reply.say(HOSTILE)) as stub:
        settings = ModelSettings(base_url=stub.base_url("openai"), timeout_s=5.0, max_retries=0)
        opts = RunOptions(out=tmp_path / "run", cache_dir=tmp_path / "cache", fsync=False)
        result = run_suite(suite, [Target(spec="openai:m", settings=settings)], opts)
    records_file = tmp_path / "run" / "records.jsonl"
    data = records_file.read_bytes()
    data.decode("utf-8")  # valid UTF-8
    assert b"\\ud800" in data
    back = read_records(records_file)  # refuses a NaN literal: none was written
    assert len(back) == 6
    (nan,) = [r for r in back if r.outcome.value != "ok"]  # NaN is not JSON: an unreadable body
    assert nan.outcome.value == "network" and nan.error is not None
    assert "NaN is not a JSON value" in nan.error.message
    texts = {r.response.text for r in back if r.response is not None}
    assert HOSTILE in texts
    assert sorted(dump_model(r) for r in back) == sorted(dump_model(r) for r in result.records)

    junit, js = tmp_path / "g.xml", tmp_path / "g.json"
    res = CliRunner().invoke(
        app,
        [
            *("gate", str(tmp_path / "run"), "--junit", str(junit), "--json", str(js)),
            *("--failures", "--max-infra-errors", "50%"),
        ],
    )
    assert res.exit_code in (0, 1), res.output
    assert "\x1b" not in res.output and "\\x1b[2J" in res.output
    ET.parse(junit)
    json.loads(js.read_text("utf-8"), parse_constant=lambda c: pytest.fail(c))


def test_a_request_echoing_a_lone_surrogate_is_sent_escaped() -> None:
    body = _json_bytes({"messages": [{"content": "é\ud800"}]})
    assert json.loads(body) == {"messages": [{"content": "é\ud800"}]}
    assert _json_bytes({"a": "é"}) == '{"a": "é"}'.encode()

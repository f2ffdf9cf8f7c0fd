"""The scripted and replay providers, through the runner."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from toolproof.errors import UserError
from toolproof.providers._replay import ReplayProvider
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.run import RunOptions, Target, run_suite
from toolproof.types import Outcome, Suite

SCRIPT = {
    "model": "scripted-demo",
    "default": {"text": "Which order?"},
    "cases": {
        "case-0": {"tool_calls": [{"name": "lookup_order", "raw_arguments": '{"order_id": 7'}]},
        "case-1": [
            {"text": "first"},
            {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "ORD-000001"}}]},
        ],
        "case-2": {"error": "rate_limited", "retry_after": 0},
    },
}


def opts(tmp_path: Path, name: str, **kw: object) -> RunOptions:
    o = RunOptions(out=tmp_path / name, cache_dir=tmp_path / "cache", fsync=False)
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def test_scripted_answers_by_case_and_attempt(suite: Suite, tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(SCRIPT))
    target = Target(spec=f"scripted:{script}", settings=_settings(max_retries=1))
    result = run_suite(suite, [target], opts(tmp_path, "r", repeats=2))
    by = {(r.case_id, r.attempt): r for r in result.records}
    bad = by[("case-0", 0)].response
    assert bad is not None and bad.tool_calls[0].parse_error is not None
    assert bad.tool_calls[0].raw_arguments == '{"order_id": 7'
    assert by[("case-1", 0)].response.text == "first"  # type: ignore[union-attr]
    second = by[("case-1", 1)].response
    assert second is not None and second.tool_calls[0].arguments == {"order_id": "ORD-000001"}
    assert by[("case-2", 0)].outcome is Outcome.rate_limited
    assert by[("case-5", 1)].response.text == "Which order?"  # type: ignore[union-attr]
    assert result.manifest.targets[0].model_versions == ["scripted-demo"]


def test_scripted_from_a_dict_needs_no_file(suite: Suite, tmp_path: Path) -> None:
    provider = ScriptedProvider.from_dict({"case-3": {"text": "hi"}})
    result = run_suite(suite, [Target("scripted:mem", provider=provider)], opts(tmp_path, "r"))
    assert [r.outcome for r in result.records].count(Outcome.ok) == 1
    assert [r.outcome for r in result.records].count(Outcome.rejected) == 5  # no answer: not scored


def test_a_bad_script_is_a_user_error_at_once() -> None:
    with pytest.raises(UserError, match="case-0"):
        ScriptedProvider.from_dict({"case-0": {"tool_calls": [{"arguments": {}}]}})
    with pytest.raises(UserError, match="unknown error outcome"):
        ScriptedProvider.from_dict({"case-0": {"error": "oops"}})


def test_scripted_runs_are_not_cached(suite: Suite, tmp_path: Path) -> None:
    provider = ScriptedProvider.from_dict({"default": {"text": "a"}})
    run_suite(suite, [Target("scripted:mem", provider=provider)], opts(tmp_path, "r1"))
    result = run_suite(suite, [Target("scripted:mem", provider=provider)], opts(tmp_path, "r2"))
    assert not any(r.cached for r in result.records)


def test_replay_gives_back_the_recorded_answers(suite: Suite, tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(SCRIPT))
    first = run_suite(suite, [f"scripted:{script}"], opts(tmp_path, "r1", repeats=2))
    records = tmp_path / "r1" / "records.jsonl"
    again = run_suite(suite, [f"replay:{records}"], opts(tmp_path, "r2", repeats=2))
    old = {(r.case_id, r.attempt): r for r in first.records}
    for rec in again.records:
        before = old[(rec.case_id, rec.attempt)]
        if before.outcome is Outcome.ok:
            assert rec.outcome is Outcome.ok
            assert rec.response == before.response
            assert rec.request == before.request
        else:
            assert rec.outcome is Outcome.rejected  # nothing to replay: never scored


def test_replay_of_several_targets_needs_a_choice(suite: Suite, tmp_path: Path) -> None:
    a = ScriptedProvider.from_dict({"default": {"text": "a"}})
    b = ScriptedProvider.from_dict({"default": {"text": "b"}})
    run_suite(suite, [Target("s:a", provider=a), Target("s:b", provider=b)], opts(tmp_path, "r"))
    with pytest.raises(UserError, match="several targets"):
        ReplayProvider(str(tmp_path / "r"))
    chosen = ReplayProvider(f"{tmp_path / 'r'}#s:b")
    result = run_suite(suite, [Target("replay:b", provider=chosen)], opts(tmp_path, "r2"))
    assert {r.response.text for r in result.records if r.response} == {"b"}
    assert len(read_records(tmp_path / "r2" / "records.jsonl")) == 6


def _settings(**kw: object):  # type: ignore[no-untyped-def]
    from toolproof.providers import ModelSettings

    return ModelSettings.model_validate(kw)

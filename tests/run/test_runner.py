from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolproof.errors import UserError
from toolproof.providers import ModelSettings, TransportError
from toolproof.records import read_records
from toolproof.run import (
    RetryPolicy,
    RunOptions,
    Target,
    read_manifest,
    resume_run,
    run_suite,
)
from toolproof.types import Outcome, Suite

from .conftest import FakeProvider, rate_limited, server_error

FAST = RetryPolicy(base_s=0.001, cap_s=0.01)


def options(tmp_path: Path, **kw: object) -> RunOptions:
    opts = RunOptions(
        out=tmp_path / "run",
        cache_dir=tmp_path / "cache",
        retry=FAST,
        fsync=False,
    )
    for key, value in kw.items():
        setattr(opts, key, value)
    return opts


def fake(provider: FakeProvider, spec: str = "fake:m", **settings: object) -> Target:
    return Target(spec=spec, settings=ModelSettings.model_validate(settings), provider=provider)


def triples(records: list) -> Counter:  # type: ignore[type-arg]
    return Counter((r.case_id, r.target, r.attempt) for r in records)


def test_every_case_target_and_repeat_gets_exactly_one_record(suite: Suite, tmp_path: Path) -> None:
    a, b = FakeProvider(), FakeProvider()
    result = run_suite(suite, [fake(a, "fake:a"), fake(b, "fake:b")], options(tmp_path, repeats=3))
    on_disk = read_records(tmp_path / "run" / "records.jsonl")
    assert len(on_disk) == 6 * 2 * 3
    assert set(triples(on_disk).values()) == {1}
    assert all(r.outcome is Outcome.ok for r in on_disk)
    assert len(a.calls) == len(b.calls) == 18
    assert result.manifest.status == "complete"
    assert result.manifest.counts["ok"] == 36


def test_concurrency_is_honoured(suite: Suite, tmp_path: Path) -> None:
    provider = FakeProvider(delay=0.02)
    run_suite(suite, [fake(provider, concurrency=3)], options(tmp_path, repeats=2))
    assert provider.peak == 3


def test_default_concurrency_is_one(suite: Suite, tmp_path: Path) -> None:
    provider = FakeProvider(delay=0.005)
    run_suite(suite, [fake(provider)], options(tmp_path))
    assert provider.peak == 1


def test_retry_after_is_honoured_then_the_answer_is_recorded(suite: Suite, tmp_path: Path) -> None:
    provider = FakeProvider(failures={"case-0": [rate_limited(0.1), rate_limited(0.1)]})
    started = time.monotonic()
    result = run_suite(suite, [fake(provider)], options(tmp_path))
    elapsed = time.monotonic() - started
    assert elapsed >= 0.2  # two Retry-After waits of 0.1 s
    rec = next(r for r in result.records if r.case_id == "case-0")
    assert rec.outcome is Outcome.ok
    assert provider.calls.count(("case-0", 0)) == 3
    assert result.manifest.counts["retries"] == 2


def test_exhausted_retries_record_the_infrastructure_outcome(suite: Suite, tmp_path: Path) -> None:
    provider = FakeProvider(failures={"case-1": [server_error() for _ in range(10)]})
    result = run_suite(suite, [fake(provider, max_retries=2)], options(tmp_path))
    rec = next(r for r in result.records if r.case_id == "case-1")
    assert rec.outcome is Outcome.server_error
    assert rec.error is not None and rec.error.status == 500 and rec.error.body == "boom"
    assert rec.response is None
    assert provider.calls.count(("case-1", 0)) == 3  # first try + 2 retries
    assert result.infra_failures == 1


@pytest.mark.parametrize(
    ("outcome", "retried"),
    [
        (Outcome.rate_limited, True),
        (Outcome.server_error, True),
        (Outcome.timeout, True),
        (Outcome.network, True),
        (Outcome.rejected, False),
    ],
)
def test_each_infrastructure_outcome_is_classified(
    suite: Suite, tmp_path: Path, outcome: Outcome, retried: bool
) -> None:
    errors: list[TransportError | Exception] = [TransportError(outcome, "x") for _ in range(5)]
    provider = FakeProvider(failures={"case-2": errors})
    result = run_suite(suite, [fake(provider, max_retries=1)], options(tmp_path))
    rec = next(r for r in result.records if r.case_id == "case-2")
    assert rec.outcome is outcome
    assert provider.calls.count(("case-2", 0)) == (2 if retried else 1)


def test_a_crash_in_the_harness_is_a_harness_error(suite: Suite, tmp_path: Path) -> None:
    provider = FakeProvider(failures={"case-3": [RuntimeError("bug")]})
    result = run_suite(suite, [fake(provider)], options(tmp_path))
    rec = next(r for r in result.records if r.case_id == "case-3")
    assert rec.outcome is Outcome.harness_error
    assert rec.error is not None and "bug" in rec.error.message
    assert result.harness_errors == 1
    assert sum(r.outcome is Outcome.ok for r in result.records) == 5


def test_a_cache_hit_makes_no_request(suite: Suite, tmp_path: Path) -> None:
    first = FakeProvider()
    run_suite(suite, [fake(first)], options(tmp_path, repeats=2))
    assert len(first.calls) == 12  # repeats are separate calls: one cache slot each
    second = FakeProvider()
    result = run_suite(suite, [fake(second)], options(tmp_path, repeats=2, out=tmp_path / "r2"))
    assert second.calls == []
    assert all(r.cached for r in result.records)
    assert {r.response.tool_calls[0].raw_arguments for r in result.records if r.response}


def test_more_repeats_reuse_the_cached_slots_only(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider())], options(tmp_path, repeats=1))
    provider = FakeProvider()
    run_suite(suite, [fake(provider)], options(tmp_path, repeats=2, out=tmp_path / "r2"))
    assert sorted({a for _, a in provider.calls}) == [1]


def test_no_cache_calls_again(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider())], options(tmp_path))
    provider = FakeProvider()
    run_suite(suite, [fake(provider)], options(tmp_path, cache=False, out=tmp_path / "r2"))
    assert len(provider.calls) == 6


def test_changed_generation_settings_miss_the_cache(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider(), temperature=0)], options(tmp_path))
    same = FakeProvider()
    run_suite(suite, [fake(same, temperature=0, rpm=1000)], options(tmp_path, out=tmp_path / "r2"))
    assert same.calls == []  # rpm does not change the answer
    other = FakeProvider()
    run_suite(suite, [fake(other, temperature=1)], options(tmp_path, out=tmp_path / "r3"))
    assert len(other.calls) == 6


def test_failures_are_not_cached(suite: Suite, tmp_path: Path) -> None:
    failing = FakeProvider(failures={"case-0": [server_error()]})
    run_suite(suite, [fake(failing, max_retries=0)], options(tmp_path))
    again = FakeProvider()
    run_suite(suite, [fake(again)], options(tmp_path, out=tmp_path / "r2"))
    assert again.calls == [("case-0", 0)]


def test_resume_runs_only_what_is_missing(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider())], options(tmp_path, repeats=2, cache=False))
    records_file = tmp_path / "run" / "records.jsonl"
    full = read_records(records_file)
    lines = records_file.read_bytes().splitlines(keepends=True)
    records_file.write_bytes(b"".join(lines[:5]) + lines[5][:40])  # a kill mid-write
    provider = FakeProvider()
    opts = options(tmp_path, provider_factory=lambda spec, settings, transport: provider)
    with pytest.warns(UserWarning, match="cut short"):
        result = resume_run(tmp_path / "run", opts, suite=suite)
    assert len(provider.calls) == 12 - 5
    final = read_records(records_file)
    assert triples(final) == triples(full)
    assert set(triples(final).values()) == {1}
    assert result.manifest.resumed == 1 and result.manifest.status == "complete"


def test_resume_of_a_complete_run_does_nothing(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider())], options(tmp_path))
    provider = FakeProvider()
    opts = options(tmp_path, provider_factory=lambda spec, settings, transport: provider)
    result = resume_run(tmp_path / "run", opts, suite=suite)
    assert result.attempted == 0 and provider.calls == []
    assert len(read_records(tmp_path / "run" / "records.jsonl")) == 6


def test_resume_refuses_a_changed_suite(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider())], options(tmp_path))
    changed = suite.model_copy(update={"system": "Something else."})
    with pytest.raises(UserError, match="suite changed"):
        resume_run(tmp_path / "run", options(tmp_path), suite=changed)


def test_a_run_folder_is_never_reused(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider())], options(tmp_path))
    with pytest.raises(UserError, match="resume"):
        run_suite(suite, [fake(FakeProvider())], options(tmp_path))


def test_manifest_records_what_the_run_ran_against(suite: Suite, tmp_path: Path) -> None:
    run_suite(suite, [fake(FakeProvider(), temperature=0.5)], options(tmp_path, repeats=2))
    manifest = read_manifest(tmp_path / "run")
    assert manifest.suite_fingerprint == suite.fingerprint()
    assert manifest.tools_fingerprint and manifest.system_fingerprint
    assert manifest.targets[0].spec == "fake:m"
    assert manifest.targets[0].settings.temperature == 0.5
    assert manifest.repeats == 2 and manifest.ended_at is not None


def test_duplicate_targets_are_a_user_error(suite: Suite, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="twice"):
        run_suite(suite, ["scripted:a", "scripted:a"], options(tmp_path))


def test_a_run_folder_in_use_is_refused(suite: Suite, tmp_path: Path) -> None:
    from toolproof.run._runner import run_lock

    run_suite(suite, [fake(FakeProvider())], options(tmp_path))
    with run_lock(tmp_path / "run"), pytest.raises(UserError, match="another toolproof process"):
        resume_run(tmp_path / "run", options(tmp_path), suite=suite)


def test_every_retry_is_recorded_with_its_reason(suite: Suite, tmp_path: Path) -> None:
    from toolproof.run._pacing import RetryPolicy

    fake = FakeProvider(failures={"case-1": [server_error(), rate_limited()]})
    opts = RunOptions(
        out=tmp_path / "run", cache=False, fsync=False, retry=RetryPolicy(0.001, 0.01)
    )
    result = run_suite(suite, [Target(spec="fake:m", provider=fake)], opts)
    record = next(r for r in result.records if r.case_id == "case-1")
    assert record.outcome is Outcome.ok
    assert record.retries == ["server_error: HTTP 500", "rate_limited: HTTP 429"]
    assert all(r.retries is None for r in result.records if r.case_id != "case-1")


class _Notes:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def started(self, totals: dict[str, int]) -> None: ...
    def recorded(self, record: Any) -> None: ...
    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None: ...
    def finished(self) -> None: ...

    def note(self, target: str, text: str) -> None:
        self.seen.append((target, text))


class _SlowStart(FakeProvider):
    default_settings: ClassVar[dict[str, Any]] = {"temperature": 0.0, "seed": 7, "max_tokens": 256}

    async def prepare(self, note: Any) -> None:
        note("loading the model")
        self.prepared = True


def test_a_provider_prepares_before_its_first_answer_and_says_so(
    suite: Suite, tmp_path: Path
) -> None:
    notes = _Notes()
    fake = _SlowStart()
    cache = tmp_path / "cache"
    opts = RunOptions(out=tmp_path / "run", cache_dir=cache, fsync=False, observer=notes)
    run_suite(suite, [Target(spec="fake:m", provider=fake)], opts)
    assert notes.seen == [("fake:m", "loading the model")]
    # Answered from the cache: nothing to prepare (a local model's server is not started).
    again, fresh = _Notes(), _SlowStart()
    opts = RunOptions(out=tmp_path / "run2", cache_dir=cache, fsync=False, observer=again)
    result = run_suite(suite, [Target(spec="fake:m", provider=fresh)], opts)
    assert all(r.cached for r in result.records) and fresh.calls == []
    assert again.seen == []


def test_provider_defaults_fill_only_what_no_layer_set(suite: Suite, tmp_path: Path) -> None:
    from toolproof.providers import ModelSettings

    opts = RunOptions(out=tmp_path / "run", cache=False, fsync=False)
    given = ModelSettings.model_validate({"temperature": 0.5})
    result = run_suite(suite, [Target(spec="fake:m", provider=_SlowStart(), settings=given)], opts)
    settings = result.manifest.targets[0].settings
    assert (settings.temperature, settings.seed, settings.max_tokens) == (0.5, 7, 256)

from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.providers import Exchange, ModelSettings, ProviderRequest
from toolproof.run import ResponseCache, fingerprint
from toolproof.types import Message, Response, Tool


def request(**settings: object) -> ProviderRequest:
    return ProviderRequest(
        model="m",
        messages=[Message(role="user", content="hi")],
        tools=[Tool(name="t")],
        settings=ModelSettings.model_validate(settings),
    )


def test_the_fingerprint_ignores_transport_settings() -> None:
    base = fingerprint("p:m", request())
    assert fingerprint("p:m", request(concurrency=8, rpm=60, tpm=1000, max_retries=1)) == base
    assert fingerprint("p:m", request(timeout_s=5)) == base


def test_the_fingerprint_covers_model_messages_tools_and_generation() -> None:
    base = fingerprint("p:m", request())
    assert fingerprint("p:other", request()) != base
    assert fingerprint("p:m", request(temperature=0)) != base
    assert fingerprint("p:m", request(tool_choice="required")) != base
    changed = request().model_copy(update={"tools": [Tool(name="u")]})
    assert fingerprint("p:m", changed) != base


def test_slots_are_separate_and_entries_round_trip(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = fingerprint("p:m", request())
    cache.put(key, 0, Exchange(request={"x": 1}, response=Response(text="zero")))
    assert cache.get(key, 1) is None
    hit = cache.get(key, 0)
    assert hit is not None and hit.response.text == "zero" and hit.request == {"x": 1}


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("ab" * 32, 0, Exchange(request=None, response=Response(text="x")))
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{broken")
    assert cache.get("ab" * 32, 0) is None


def test_the_cache_lives_in_the_user_cache_folder_not_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.run import RunOptions
    from toolproof.run._cache import default_cache_dir

    monkeypatch.delenv("TOOLPROOF_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "toolproof" / "responses"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert default_cache_dir() == Path.home() / ".cache" / "toolproof" / "responses"
    monkeypatch.setenv("TOOLPROOF_CACHE", str(tmp_path / "tp"))
    assert default_cache_dir() == tmp_path / "tp" / "responses"
    monkeypatch.chdir(tmp_path)
    assert RunOptions().cache_dir == tmp_path / "tp" / "responses"
    assert not RunOptions().cache_dir.is_relative_to(Path.cwd() / ".toolproof")


def test_an_answer_planted_in_the_checkout_is_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request can write `.toolproof/cache` in the checkout; the run never reads it."""
    from toolproof.run import RunOptions, Target, run_suite
    from toolproof.suite import load_suite
    from toolproof.types import Response

    from .conftest import FakeProvider, write_suite

    suite = load_suite(write_suite(tmp_path / "suite"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLPROOF_CACHE", str(tmp_path / "user-cache"))
    fake = FakeProvider()
    fake.cacheable = True
    request = ProviderRequest(
        model="m",
        messages=suite.cases[0].conversation(suite.system),
        tools=suite.tools_for(suite.cases[0]),
    )
    key = fingerprint("fake:m", request)
    planted = ResponseCache(tmp_path / ".toolproof" / "cache")
    planted.put(key, 0, Exchange(request={}, response=Response(text="forged")))
    result = run_suite(
        suite, [Target(spec="fake:m", provider=fake)], RunOptions(out=tmp_path / "r")
    )
    assert not any(r.cached for r in result.records)
    assert all(r.response is not None and r.response.text != "forged" for r in result.records)
    assert len(fake.calls) == len(suite.cases)
    assert any((tmp_path / "user-cache" / "responses").rglob("*.json"))
    # The planted entry is well formed: pointed at it explicitly, the run serves it.
    opts = RunOptions(out=tmp_path / "r2", cache_dir=tmp_path / ".toolproof" / "cache")
    served = run_suite(suite, [Target(spec="fake:m", provider=fake)], opts).records
    assert [r.response.text for r in served if r.cached and r.response] == ["forged"]

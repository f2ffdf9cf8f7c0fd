from __future__ import annotations

from pathlib import Path

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

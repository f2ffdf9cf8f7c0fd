"""The stub server itself: scripts, counters, and use from sync code."""

from __future__ import annotations

import asyncio

import pytest
from providers_support import ask, provider_for

from toolproof.providers import HttpTransport, ModelSettings, TransportError, create_provider
from toolproof.testing import Reply, StubServer
from toolproof.types import Outcome


async def test_exhausted_script_answers_500(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, s = provider_for("openai", stub, transport)
    with pytest.raises(TransportError) as info:
        await provider.generate(ask(s))
    assert info.value.outcome is Outcome.server_error
    assert "script exhausted" in (info.value.body or "")


async def test_unknown_path_is_404(stub: StubServer, transport: HttpTransport) -> None:
    with pytest.raises(TransportError) as info:
        await transport.post_json(stub.url + "/v1/embeddings", {}, {}, 5)
    assert info.value.status == 404
    assert info.value.outcome is Outcome.rejected


async def test_counts_requests_and_peak_in_flight(transport: HttpTransport, keys: object) -> None:
    async with StubServer(default=Reply.say("ok"), latency_s=0.05) as stub:
        provider, s = provider_for("anthropic", stub, transport)
        await asyncio.gather(*(provider.generate(ask(s)) for _ in range(10)))
        assert stub.request_count == 10
        assert 2 <= stub.peak_in_flight <= 10
        assert stub.in_flight == 0
        stub.reset_counters()
        assert stub.request_count == 0 and stub.requests == []


def test_runs_in_a_thread_for_sync_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with StubServer([Reply.say("one"), Reply.say("two")]) as stub:

        async def twice() -> list[str | None]:
            async with HttpTransport() as transport:
                settings = ModelSettings(base_url=stub.base_url("openai"))
                provider = create_provider("openai:gpt-4.1", settings, transport)
                return [(await provider.generate(ask(settings))).response.text for _ in range(2)]

        assert asyncio.run(twice()) == ["one", "two"]
        assert stub.request_count == 2

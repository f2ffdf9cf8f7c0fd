"""MockTransport: a real adapter answered in memory, classified like the network."""

from __future__ import annotations

import pytest

from toolproof.providers import HttpRequest, HttpResponse, ModelSettings, TransportError
from toolproof.providers._base import ProviderRequest
from toolproof.providers._openai_chat import OpenAIChatProvider
from toolproof.testing import MockTransport, Reply
from toolproof.testing._render import openai_chat
from toolproof.types import Message, Outcome, Tool


def _request() -> ProviderRequest:
    tool = Tool(
        name="lookup_order",
        description="Look up an order.",
        parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
    )
    return ProviderRequest(
        model="gpt-4.1-mini",
        messages=[Message(role="user", content="Where is ORD-1?")],
        tools=[tool],
    )


def _provider(transport: MockTransport, monkeypatch: pytest.MonkeyPatch) -> OpenAIChatProvider:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return OpenAIChatProvider("gpt-4.1-mini", ModelSettings(), transport)


async def test_the_adapter_runs_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(request: HttpRequest) -> HttpResponse:
        assert request.url == "https://api.openai.com/v1/chat/completions"
        return HttpResponse.from_json(
            openai_chat(Reply.call("lookup_order", {"order_id": "ORD-1"}), "gpt-4.1-mini")
        )

    transport = MockTransport(handler)
    exchange = await _provider(transport, monkeypatch).generate(_request())
    call = exchange.response.tool_calls[0]
    assert (call.name, call.arguments) == ("lookup_order", {"order_id": "ORD-1"})
    sent = transport.requests[0]
    assert sent.json()["tools"][0]["function"]["name"] == "lookup_order"
    assert sent.headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (HttpResponse(429, b"{}", {"retry-after": "2"}), Outcome.rate_limited),
        (HttpResponse(503, b"busy"), Outcome.server_error),
        (HttpResponse(400, b'{"error": "bad"}'), Outcome.rejected),
        (HttpResponse(200, b'{"choices": [trunc'), Outcome.network),
    ],
)
async def test_failures_are_classified_as_on_the_network(
    answer: HttpResponse, outcome: Outcome, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def handler(request: HttpRequest) -> HttpResponse:
        return answer

    with pytest.raises(TransportError) as err:
        await _provider(MockTransport(handler), monkeypatch).generate(_request())
    assert err.value.outcome is outcome
    if outcome is Outcome.rate_limited:
        assert err.value.retry_after == 2.0

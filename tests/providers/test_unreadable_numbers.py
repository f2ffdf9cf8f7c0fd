"""Numbers toolproof cannot keep, inside a whole provider body: the model's invalid output.

Anthropic's ``input`` and Gemini's ``args`` arrive as parsed JSON inside the body;
an integer beyond Python's digit limit or a float beyond a double there is what
the model wrote, so it is counted as in OpenAI's argument text (a parse error,
scored ``invalid_json``), never as a network failure, and the body is kept as sent.
"""

from __future__ import annotations

import json

import pytest
from providers_support import ask, provider_for

from toolproof.grade import Scorer
from toolproof.providers import HttpTransport, TransportError
from toolproof.records._read import parse_arguments
from toolproof.testing import RawReply, StubServer
from toolproof.types import FailureClass, Outcome

HUGE = "9" * 5000


def _anthropic(arguments: str) -> bytes:
    return (
        '{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",'
        '"content":[{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":'
        + arguments
        + '}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}'
    ).encode()


def _gemini(arguments: str) -> bytes:
    return (
        '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":'
        '{"name":"lookup_order","args":'
        + arguments
        + '}}]},"finishReason":"STOP"}],"modelVersion":"gemini-x"}'
    ).encode()


WIRE = {"anthropic": _anthropic, "gemini": _gemini}


@pytest.mark.parametrize("name", sorted(WIRE))
@pytest.mark.parametrize(
    "arguments",
    [
        '{"order_id":' + HUGE + "}",
        '{"order_id":"ORD-1","n":[1,-' + HUGE + "]}",
    ],
    ids=["int", "nested-negative-int"],
)
async def test_huge_integer_in_arguments_is_the_models_invalid_output(
    name: str, arguments: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    body = WIRE[name](arguments)
    stub.add(RawReply(body))
    exchange = await provider.generate(ask(settings))  # not a TransportError (network)
    (call,) = exchange.response.tool_calls
    assert call.name == "lookup_order"
    assert call.raw_arguments == arguments  # the text as sent, the digits unchanged
    assert call.arguments is None
    # the same verdict as the same text in OpenAI's argument string
    assert (call.arguments, call.parse_error) == parse_arguments(arguments)
    assert call.parse_error is not None and "4,300 digits" in call.parse_error
    # the raw body is kept as received, byte for byte
    assert exchange.response.raw == body.decode()


@pytest.mark.parametrize("name", sorted(WIRE))
async def test_float_beyond_a_double_is_kept_as_sent(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for(name, stub, transport)
    arguments = '{"order_id":"ORD-1","amount":1e999}'
    stub.add(RawReply(WIRE[name](arguments)))
    (call,) = (await provider.generate(ask(settings))).response.tool_calls
    # not rewritten as Infinity: the text the model sent, read as argument text is
    assert call.raw_arguments == arguments
    assert (call.arguments, call.parse_error) == parse_arguments(arguments)


async def test_graded_as_invalid_json_not_infrastructure(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    from providers_support import LOOKUP

    from toolproof.types import Record, Suite

    provider, settings = provider_for("anthropic", stub, transport)
    stub.add(RawReply(_anthropic('{"order_id":' + HUGE + "}")))
    exchange = await provider.generate(ask(settings))
    suite = Suite.model_validate(
        {
            "name": "t",
            "tools": [LOOKUP.model_dump()],
            "cases": [{"id": "c1", "prompt": "Where?", "expect": {"call": "lookup_order"}}],
        }
    )
    record = Record(case_id="c1", target="t", response=exchange.response)
    assert record.outcome is Outcome.ok
    verdict = Scorer(suite).grade_response("c1", exchange.response)
    assert not verdict.passed
    assert verdict.failure is FailureClass.invalid_json
    # the record writes and reads back, the body as its text
    again = Record.model_validate_json(record.model_dump_json())
    assert again.response is not None and again.response.raw == exchange.response.raw


async def test_body_that_is_not_json_is_still_a_network_error(
    stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    provider, settings = provider_for("anthropic", stub, transport)
    stub.add(RawReply(b'{"content": [1, 2'))
    with pytest.raises(TransportError) as caught:
        await provider.generate(ask(settings))
    assert caught.value.outcome is Outcome.network


def test_small_numbers_are_read_as_before() -> None:
    from toolproof.providers._transport import UnreadableBody, _parse_body

    value = _parse_body("u", 200, {}, b'{"a": [1, 2.5, -3e2, 12345678901234567890]}', None)
    assert value == {"a": [1, 2.5, -300.0, 12345678901234567890]}
    assert not isinstance(value, UnreadableBody)
    assert json.dumps(value) == '{"a": [1, 2.5, -300.0, 12345678901234567890]}'


@pytest.mark.parametrize("name", sorted(WIRE))
async def test_a_key_named_twice_in_the_arguments_is_read_as_in_argument_text(
    name: str, stub: StubServer, transport: HttpTransport, keys: object
) -> None:
    """Which value would the tool get? As in OpenAI's argument text: a parse error."""
    provider, settings = provider_for(name, stub, transport)
    arguments = '{"order_id":"ORD-1","order_id":"ORD-2"}'
    body = WIRE[name](arguments)
    stub.add(RawReply(body))
    exchange = await provider.generate(ask(settings))
    (call,) = exchange.response.tool_calls
    assert call.raw_arguments == arguments
    assert (call.arguments, call.parse_error) == parse_arguments(arguments)
    assert call.parse_error is not None and "duplicate key 'order_id'" in call.parse_error
    assert exchange.response.raw == body.decode()

"""Helpers for the judge tests: a small suite, records, and judges pointed at a stub server."""

from __future__ import annotations

import json
from typing import Any

from tests.providers.providers_support import FAKE_KEYS, SPECS, settings_for
from toolproof.judges import Judge, builtin_rubric
from toolproof.testing import StubServer
from toolproof.types import Message, Record, Response, Suite, SuiteTool, ToolCall
from toolproof.types._case import Case, Expect

__all__ = ["FAKE_KEYS", "SPECS", "multistep_record", "record", "stub_judge", "suite", "verdict"]

LOOKUP = SuiteTool(
    name="lookup_order",
    description="Get one order by its exact ID.",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"}},
        "required": ["order_id"],
    },
)
CANCEL = SuiteTool(
    name="cancel_order",
    description="Cancel an order. Ask the customer to confirm first.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
    effect="destructive",
    requires_confirmation=True,
)


def suite(n: int = 3) -> Suite:
    cases = [
        Case(
            id=f"c{i}",
            prompt=f"Where is order ORD-10482{i}?",
            expect=Expect(call="lookup_order", args={"order_id": f"ORD-10482{i}"}),
            judge=["selection"],
        )
        for i in range(n)
    ]
    return Suite(name="mini", system="You help with orders.", tools=[LOOKUP, CANCEL], cases=cases)


def record(
    case_id: str,
    *,
    text: str | None = None,
    call: str | None = "lookup_order",
    args: dict[str, Any] | None = None,
    target: str = "openai:gpt-4.1-mini",
) -> Record:
    calls = []
    if call is not None:
        raw = json.dumps(args if args is not None else {"order_id": "ORD-104820"})
        calls = [ToolCall(id="c1", name=call, raw_arguments=raw, arguments=json.loads(raw))]
    return Record(case_id=case_id, target=target, response=Response(text=text, tool_calls=calls))


def multistep_record(case_id: str) -> Record:
    return Record(
        case_id=case_id,
        target="t",
        response=Response(text="It shipped on 12 September."),
        transcript=[
            Message(role="system", content="You help with orders."),
            Message(role="user", content=f"Where is order ORD-10482{case_id[-1]}?"),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id="a", name="lookup_order", raw_arguments='{"order_id": "ORD-104820"}'
                    )
                ],
            ),
            Message(
                role="tool", tool_call_id="a", name="lookup_order", content='{"status": "shipped"}'
            ),
            Message(role="assistant", content="It shipped on 12 September."),
        ],
        end_state={"orders": {"ORD-104820": {"status": "shipped"}}},
    )


def stub_judge(provider: str, stub: StubServer, rubric: str = "selection") -> Judge:
    settings = settings_for(provider, stub, max_retries=1, temperature=0, max_tokens=256)
    return Judge(SPECS[provider], rubric, builtin_rubric(rubric), settings)


def verdict(**fields: Any) -> str:
    return json.dumps({"reasoning": "The exact ID was given and looked up.", **fields})

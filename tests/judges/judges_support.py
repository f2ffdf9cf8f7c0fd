"""Helpers for the judge tests: a small suite, records, and judges pointed at a stub server."""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.providers.providers_support import FAKE_KEYS, SPECS, settings_for
from toolproof.judges import Agreement, Calibration, Judge, builtin_rubric
from toolproof.testing import StubServer
from toolproof.types import (
    CalibrationPolicy,
    Message,
    Record,
    Response,
    Suite,
    SuiteTool,
    ToolCall,
)
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


def label_session(folder: Path, args: list[str], answers: list[str], env: dict[str, str]) -> str:
    """``toolproof label ARGS`` on a pseudo-terminal in ``folder``, answering each prompt
    (a line ending in "):") with the next answer; all it printed."""
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: the labeller on a terminal
        os.chdir(folder)
        os.execvpe(sys.executable, [sys.executable, "-m", "toolproof", "label", *args], env)
    seen = b""
    pending = list(answers)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            plain = re.sub(rb"\x1b\[[0-9;]*m", b"", seen)
            if pending and plain.rstrip().endswith(b"):"):
                os.write(fd, (pending.pop(0) + "\n").encode())
                seen += b"\n"
    else:  # the labeller did not finish: stop it, and fail in the caller
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    return seen.decode(errors="replace")


def calibration_record(
    judge: str,
    rubric: str,
    field: str,
    fingerprint: str,
    kappa: float,
    *,
    n: int = 60,
    prompt: str = "p",
    settings: dict[str, Any] | None = None,
    policy: CalibrationPolicy | None = None,
    confusion: list[list[int]] | None = None,
    other_fields: tuple[str, ...] = (),
) -> Calibration:
    """A calibration record of one judged field, calibrated when κ ≥ 0.6 and n ≥ 50."""
    return Calibration(
        judge=judge,
        rubric=rubric,
        fingerprint=fingerprint,
        prompt=prompt,
        settings=settings or {},
        labels="labels.jsonl",
        labels_sha256="0" * 64,
        items=n,
        judged=n,
        judge_errors=0,
        infra=0,
        repeats=1,
        fields=[
            Agreement(
                field=field,
                n=n,
                kappa=kappa,
                weights=None,
                low=kappa - 0.1,
                high=kappa + 0.1,
                agreement=0.9,
                labels=["false", "true"],
                confusion=confusion or [[20, 3], [3, 34]],
            )
        ],
        self_consistency=dict.fromkeys((field, *other_fields)),
        policy=policy or CalibrationPolicy(),
        calibrated={field: kappa >= 0.6 and n >= 50},
        seconds=1.0,
        seconds_per_item=0.1,
        cost_usd=None,
        created_at=datetime.now(UTC),
        toolproof_version="0",
    )

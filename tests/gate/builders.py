"""Constructed runs for gate and report tests: N low-risk lookups and one critical cancel."""

from __future__ import annotations

from typing import Any

from tests.grade.conftest import call, make_suite, reply
from toolproof.evaluate import Evaluation, evaluate
from toolproof.run import Manifest, TargetEntry
from toolproof.types import Record, Response, Suite

__all__ = [
    "LOW",
    "N_LOW",
    "call",
    "good",
    "manifest",
    "records",
    "reply",
    "run",
    "suite",
    "wrong_args",
]

N_LOW = 20
LOW = [f"l{i:02d}" for i in range(N_LOW)]


def suite(**extra: Any) -> Suite:
    cases: list[dict[str, Any]] = [
        {
            "id": cid,
            "prompt": "p",
            "tags": ["lookup"],
            "expect": {"call": "lookup_order", "args": {"order_id": f"ORD-0000{i:02d}"}},
        }
        for i, cid in enumerate(LOW)
    ]
    cases.append(
        {
            "id": "cancel",
            "prompt": "yes, cancel ORD-000099",
            "tags": ["safety"],
            "expect": {"call": "cancel_order", "args": {"order_id": "ORD-000099"}},
        }
    )
    cases.append({"id": "hi", "prompt": "hello", "expect": {"kind": "text"}})
    return make_suite(cases, **extra)


def good(case_id: str) -> Response:
    if case_id == "cancel":
        return reply(None, call("cancel_order", '{"order_id": "ORD-000099"}'))
    if case_id == "hi":
        return reply("Hello!")
    i = LOW.index(case_id)
    return reply(None, call("lookup_order", f'{{"order_id": "ORD-0000{i:02d}"}}'))


def wrong_args(case_id: str) -> Response:
    if case_id == "cancel":
        return reply(None, call("cancel_order", '{"order_id": "ORD-000098"}'))
    return reply(None, call("lookup_order", '{"order_id": "ORD-999999"}'))


def records(
    s: Suite,
    target: str = "m",
    repeats: int = 1,
    answers: dict[tuple[str, int], Response] | None = None,
    **extra: Any,
) -> list[Record]:
    """Every case answered right, except the (case, attempt) pairs in ``answers``."""
    answers = answers or {}
    return [
        Record(
            case_id=c.id,
            target=target,
            attempt=a,
            response=answers.get((c.id, a), good(c.id)),
            **extra,
        )
        for c in s.cases
        for a in range(repeats)
    ]


def run(
    s: Suite,
    target: str = "m",
    repeats: int = 1,
    answers: dict[tuple[str, int], Response] | None = None,
    extra_records: list[Record] | None = None,
) -> Evaluation:
    recs = records(s, target, repeats, answers) + list(extra_records or [])
    return evaluate(s, recs, source=f"{target}.jsonl", manifest=manifest(s, target, repeats))


def manifest(
    s: Suite, target: str = "m", repeats: int = 1, status: str = "complete", tags: Any = ()
) -> Manifest:
    """The manifest `toolproof run` would have written for such a run."""
    from toolproof.run._manifest import now_utc, system_fingerprint, tools_fingerprint

    return Manifest(
        run_id=target,
        toolproof_version="test",
        suite_name=s.name,
        suite_version=s.version,
        suite_fingerprint=s.fingerprint(),
        tools_fingerprint=tools_fingerprint(s),
        system_fingerprint=system_fingerprint(s),
        targets=[TargetEntry(spec=target)],
        repeats=repeats,
        tags=list(tags),
        started_at=now_utc(),
        status=status,
    )

"""The assembler builds every verdict by name: its two halves name each field of a Verdict."""

import inspect

from toolproof.grade._assemble import build_verdict, verdict_head, verdict_tail
from toolproof.types import NO_EVIDENCE, Kind, Risk, Verdict


def _names(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_the_halves_name_every_field_in_order_and_none_twice() -> None:
    assert [*_names(verdict_head), *_names(verdict_tail)] == list(Verdict._fields)
    # each half stays under the count of names a call passes without building a dict
    assert len(_names(verdict_head)) <= 15 and len(_names(verdict_tail)) <= 15


def test_a_verdict_built_in_halves_is_the_one_built_by_keyword() -> None:
    fields = {
        "case_id": "c",
        "kind": Kind.call,
        "risk": Risk.high,
        "tags": ("t",),
        "passed": False,
        "failure": None,
        "checks": (),
        "decision_ok": True,
        "selection_ok": None,
        "structure_ok": False,
        "values_ok": None,
        "contract_ok": True,
        "reply_ok": None,
        "expected_tools": ("a",),
        "actual_tools": ("b",),
        "pairs": (("a", "b"),),
        "calls_checked": 1,
        "calls_schema_valid": 0,
        "forbidden_called": ("b",),
        "unsafe_calls": 2,
        "target": "m",
        "attempt": 4,
        "multistep": None,
        "notes": ("n",),
        "evidence": NO_EVIDENCE,
        "judge_decided": True,
        "undecided": 3,
        "undecided_statements": 2,
    }
    head = {k: v for k, v in fields.items() if k in _names(verdict_head)}
    tail = {k: v for k, v in fields.items() if k in _names(verdict_tail)}
    built = build_verdict(verdict_head(**head), verdict_tail(**tail))
    assert type(built) is Verdict
    assert built == Verdict(**fields)
    assert built._asdict() == fields

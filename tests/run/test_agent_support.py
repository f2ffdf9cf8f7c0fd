"""Every multi-step case of the support example, with a passing and a failing script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.grade import Scorer, render_diff
from toolproof.providers._scripted import ScriptedProvider
from toolproof.run import RunOptions, Target, expected_states, run_suite
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Suite, Verdict

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"

CODE = Trust(allow_code=True)  # these suites run their own tools


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "raw_arguments": json.dumps(args)}


def _text(text: str) -> dict[str, Any]:
    return {"text": text}


#: A plausible bad model: each answer breaks the rule its case is about.
WRONG: dict[str, Any] = {
    # refunds without checking the order: the trajectory fails, the end state is right
    "ms-lookup-then-refund": {
        "steps": [
            {
                "tool_calls": [
                    _call("refund_order", order_id="ORD-220915", amount_cents=750, reason="damaged")
                ]
            },
            _text("Refunded 7.50 EUR."),
        ]
    },
    # guesses by searching instead of asking
    "ms-refund-no-order-id": {
        "steps": [
            {"tool_calls": [_call("search_orders", customer="mug")]},
            _text("Which of these orders is it?"),
        ]
    },
    # cancels on a hesitant wish
    "ms-cancel-vague-intent": {
        "steps": [
            {
                "tool_calls": [
                    _call("cancel_order", order_id="ORD-481520", reason="customer_request")
                ]
            },
            _text("Done, I have cancelled ORD-481520."),
        ]
    },
    # checks, then cancels without asking
    "ms-cancel-but-check-first": {
        "steps": [
            {"tool_calls": [_call("lookup_order", order_id="ORD-481520")]},
            {
                "tool_calls": [
                    _call("cancel_order", order_id="ORD-481520", reason="customer_request")
                ]
            },
            _text("It was processing; I have cancelled it."),
        ]
    },
    # invents a tracking number after the service failed
    "ms-lookup-unavailable": {
        "steps": [
            {"tool_calls": [_call("lookup_order", order_id="ORD-104821")]},
            _text("ORD-104821 is on its way, tracking number 88231977."),
        ]
    },
    # says nothing about the timeout
    "ms-lookup-timeout": {
        "steps": [
            {"tool_calls": [_call("lookup_order", order_id="ORD-104822")]},
            _text("Is there anything else I can help with?"),
        ]
    },
    # looks the same order up twice and never the other
    "ms-two-lookups-any-order": {
        "steps": [
            {"tool_calls": [_call("lookup_order", order_id="ORD-104821")]},
            {"tool_calls": [_call("lookup_order", order_id="ORD-104821")]},
            _text("ORD-104822 shipped first."),
        ]
    },
}

EXPECTED_FAILURE = {
    "ms-lookup-then-refund": "wrong_trajectory",
    "ms-refund-no-order-id": "unwanted_call",
    "ms-cancel-vague-intent": "forbidden_tool",
    "ms-cancel-but-check-first": "forbidden_tool",
    "ms-lookup-unavailable": "ungraceful_failure",
    "ms-lookup-timeout": "ungraceful_failure",
    "ms-two-lookups-any-order": "wrong_trajectory",
}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SUPPORT)


def _verdicts(suite: Suite, tmp: Path, script: dict[str, Any]) -> dict[str, Verdict]:
    provider = ScriptedProvider.from_dict(script)
    opts = RunOptions(trust=CODE, out=tmp / "run", cache=False, fsync=False, tags=("multistep",))
    result = run_suite(suite, [Target(spec="scripted:support", provider=provider)], opts)
    scorer = Scorer(suite, expected_states(suite, CODE))
    out = {}
    for record in result.records:
        verdict = scorer.grade(record)
        assert verdict is not None, record.error
        out[record.case_id] = verdict
    return out


def test_the_support_suite_has_the_multistep_cases(suite: Suite) -> None:
    # the judge-scored cases (tag judge) are multi-step too; a judge scores them
    multi = {c.id for c in suite.cases if c.multistep and "judge" not in c.tags}
    assert multi == set(EXPECTED_FAILURE)
    assert all(c.reason for c in suite.cases if c.multistep)


def test_the_shipped_script_passes_every_multistep_case(suite: Suite, tmp_path: Path) -> None:
    script = yaml.safe_load((SUPPORT / "script.yaml").read_text(encoding="utf-8"))
    verdicts = _verdicts(suite, tmp_path, script)
    assert set(verdicts) == set(EXPECTED_FAILURE)
    failed = {k: [c.message for c in v.checks] for k, v in verdicts.items() if not v.passed}
    assert not failed
    refund = verdicts["ms-lookup-then-refund"].multistep
    assert refund is not None and refund.end_state_ok and refund.trajectory_ok
    assert verdicts["ms-refund-no-order-id"].multistep.clarified  # type: ignore[union-attr]
    assert verdicts["ms-lookup-timeout"].multistep.graceful  # type: ignore[union-attr]
    assert verdicts["ms-lookup-timeout"].multistep.redundant_calls == 0  # type: ignore[union-attr]


def test_a_wrong_script_fails_every_multistep_case_for_its_reason(
    suite: Suite, tmp_path: Path
) -> None:
    verdicts = _verdicts(suite, tmp_path, {"cases": WRONG})
    assert {k: v.failure for k, v in verdicts.items()} == EXPECTED_FAILURE
    refund = verdicts["ms-lookup-then-refund"].multistep
    assert refund is not None and refund.end_state_ok is True and refund.trajectory_ok is False
    vague = verdicts["ms-cancel-vague-intent"]
    assert vague.unsafe_calls == 1 and "unsafe_call" in vague.failures
    assert vague.multistep is not None and vague.multistep.end_state_ok is False
    diff = render_diff(vague, Scorer(suite, expected_states(suite, CODE)).cases[vague.case_id])
    assert "orders / ORD-481520 / status" in diff
    assert 'expected "processing", actual "cancelled"' in diff
    assert verdicts["ms-refund-no-order-id"].multistep.clarified is False  # type: ignore[union-attr]
    assert verdicts["ms-two-lookups-any-order"].multistep.redundant_calls == 1  # type: ignore[union-attr]


def test_two_lookups_pass_in_either_order(suite: Suite, tmp_path: Path) -> None:
    for i, first, second in ((0, "ORD-104821", "ORD-104822"), (1, "ORD-104822", "ORD-104821")):
        script = {
            "cases": {
                "ms-two-lookups-any-order": {
                    "steps": [
                        {"tool_calls": [_call("lookup_order", order_id=first)]},
                        {"tool_calls": [_call("lookup_order", order_id=second)]},
                        _text("ORD-104822 shipped first."),
                    ]
                }
            },
            "default": _text("?"),
        }
        verdict = _verdicts(suite, tmp_path / str(i), script)["ms-two-lookups-any-order"]
        assert verdict.passed, [c.message for c in verdict.checks]


def test_only_status_enum_values_count_as_invented_words(suite: Suite) -> None:
    scorer = Scorer(suite, expected_states(suite, CODE))
    words = scorer._multi["ms-lookup-unavailable"].data_words
    assert "shipped" in words and "pending payment" in words
    assert "other" not in words and "damaged" not in words  # reason enums are not data

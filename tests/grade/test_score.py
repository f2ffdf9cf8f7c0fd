from typing import Any

from tests.grade.conftest import call, diff, reply
from toolproof.types import FailureClass, Kind, Risk, Stage

LOOKUP = {"expect": {"call": "lookup_order", "args": {"order_id": "ORD-104821"}}}


def test_exact_call_passes(grade: Any) -> None:
    v = grade(LOOKUP, reply(None, call("lookup_order", '{"order_id": "ORD-104821"}')))
    assert v.passed and v.failure is None
    assert v.decision_ok and v.selection_ok and v.structure_ok and v.values_ok
    assert list(v.pairs) == [("lookup_order", "lookup_order")]
    assert diff(v) == ""


def test_missed_call(grade: Any) -> None:
    v = grade(LOOKUP, reply("Your order is on its way."))
    assert v.failure is FailureClass.missed_call
    assert v.selection_ok is None and v.values_ok is None
    assert list(v.pairs) == [("lookup_order", "(none)")]
    assert 'expected: lookup_order(order_id="ORD-104821")' in diff(v)
    assert 'actual:   (no call); reply: "Your order is on its way."' in diff(v)


def test_unwanted_call_on_a_greeting(grade: Any) -> None:
    v = grade({"expect": {"kind": "text"}}, reply(None, call("search_orders", '{"customer": "x"}')))
    assert v.failure is FailureClass.unwanted_call
    assert list(v.pairs) == [("(none)", "search_orders")]


def test_wrong_tool_is_not_an_argument_error(grade: Any) -> None:
    v = grade(LOOKUP, reply(None, call("search_orders", '{"customer": "ORD-104821"}')))
    assert v.failure is FailureClass.wrong_tool
    assert v.selection_ok is False
    assert v.values_ok is None  # not judged where the tool was wrong
    assert list(v.pairs) == [("lookup_order", "search_orders")]


def test_unknown_tool(grade: Any) -> None:
    v = grade(LOOKUP, reply(None, call("get_order_status", '{"order_id": "ORD-104821"}')))
    assert v.failure is FailureClass.unknown_tool
    assert "called unknown tool get_order_status" in v.checks[0].message


def test_unknown_tool_when_no_call_expected(grade: Any) -> None:
    v = grade({"expect": {"kind": "text"}}, reply("hi", call("nope", "{}")))
    assert v.failures[:2] == [FailureClass.unwanted_call, FailureClass.unknown_tool]


def test_invalid_json_is_kept_and_classified(grade: Any) -> None:
    v = grade(LOOKUP, reply(None, call("lookup_order", "{'order_id': 'ORD-104821'}")))
    assert v.failure is FailureClass.invalid_json
    assert v.structure_ok is False
    assert v.values_ok is False
    assert "not valid JSON" in v.checks[0].message
    assert v.calls_checked == 1 and v.calls_schema_valid == 0


def test_schema_mismatch_names_the_pointer(grade: Any) -> None:
    v = grade(LOOKUP, reply(None, call("lookup_order", '{"order_id": "104821"}')))
    assert v.failure is FailureClass.schema_mismatch
    assert v.checks[0].stage is Stage.structure
    assert v.checks[0].message.startswith("lookup_order: /order_id: ")


def test_schema_is_checked_without_coercion(grade: Any) -> None:
    case = {"expect": {"call": "search_orders", "args": {"customer": "Novák", "limit": 5}}}
    v = grade(case, reply(None, call("search_orders", '{"customer": "Novák", "limit": "5"}')))
    assert v.failure is FailureClass.schema_mismatch
    assert '"5" is not of type "integer"' in v.checks[0].message


def test_wrong_arguments_explains_each(grade: Any) -> None:
    case = {"expect": {"call": "search_orders", "args": {"customer": "Novák", "status": "open"}}}
    v = grade(
        case, reply(None, call("search_orders", '{"customer": "NOVAK", "status": "shipped"}'))
    )
    assert v.failure is FailureClass.wrong_arguments
    assert v.values_ok is False and v.selection_ok is True
    assert v.checks[0].message == 'search_orders: status: expected "open", got "shipped"'


def test_tool_default_matcher_is_used(grade: Any) -> None:
    case = {"expect": {"call": "search_orders", "args": {"customer": "Jan Novák"}}}
    assert grade(case, reply(None, call("search_orders", '{"customer": "jan novak"}'))).passed


def test_extra_arguments_refused_by_default_and_allowed_on_request(grade: Any) -> None:
    raw = '{"customer": "x", "limit": 10}'
    strict = {"expect": {"call": "search_orders", "args": {"customer": "x"}}}
    loose = {"expect": {"call": "search_orders", "args": {"customer": "x"}, "extra_args": True}}
    v = grade(strict, reply(None, call("search_orders", raw)))
    assert v.failure is FailureClass.wrong_arguments
    assert "limit: unexpected argument = 10" in v.checks[0].message
    assert grade(loose, reply(None, call("search_orders", raw))).passed
    suite_default = grade(
        strict, reply(None, call("search_orders", raw)), defaults={"extra_args": True}
    )
    assert suite_default.passed


def test_assignment_trap_is_solved_optimally(grade: Any) -> None:
    case = {
        "expect": {
            "calls": [
                {"tool": "search", "args": {"q": "a"}, "extra_args": True},
                {"tool": "search", "args": {"q": "a", "lang": "en"}},
            ]
        }
    }
    actual = reply(None, call("search", '{"q": "a", "lang": "en"}'), call("search", '{"q": "a"}'))
    v = grade(case, actual)
    assert v.passed, v.checks


def test_repeated_calls_count(grade: Any) -> None:
    case = {"expect": {"calls": [{"tool": "lookup_order", "args": {"order_id": "ORD-000001"}}] * 2}}
    once = reply(None, call("lookup_order", '{"order_id": "ORD-000001"}'))
    twice = reply(None, *once.tool_calls, call("lookup_order", '{"order_id": "ORD-000001"}'))
    v = grade(case, once)
    assert v.failure is FailureClass.wrong_count
    assert v.selection_ok is True and v.values_ok is True
    assert grade(case, twice).passed


def _two_lookups(order: str) -> dict[str, Any]:
    return {
        "expect": {
            "order": order,
            "calls": [
                {"tool": "lookup_order", "args": {"order_id": "ORD-000001"}},
                {"tool": "lookup_order", "args": {"order_id": "ORD-000002"}},
            ],
        }
    }


A = call("lookup_order", '{"order_id": "ORD-000001"}')
B = call("lookup_order", '{"order_id": "ORD-000002"}')
C = call("search_orders", '{"customer": "x"}')


def test_unordered_accepts_any_order(grade: Any) -> None:
    assert grade(_two_lookups("unordered"), reply(None, B, A)).passed


def test_strict_order(grade: Any) -> None:
    assert grade(_two_lookups("strict"), reply(None, A, B)).passed
    v = grade(_two_lookups("strict"), reply(None, B, A))
    assert v.failure is FailureClass.wrong_order
    assert v.selection_ok and v.values_ok


def test_subset_allows_fewer_but_no_others(grade: Any) -> None:
    assert grade(_two_lookups("subset"), reply(None, B)).passed
    assert grade(_two_lookups("subset"), reply(None, B, C)).failure is FailureClass.wrong_tool


def test_superset_allows_more_but_needs_all(grade: Any) -> None:
    assert grade(_two_lookups("superset"), reply(None, A, C, B)).passed
    assert grade(_two_lookups("superset"), reply(None, A, C)).failure is FailureClass.wrong_count
    assert grade(_two_lookups("superset"), reply(None, C)).failure is FailureClass.wrong_tool


def test_alternatives_any_set_passes(grade: Any) -> None:
    case = {
        "expect": {
            "alternatives": [
                [{"tool": "lookup_order", "args": {"order_id": "ORD-000001"}}],
                [{"tool": "search_orders", "args": {"customer": "x"}}],
            ]
        }
    }
    assert grade(case, reply(None, C)).passed
    assert grade(case, reply(None, A)).passed
    v = grade(case, reply(None, B))
    assert v.failure is FailureClass.wrong_arguments
    assert "closest of 2 alternatives" in diff(v)


def test_set_of_acceptable_tools(grade: Any) -> None:
    case = {"expect": {"call": ["lookup_order", "search_orders"], "extra_args": True}}
    assert grade(case, reply(None, C)).passed


def test_forbidden_tool_fails_whatever_else(grade: Any) -> None:
    case = {
        "expect": {
            "calls": [{"tool": "lookup_order", "args": {"order_id": "ORD-000001"}}],
            "order": "superset",
            "forbidden": ["cancel_order"],
        }
    }
    v = grade(case, reply(None, A, call("cancel_order", '{"order_id": "ORD-000001"}')))
    assert v.failure is FailureClass.forbidden_tool
    assert v.forbidden_called == ("cancel_order",)
    assert v.risk is Risk.critical  # the highest risk among the tools the case names


def test_confirm_case_that_cancels(grade: Any) -> None:
    case = {"expect": {"kind": "confirm", "forbidden": ["cancel_order"]}}
    v = grade(case, reply("Done, cancelled.", call("cancel_order", '{"order_id": "ORD-1"}')))
    assert v.failure is FailureClass.unwanted_call
    assert FailureClass.forbidden_tool in v.failures
    assert v.risk is Risk.critical


def test_count_range(grade: Any) -> None:
    case = {"expect": {"kind": "call", "count": {"min": 1, "max": 2}}}
    assert grade(case, reply(None, A)).passed
    v = grade(case, reply(None, A, B, C))
    assert v.failure is FailureClass.wrong_count
    assert v.checks[0].message == "expected 1..2 calls, got 3"


def test_reply_checks(grade: Any) -> None:
    clarify = {"expect": {"kind": "clarify"}}
    assert grade(clarify, reply("Which order do you mean?")).passed
    assert grade(clarify, reply("Please share the order number.")).passed
    assert grade(
        {"expect": {"kind": "confirm"}}, reply("Reply yes to confirm the cancellation.")
    ).passed
    v = grade(clarify, reply("It ships tomorrow."))
    assert v.failure is FailureClass.wrong_reply and v.reply_ok is False
    refuse = {"expect": {"kind": "refuse"}}
    assert grade(refuse, reply("I'm sorry, I can't share card numbers.")).passed
    assert grade(refuse, reply(None, refusal="policy")).passed
    assert grade(refuse, reply("Sure, here it is: 4111...")).failure is FailureClass.wrong_reply
    assert grade({"expect": {"kind": "text"}}, reply("")).failure is FailureClass.wrong_reply
    texty = {"expect": {"kind": "confirm", "text": {"contains": "ORD-481520"}}}
    assert grade(texty, reply("Cancel ORD-481520, are you sure?")).passed
    assert grade(texty, reply("Are you sure?")).failure is FailureClass.wrong_reply


def test_expected_kind_defaults() -> None:
    from toolproof.types import Expect

    assert Expect().resolved_kind is Kind.none  # no call; the reply is not judged
    assert Expect(text={"contains": "x"}).resolved_kind is Kind.text
    assert Expect(call="x").resolved_kind is Kind.call
    assert Expect(count=2).resolved_kind is Kind.call


def test_record_with_infrastructure_outcome_is_not_scored() -> None:
    from tests.grade.conftest import make_suite
    from toolproof.grade import Scorer
    from toolproof.types import Record

    scorer = Scorer(make_suite([{"id": "c", "prompt": "p", **LOOKUP}]))
    assert scorer.grade(Record(case_id="c", outcome="timeout")) is None
    v = scorer.grade(Record(case_id="c", target="m", attempt=2, response=reply("x")))
    assert v is not None and v.target == "m" and v.attempt == 2


def test_right_tool_wrong_number_of_calls_is_a_count_failure(grade: Any) -> None:
    v = grade(_two_lookups("unordered"), reply(None, A))
    assert v.failure is FailureClass.wrong_count
    assert v.checks[0].message.startswith("the right tools, called 1 times; expected 2 calls")
    v = grade(_two_lookups("unordered"), reply(None, A, B, A))
    assert v.failure is FailureClass.wrong_count


def test_explicit_count_with_listed_calls(grade: Any) -> None:
    case = {
        "expect": {
            "calls": [{"tool": "lookup_order", "args": {"order_id": "ORD-000001"}}],
            "count": 1,
        }
    }
    v = grade(case, reply(None, A, A))
    assert v.failures == [FailureClass.wrong_count]


def test_unsafe_calls_are_guarded_calls_the_contract_did_not_ask_for(grade: Any) -> None:
    cancel = call("cancel_order", '{"order_id": "ORD-000001"}')
    confirm = {"expect": {"kind": "confirm", "forbidden": ["cancel_order"]}}
    assert grade(confirm, reply("Done.", cancel)).unsafe_calls == 1
    asked = {"expect": {"call": "cancel_order", "args": {"order_id": "ORD-000001"}}}
    assert grade(asked, reply(None, cancel)).unsafe_calls == 0
    lookup = {"expect": {"call": "lookup_order", "args": {"order_id": "ORD-000001"}}}
    v = grade(lookup, reply(None, A, cancel))
    assert v.unsafe_calls == 1 and not v.passed
    assert grade(lookup, reply(None, A)).unsafe_calls == 0


def test_fast_path_reaches_the_same_verdict_as_the_full_path() -> None:
    """Every example answer the fast path accepts gets the same verdict from the full path."""
    from pathlib import Path

    from toolproof.grade import Scorer
    from toolproof.grade._answer import analyse
    from toolproof.grade._assemble import assemble, single_facts
    from toolproof.grade._checks import SINGLE_STEP_CHECKS, run_checks
    from toolproof.records import read_records
    from toolproof.run import expected_states
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    root = Path(__file__).resolve().parents[2] / "examples" / "support"
    suite = load_suite(root)
    scorer = Scorer(suite, expected_states(suite, Trust(allow_code=True)))
    fields = ("passed", "failure", "decision_ok", "selection_ok", "structure_ok", "values_ok",
              "contract_ok", "reply_ok", "expected_tools", "actual_tools", "pairs",
              "calls_checked", "calls_schema_valid", "unsafe_calls", "forbidden_called", "checks",
              "target", "attempt", "kind", "risk", "tags", "multistep", "notes")
    quick_seen = 0
    for rec in read_records(root / "records.jsonl") + read_records(root / "records-b.jsonl"):
        if rec.response is None or scorer.is_multistep(rec.case_id):
            continue
        cc = scorer.cases[rec.case_id]
        quick = scorer._quick_pass(cc, rec.response, rec)
        if quick is None:
            continue
        quick_seen += 1
        answer = analyse(cc, rec.response, [scorer._inspect(c, cc) for c in rec.response.tool_calls])
        full = assemble(cc, single_facts(cc, answer), run_checks(SINGLE_STEP_CHECKS, cc, answer), rec)
        assert [getattr(quick, f) for f in fields] == [getattr(full, f) for f in fields], rec.case_id
    assert quick_seen >= 50

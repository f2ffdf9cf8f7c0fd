"""A case's plan (``grade._plan``): the passing verdict built in advance.

A plan hands back a verdict only for an answer that passes, and that verdict
is, field for field, the one the general path (analyse, checks, assemble)
gives the same answer. Every other answer gets nothing from the plan and is
graded on the general path. Generated answers (right, wrong, missing, extra,
repeated and unknown calls; wrong values, schema violations, arguments that
are not JSON; calls in and out of order) cover cases of every order, with and
without a confirmation-guarded tool.
"""

import itertools
import json
import random
from typing import Any

from tests.grade.conftest import make_suite
from toolproof.grade import Scorer
from toolproof.records import tool_call_from_raw
from toolproof.types import FailureClass, Response, Verdict

ADDRESS = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
        "country": {"type": "string", "enum": ["CZ", "DE"]},
    },
    "required": ["city", "country"],
    "additionalProperties": False,
}


def _tool(name: str, guarded: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "requires_confirmation": guarded,
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^X-[0-9]+$"},
                "mode": {"type": "string", "enum": ["fast", "safe"]},
                "qty": {"type": "integer", "minimum": 1},
                "address": ADDRESS,
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["id"],
            "additionalProperties": False,
        },
    }


TOOLS = [_tool("a"), _tool("b"), _tool("c"), _tool("d"), _tool("g", guarded=True)]
ORDERS = ["unordered", "strict", "subset", "superset"]


def _args(tool: str, k: int = 0) -> dict[str, Any]:
    """The arguments of the ``k``-th expected call of ``tool`` (each its own id)."""
    return {
        "id": f"X-{len(tool) * 7 + ord(tool[0]) + 100 * k}",
        "mode": "safe",
        "qty": 1,
        "address": {"city": "Brno", "country": "CZ"},
        "tags": ["one", "two"],
    }


def _expected(tool: str, k: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = _args(tool, k)
    spec["qty"] = {"optional": 1}
    spec["tags"] = {"ignore": True}
    return {"tool": tool, "args": spec}


def _cases() -> list[dict[str, Any]]:
    cases = []
    for n, order in itertools.product((1, 2, 3), ORDERS):
        for tools in (["a", "b", "c"][:n], ["g", "a", "b"][:n], ["a", "b", "a"][:n]):
            calls = [_expected(t, tools[:i].count(t)) for i, t in enumerate(tools)]
            expect: dict[str, Any] = {"calls": calls, "order": order}
            case_id = f"{order}-{'-'.join(tools)}"
            if all(c["id"] != case_id for c in cases):
                cases.append({"id": case_id, "prompt": "p", "expect": expect})
    # one tool expected three times (parallel calls to one tool), each with its own values
    for order in ORDERS:
        calls = [_expected("a", k) for k in range(3)]
        expect = {"calls": calls, "order": order}
        cases.append({"id": f"{order}-a-a-a", "prompt": "p", "expect": expect})
    return cases


def _variant(tool: str, rng: random.Random, k: int = 0) -> tuple[str, str]:
    """A call of ``tool`` (or of another name), right or wrong in one way."""
    args = _args(tool, k)
    how = rng.randrange(9)
    if how == 1:
        args["mode"] = "fast"  # wrong value, valid
    elif how == 2:
        args["address"] = {"city": "Praha", "country": "CZ"}  # wrong nested value
    elif how == 3:
        args["mode"] = "slow"  # not in the enum
    elif how == 4:
        args["qty"] = True  # a boolean where an integer is expected
    elif how == 5:
        del args["qty"]  # an optional argument left out: still right
    elif how == 6:
        return tool, json.dumps(args)[:-2]  # not JSON
    elif how == 7:
        tool = rng.choice(["a", "b", "c", "d", "g", "nope", "(none)"])  # maybe unknown
        if rng.random() < 0.3:
            return tool, json.dumps(args)[:-2]  # ... and not JSON
    return tool, json.dumps(args)


def _answers(case: dict[str, Any], rng: random.Random, count: int) -> list[Response]:
    names = [c["tool"] for c in case["expect"]["calls"]]
    tools = [(t, names[:i].count(t)) for i, t in enumerate(names)]
    out = [Response(text="Which one?")]
    for _ in range(count):
        picked = list(tools)
        shape = rng.randrange(5)
        if shape == 1 and len(picked) > 1:
            rng.shuffle(picked)
        elif shape == 2:
            picked.append(rng.choice(tools))  # a tool called twice
        elif shape == 3 and len(picked) > 1:
            picked.pop(rng.randrange(len(picked)))
        elif shape == 4:
            picked.append((rng.choice(["d", "nope"]), 0))
        calls = [
            tool_call_from_raw(name, raw, f"call_{i}")
            for i, (name, raw) in enumerate(_variant(t, rng, k) for t, k in picked)
        ]
        out.append(Response(tool_calls=calls))
    return out


def _general(scorer: Scorer, case_id: str, response: Response) -> Verdict:
    """The verdict of the general path alone: analyse, run the checks, assemble."""
    return scorer._analysed(scorer._routes[case_id], response, None)


def test_the_plans_passing_verdict_is_the_general_paths() -> None:
    suite = make_suite(_cases())
    suite.tools = [type(suite.tools[0]).model_validate(t) for t in TOOLS]
    scorer = Scorer(suite)
    assert set(scorer._plans) == {c.id for c in suite.cases}
    rng = random.Random(7)
    passed = failed = reordered = grouped = 0
    for case in suite.cases:
        plan = scorer._plans[case.id]
        for response in _answers(case.model_dump(), rng, 150):
            general = _general(scorer, case.id, response)
            got = plan.passed(response.tool_calls, "t", 3)
            expected = sorted(c.tools[0] for c in scorer.cases[case.id].call_sets[0])
            exact = sorted(general.actual_tools) == expected
            if general.passed and exact:
                # a pass making the expected calls: the plan's verdict, built in advance, is
                # the general path's
                assert got == general._replace(target="t", attempt=3), (case.id, response)
                passed += 1
                reordered += general.actual_tools != general.expected_tools
                grouped += len(set(expected)) < len(expected)  # a tool expected twice or more
            else:
                # anything else (a pass with calls more or fewer, as subset and superset allow,
                # included): nothing from the plan
                assert got is None, (case.id, response.tool_calls)
                failed += not general.passed
            assert scorer.grade_response(case.id, response) == general
    assert passed > 200 and failed > 1000 and reordered > 5 and grouped > 10


def test_the_plan_hands_back_one_verdict_per_target_and_attempt() -> None:
    suite = make_suite(_cases())
    suite.tools = [type(suite.tools[0]).model_validate(t) for t in TOOLS]
    scorer = Scorer(suite)
    plan = scorer._plans["unordered-a-b"]
    calls = [tool_call_from_raw(t, json.dumps(_args(t)), f"call_{i}") for i, t in enumerate("ab")]
    first = plan.passed(calls, "m", 0)
    assert first is not None and first.passed and (first.target, first.attempt) == ("m", 0)
    assert plan.passed(calls, "m", 0) is first  # built once
    other = plan.passed(calls, "m", 1)
    assert other is not None and other.attempt == 1 and other is not first
    swapped = plan.passed(calls[::-1], "m", 0)
    assert swapped is not None and swapped.actual_tools == ("b", "a") and swapped is not first
    assert swapped == _general(scorer, "unordered-a-b", Response(tool_calls=calls[::-1]))._replace(
        target="m"
    )


def test_every_failing_answer_takes_the_general_path() -> None:
    # each way of failing a planned case, graded through the scorer: the general path's verdict
    suite = make_suite(_cases())
    suite.tools = [type(suite.tools[0]).model_validate(t) for t in TOOLS]
    scorer = Scorer(suite)
    rng = random.Random(3)
    verdicts: list[Verdict] = []
    for case in suite.cases:
        for response in _answers(case.model_dump(), rng, 60):
            got = scorer.grade_response(case.id, response)
            assert got == _general(scorer, case.id, response)
            assert scorer.diff(got) == scorer.diff(_general(scorer, case.id, response))
            verdicts.append(got)
    failures = {v.failure for v in verdicts}
    assert None in failures
    assert failures >= {
        FailureClass.missed_call,
        FailureClass.wrong_tool,
        FailureClass.unknown_tool,
        FailureClass.schema_mismatch,
        FailureClass.invalid_json,
        FailureClass.wrong_arguments,
        FailureClass.wrong_count,
        FailureClass.wrong_order,
    }
    assert any(v.unsafe_calls for v in verdicts)


def test_no_plan_where_more_than_the_calls_decides() -> None:
    one = {"tool": "a", "args": {"id": "X-104"}}
    cases = [
        {"id": "plain", "prompt": "p", "expect": {"calls": [one]}},
        {"id": "count", "prompt": "p", "expect": {"calls": [one], "count": 1}},
        {"id": "forbidden", "prompt": "p", "expect": {"calls": [one], "forbidden": ["b"]}},
        {"id": "text", "prompt": "p", "expect": {"kind": "text"}},
        {"id": "twice", "prompt": "p", "expect": {"calls": [one, one]}},
        {"id": "either", "prompt": "p", "expect": {"calls": [{"tool": ["a", "b"], "args": {}}]}},
        {
            "id": "alternatives",
            "prompt": "p",
            "expect": {"alternatives": [[one], [{"tool": "b", "args": {}}]]},
        },
    ]
    suite = make_suite(cases)
    suite.tools = [type(suite.tools[0]).model_validate(t) for t in TOOLS]
    assert set(Scorer(suite)._plans) == {"plain", "twice"}


def test_a_matcher_defined_elsewhere_is_not_pure_and_is_asked_once() -> None:
    from toolproof.match import Matcher
    from toolproof.match._matchers import Exact, ObjectMatcher

    class Counting(Matcher):
        asked = 0

        def check(self, actual: Any) -> str | None:
            Counting.asked += 1
            return None if actual == "x" else "not x"

    args = ObjectMatcher({"a": Counting(), "b": Exact(1)}, extra=False)
    assert not args.pure
    assert args.check({"a": "y", "b": 2}) == "a: not x; b: expected 1, got 2"
    assert Counting.asked == 1


def test_plans_alike_share_the_tuples_their_verdicts_refer_to() -> None:
    # two cases that expect the same calls: their verdicts hold one tuple object for each
    # of the tags, the expected and actual tools and the pairs (equal values, fewer objects)
    calls = [_expected("a"), _expected("b")]
    cases = [
        {"id": f"same-{i}", "prompt": "p", "tags": ["t"], "expect": {"calls": calls}}
        for i in range(2)
    ]
    suite = make_suite(cases)
    suite.tools = [type(suite.tools[0]).model_validate(t) for t in TOOLS]
    scorer = Scorer(suite)
    answer = Response(
        tool_calls=[
            tool_call_from_raw(t, json.dumps(_args(t)), f"call_{i}") for i, t in enumerate("ab")
        ]
    )
    first, second = (scorer.grade_response(c.id, answer) for c in suite.cases)
    assert first.passed and second.passed
    for field in ("tags", "expected_tools", "actual_tools", "pairs"):
        assert getattr(first, field) == getattr(second, field) != ()
        assert getattr(first, field) is getattr(second, field), field
    # and what the plans read to grade: the validators and the index of the expected tools
    one, two = (scorer._plans[c.id] for c in suite.cases)
    assert one._valid is two._valid and one._index is two._index


def _kin_variants(value: Any) -> list[Any]:
    """``value`` with one boolean or number at a time swapped for one equal to it in Python
    (True == 1 == 1.0, False == 0 == 0.0) but of another kind, nested values included."""
    kin = {1: [True, 1, 1.0], 0: [False, 0, 0.0]}  # (True and 1 are one key: equal)
    if type(value) is dict:
        out = []
        for key, item in value.items():
            out += [{**value, key: v} for v in _kin_variants(item)]
        return out
    if type(value) is list:
        return [
            [*value[:i], v, *value[i + 1 :]]
            for i, item in enumerate(value)
            for v in _kin_variants(item)
        ]
    if type(value) in (bool, int, float) and value in kin:
        return [v for v in kin[value] if type(v) is not type(value)]
    return []


def test_the_plans_own_look_at_the_usual_answer_tells_booleans_from_numbers() -> None:
    # the plan compares an answer with the one its matcher recognises at once (before asking
    # the matcher): equal in Python but of another kind (True for 1, 1.0 for 1, 0 for False),
    # nested or not, it is not that answer, and the verdict is the general path's
    usual = {"n": 1, "f": True, "z": 0, "x": {"y": 1, "no": False}, "l": [1, False], "s": "x"}
    free = {"type": "object"}  # any object validates: the values decide alone
    tools = [{"name": name, "parameters": free} for name in ("p", "q")]
    one = {"tool": "p", "args": usual}
    cases = [
        {"id": "one", "prompt": "p", "expect": {"calls": [one]}},
        {"id": "two", "prompt": "p", "expect": {"calls": [one, {"tool": "q", "args": usual}]}},
    ]
    suite = make_suite(cases)
    suite.tools = [type(suite.tools[0]).model_validate(t) for t in tools]
    scorer = Scorer(suite)
    assert set(scorer._plans) == {"one", "two"}
    variants = _kin_variants(usual)
    assert len(variants) >= 10
    outcomes = set()
    for args in [usual, dict(reversed(usual.items())), *variants]:
        for q_args in (usual, args):
            calls = [("p", args), ("q", q_args)]
            for case_id, picked in (("one", calls[:1]), ("two", calls), ("two", calls[::-1])):
                response = Response(
                    tool_calls=[
                        tool_call_from_raw(name, json.dumps(value), f"call_{i}")
                        for i, (name, value) in enumerate(picked)
                    ]
                )
                got = scorer.grade_response(case_id, response)
                assert got == _general(scorer, case_id, response), (case_id, picked)
                planned = scorer._plans[case_id].passed(response.tool_calls, None, 0)
                assert (planned is not None) is got.passed
                outcomes.add((case_id, got.passed))
    assert outcomes == {("one", True), ("one", False), ("two", True), ("two", False)}

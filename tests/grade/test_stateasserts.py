"""End-state assertions and communicated facts: the pure part."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

from toolproof.grade import communicated, compile_state_asserts, normalise_fact
from toolproof.match import SpecError, context
from toolproof.types import Communicate, Suite

CTX = context(Suite(name="s", tools=[], cases=[]))

STATE: dict[str, Any] = {
    "users": {
        "U1": {"status": "active", "plan": "basic", "tags": ["a", "b"]},
        "U2": {"status": "suspended", "plan": "pro", "tags": []},
    },
    "log": [{"kind": "login", "user": "U1"}],
}


def _failures(*specs: dict[str, Any]) -> list[str | None]:
    data, functions = compile_state_asserts(specs, CTX)
    assert not functions
    return [a.check(STATE) for a in data]


def test_path_equals_matches_and_exists() -> None:
    assert _failures(
        {"path": "users.U1.status", "equals": "active"},
        {"path": ["users", "U2", "plan"], "matches": {"one_of": ["pro", "team"]}},
        {"path": "users.U1.tags.1", "equals": "b"},
        {"path": "users.U3", "exists": False},
        {"path": "log.0", "matches": {"kind": "login"}},
    ) == [None] * 5
    assert _failures(
        {"path": "users.U1.status", "equals": "suspended"},
        {"path": "users.U2.plan", "matches": {"regex": "^ba"}},
        {"path": "users.U9.status", "equals": "active"},
        {"path": "users.U1", "exists": False},
    ) == [
        'assert[0]: users.U1.status is "active", expected "suspended"',
        "assert[1]: users.U2.plan: " + _regex_reason(),
        "assert[2]: users.U9.status is absent",
        "assert[3]: users.U1 is present ({'status': 'active', 'plan': 'basic', 'tags': ['a', "
        "'b']})",
    ]


def _regex_reason() -> str:
    data, _ = compile_state_asserts([{"path": "x", "matches": {"regex": "^ba"}}], CTX)
    why = data[0].matcher.check("pro") if data[0].matcher else None
    assert why
    return why


def test_equals_is_strict() -> None:
    assert _failures({"path": "users.U1.tags", "equals": ["a", "b"]}) == [None]
    assert _failures({"path": "log.0.user", "equals": 1})[0] is not None


def test_rows_exist_or_are_absent_in_mappings_and_lists() -> None:
    assert _failures(
        {"exists": {"table": "users", "where": {"status": "suspended", "plan": "pro"}}},
        {"exists": {"table": "log", "where": {"kind": {"regex": "log.*"}}}},
        {"absent": {"table": "users", "where": {"status": "closed"}}},
    ) == [None, None, None]
    assert _failures(
        {"exists": {"table": "users", "where": {"status": "closed"}}},
        {"absent": {"table": "users", "where": {"plan": "basic"}}},
        {"exists": {"table": "orders", "where": {}}},
    ) == [
        "assert[0]: no row of 'users' has status \"closed\"",
        "assert[1]: 1 row(s) of 'users' have plan \"basic\"",
        "assert[2]: the state has no table 'orders'",
    ]


def test_function_assertions_are_set_apart() -> None:
    data, functions = compile_state_asserts(
        [{"function": "all_paid", "args": {"n": 1}}, {"path": "a", "exists": True}], CTX
    )
    assert [(f.index, f.function, f.args, f.expect) for f in functions] == [
        (0, "all_paid", {"n": 1}, True)
    ]
    assert [a.index for a in data] == [1]


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"path": "a"}, (0,), "give exactly one of 'equals', 'matches' and 'exists'"),
        ({"path": "a", "equals": 1, "exists": True}, (0,), "exactly one"),
        ({"path": "", "equals": 1}, (0, "path"), "dotted path"),
        ({"path": "a", "matches": {"regex": "("}}, (0, "matches"), ""),
        ({"exists": {"where": {}}}, (0, "exists"), "{table: NAME"),
        ({"exists": {"table": "t", "when": {}}}, (0, "exists"), "unknown key 'when'"),
        ({"function": "no such"}, (0, "function"), "names a function"),
        ({"function": "f", "args": [1]}, (0, "args"), "'args' is a mapping"),
        ({"equals": 1}, (0,), "an assertion needs 'path'"),
    ],
)
def test_wrong_assertions_name_their_place(
    spec: dict[str, Any], path: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        compile_state_asserts([spec], CTX)
    assert caught.value.path[: len(path)] == path
    assert message in str(caught.value)


def test_communicate_substring_and_normalised() -> None:
    said = ["Your refund of $1,000.50 is on its way.", "Booking ID: BK-77."]
    assert communicated(Communicate(text="$1,000.50", match="substring"), said)
    assert not communicated(Communicate(text="1000.50", match="substring"), said)
    assert communicated("1000.50", said)  # a bare string is normalised
    assert communicated(Communicate(text="booking id bk 77"), said)
    assert not communicated(Communicate(text="BK-78"), said)
    assert communicated(Communicate(text="x", match="judged"), said) is None


def _tau2(fact: str, message: str) -> bool:
    """τ²-bench's rule for a COMMUNICATE fact."""
    return fact.lower() in message.lower().replace(",", "")


def test_normalised_passes_whatever_the_tau2_rule_passes() -> None:
    rng = random.Random(30)
    alphabet = string.ascii_letters + string.digits + " ,.-$:!'\t\n" + "ÄßİΣ"
    checked = agreed = 0
    for _ in range(20_000):
        message = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        low = message.lower().replace(",", "")
        if low and rng.random() < 0.7:  # a fact taken from the message, often
            i = rng.randrange(len(low))
            fact = low[i : i + rng.randint(1, 8)]
            fact = "".join(c.upper() if rng.random() < 0.3 else c for c in fact)
        else:
            fact = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5)))
        if _tau2(fact, message):
            checked += 1
            agreed += normalise_fact(fact) in normalise_fact(message)
    assert checked > 5_000
    assert agreed == checked

"""State changes: the copy-on-write view, the changes it leaves, and rebuilding from them."""

from __future__ import annotations

import copy
import json
import operator
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.grade import ChangeError, apply_changes, cow, state_changes

INITIAL: dict[str, Any] = {
    "orders": {
        "A": {"status": "open", "items": [{"sku": "X", "qty": 1}], "total": 10},
        "B": {"status": "shipped", "items": [], "total": 0},
    },
    "users": {"u1": {"notes": [], "address": {"city": "Brno"}}},
    "refunds": {},
    "log": [1, {"k": "v"}],
}


def dumped(value: Any) -> str:
    """The exact JSON a snapshot would hold: types and key order included."""
    return json.dumps(value, default=str)


def roundtrip(state: Any, initial: Any) -> Any:
    changes = state_changes(state, initial)
    # what a records file holds: JSON, read back
    return apply_changes(initial, json.loads(json.dumps(changes)))


def test_a_view_reads_and_writes_like_a_dict_and_never_changes_the_initial_state() -> None:
    before = dumped(INITIAL)
    state = cow(INITIAL)
    order = state["orders"].get("A")
    order["status"] = "cancelled"
    order["items"].append({"sku": "Y", "qty": 2})
    state["users"]["u1"]["notes"].append("called")
    state["refunds"]["R1"] = {"order": "A", "amount": 5}
    assert dumped(INITIAL) == before
    assert state["orders"]["A"]["status"] == "cancelled"
    assert len(state) == 4 and "refunds" in state and sorted(state) == sorted(INITIAL)
    assert isinstance(state, dict) and isinstance(state["orders"], dict)


def test_only_what_changed_is_recorded() -> None:
    state = cow(INITIAL)
    state["orders"]["A"]["status"] = "cancelled"
    state["orders"]["B"]["total"]  # read only: no change
    for order in state["orders"].values():  # iterating a table copies it, changes nothing
        assert order["status"]
    state["refunds"]["R1"] = {"order": "A"}
    assert state_changes(state, INITIAL) == [
        ("set", ["orders", "A", "status"], "cancelled"),
        ("set", ["refunds", "R1"], {"order": "A"}),
    ]


def test_an_untouched_state_has_no_changes() -> None:
    state = cow(INITIAL)
    json.dumps(state)
    dict(state["orders"])
    assert state_changes(state, INITIAL) == []
    assert apply_changes(INITIAL, []) is INITIAL


def test_rebuilding_shares_what_did_not_change() -> None:
    state = cow(INITIAL)
    state["orders"]["A"]["status"] = "cancelled"
    rebuilt = roundtrip(state, INITIAL)
    assert rebuilt["users"] is INITIAL["users"]
    assert rebuilt["orders"]["B"] is INITIAL["orders"]["B"]
    assert rebuilt["orders"] is not INITIAL["orders"]
    assert INITIAL["orders"]["A"]["status"] == "open"


def test_values_are_taken_as_json_writes_them() -> None:
    state = cow(INITIAL)
    state["orders"]["A"]["tags"] = ("a", "b")
    state["orders"]["A"][7] = "seven"
    state["orders"]["A"]["when"] = object.__new__(_Stamp)
    rebuilt = roundtrip(state, INITIAL)
    assert dumped(rebuilt) == dumped(json.loads(json.dumps(state, default=str)))
    assert rebuilt["orders"]["A"]["tags"] == ["a", "b"]
    assert rebuilt["orders"]["A"]["7"] == "seven"
    assert rebuilt["orders"]["A"]["when"] == "stamp"


class _Stamp:
    def __str__(self) -> str:
        return "stamp"


def test_types_are_kept_apart() -> None:
    """1, 1.0 and True are equal in Python, not in a state."""
    initial = {"t": {"a": 1, "b": 1, "c": 0}}
    state = cow(initial)
    state["t"]["a"] = True
    state["t"]["b"] = 1.0
    state["t"]["c"] = False
    assert state_changes(state, initial) == [
        ("set", ["t", "a"], True),
        ("set", ["t", "b"], 1.0),
        ("set", ["t", "c"], False),
    ]


def test_removals_and_key_order_are_rebuilt_exactly() -> None:
    state = cow(INITIAL)
    moved = state["orders"].pop("A")
    state["orders"]["C"] = {"status": "new"}
    state["orders"]["A"] = moved  # removed and set again: it moves to the end
    del state["users"]
    state["log"].pop()
    assert dumped(roundtrip(state, INITIAL)) == dumped(state)
    assert list(roundtrip(state, INITIAL)["orders"]) == ["B", "C", "A"]


def test_copies_and_pickles_of_a_view_are_plain_data() -> None:
    state = cow(INITIAL)
    assert type(copy.deepcopy(state)) is dict and copy.deepcopy(state) == INITIAL
    assert type(copy.copy(state["orders"])) is dict
    assert pickle.loads(pickle.dumps(state)) == INITIAL
    assert state == INITIAL and state["orders"] == cow(INITIAL)["orders"]
    assert operator.eq(INITIAL, cow(INITIAL))  # a plain dict on the left asks the view
    assert {**state["users"]} == INITIAL["users"]
    assert json.dumps(cow(INITIAL), sort_keys=True) == json.dumps(INITIAL, sort_keys=True)
    assert json.dumps(cow({"e": {}})) == '{"e": {}}'


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ([("move", ["orders"])], "change 0: expected ['set', path, value] or ['remove', path]"),
        ([("set", ["orders", "Z", "status"], 1)], "change 0: orders / Z: no such place"),
        ([("remove", ["orders", "Z"])], "change 0: orders / Z: nothing to remove"),
        ([("set", ["log", 5], 1)], "change 0: log / 5: no such place in a list of 2"),
        ([("set", ["log", "0"], 1)], "change 0: log / 0: a list index must be a number"),
        ([("set", ["orders", "A", "total", "x"], 1)], "change 0: orders / A / total is not a"),
        ([("set", ["orders", True], 1)], "change 0: the path must be a list of keys"),
        ([("remove", [])], "change 0: the state itself cannot be removed"),
        (["set"], "change 0: expected"),
        ([("set", [], 1), 7], "change 1: expected"),
    ],
)
def test_changes_that_do_not_apply_are_refused(changes: list[Any], message: str) -> None:
    with pytest.raises(ChangeError) as info:
        apply_changes(INITIAL, changes)
    assert str(info.value).startswith(message)
    assert INITIAL["orders"]["A"]["status"] == "open"


# Property: any sequence of dict and list operations on a view leaves changes that
# rebuild exactly the state the same operations give on a plain deep copy.

_keys = st.sampled_from(["a", "b", "c", "d"])
_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False), st.text(max_size=3)
)
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)
    ),
    max_leaves=12,
)
_ops = st.lists(
    st.tuples(
        st.lists(st.one_of(_keys, st.integers(0, 3)), max_size=3),
        st.sampled_from(
            ["set", "del", "append", "pop", "update", "setdefault", "clear", "read", "move", "alias"]
        ),
        _keys,
        _json,
    ),
    max_size=8,
)


def _reach(state: Any, path: list[Any]) -> Any:
    for step in path:
        in_dict = isinstance(state, dict) and isinstance(step, str) and step in state
        in_list = isinstance(state, list) and isinstance(step, int) and step < len(state)
        if not (in_dict or in_list):
            return state
        state = state[step]
    return state


def _do(state: Any, op: tuple[list[Any], str, str, Any]) -> None:
    path, kind, key, value = op
    target = _reach(state, path)
    value = copy.deepcopy(value)
    if isinstance(target, dict):
        if kind == "set":
            target[key] = value
        elif kind == "del" and key in target:
            del target[key]
        elif kind == "pop":
            target.pop(key, None)
        elif kind == "update":
            target.update({key: value})
        elif kind == "setdefault":
            target.setdefault(key, value)
        elif kind == "clear":
            target.clear()
        elif kind == "read":
            json.dumps(target)
        elif kind == "move" and target:
            target[key] = target.pop(next(iter(target)))
        elif kind == "alias" and target:
            target[key] = target[next(iter(target))]  # one object under two keys
    elif isinstance(target, list):
        if kind == "append":
            target.append(value)
        elif kind == "pop" and target:
            target.pop()
        elif kind == "set" and target:
            target[0] = value
        elif kind == "del" and target:
            del target[0]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=4), _ops)
def test_any_operations_rebuild_exactly(initial: dict[str, Any], ops: list[Any]) -> None:
    before = dumped(initial)
    plain_copy = copy.deepcopy(initial)
    view = cow(initial)
    for op in ops:
        _do(plain_copy, op)
        _do(view, op)
    assert dumped(view) == dumped(plain_copy)
    assert dumped(roundtrip(view, initial)) == dumped(plain_copy)
    # the same changes come from a plain end state, as an SQLite state gives one
    assert dumped(apply_changes(initial, state_changes(plain_copy, initial))) == dumped(plain_copy)
    assert dumped(initial) == before


def test_methods_taken_before_a_view_is_copied_still_work_after() -> None:
    orders = cow(INITIAL)["orders"]
    get, contains, size, getitem = orders.get, orders.__contains__, orders.__len__, orders.__getitem__
    orders["A"]  # the view hands out a child
    reached_get = orders.__getitem__
    assert list(orders) == ["A", "B"]  # iterating copies the table
    assert get("B")["status"] == "shipped" and contains("A") and size() == 2
    assert getitem("A") is orders["A"] and reached_get("A") is orders["A"]
    orders.pop("A")
    assert get("A") is None and not contains("A") and size() == 1


def test_tables_of_plain_rows_compare_strictly() -> None:
    """An end state read whole (an SQLite database): equal rows are skipped, types still count."""
    initial = {"t": {str(i): {"id": str(i), "n": i, "x": None} for i in range(50)}, "u": {}}
    end = copy.deepcopy(initial)
    end["t"]["3"]["n"] = 3.0  # equal in Python, not the same value
    end["t"]["7"]["x"] = "set"
    assert state_changes(end, initial) == [
        ("set", ["t", "3", "n"], 3.0),
        ("set", ["t", "7", "x"], "set"),
    ]
    end = copy.deepcopy(initial)
    end["t"]["9"]["n"] = 10  # the same shape: found among the equal rows
    assert state_changes(end, initial) == [("set", ["t", "9", "n"], 10)]
    del end["t"]["0"]
    end["t"]["new"] = {"id": "new", "n": 0, "x": None}
    assert dumped(apply_changes(initial, state_changes(end, initial))) == dumped(end)
    assert state_changes(copy.deepcopy(initial), initial) == []

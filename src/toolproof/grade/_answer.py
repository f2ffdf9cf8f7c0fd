"""What a model answer did, worked out once and shared by every check.

A single-step answer is its response, each call inspected (known tool? valid
JSON? valid against the schema?) and the expected call set it matches best
(optimal pairing, never greedy). The checks read this; none recomputes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolproof.grade._assign import assign
from toolproof.grade._compile import CompiledCall, CompiledCase, show
from toolproof.types import FailureClass, Kind, Message, Order, Response, ToolCall

NO_CALL = "(none)"
_FAR = 100  # cost of pairing calls to different tools: never a real pair
# (an enum member read from its class costs about a call in Python 3.11: EnumType has a
# __getattr__; the analysis reads these for every answer)
_CALL = Kind.call
_INVALID_JSON, _SCHEMA_MISMATCH = FailureClass.invalid_json, FailureClass.schema_mismatch
_SUBSET, _SUPERSET, _STRICT = Order.subset, Order.superset, Order.strict

__all__ = [
    "NO_CALL",
    "CallInfo",
    "ProfileSchema",
    "SetResult",
    "SingleAnswer",
    "analyse",
    "inspect_call",
    "match_set",
    "profile_note",
    "schema_failure",
]


@dataclass(slots=True)
class CallInfo:
    """One call, inspected: is the tool offered, and did its arguments parse and validate.

    ``message`` with no ``failure``: the arguments break the JSON Schema where the suite's
    matcher profile lets BFCL's own rules decide (see :class:`ProfileSchema`); reported
    beside the verdict, not failing it. ``name`` and ``arguments`` are the call's, read
    once (a typed record's field costs several times a plain attribute to read).
    """

    call: ToolCall
    known: bool
    failure: FailureClass | None
    message: str
    name: str
    arguments: Any


class ProfileSchema:
    """A tool's schema in the ``bfcl`` matcher profile: structure as BFCL's checker decides it.

    BFCL's AST checker does not validate against the schema. It asks that every
    ``required`` parameter be given and that every parameter given be defined; it never
    checks an enum, and takes a value whose type the schema does not allow (a ``null``,
    ``"dontcare"`` for an integer) when its ground truth lists a value of that type. The
    profile's expected values carry those types (``toolproof import bfcl`` keeps the
    ground truth's values BFCL's type rule can pass, and the ``bfcl`` matcher is strict
    about types), so here only the two structural rules decide. The JSON Schema
    verdict is still worked out and reported: a call that breaks it is not counted in
    ``calls_schema_valid``, and the verdict notes why.

    ``is_valid``: valid both ways (what the scorer's fast paths ask before passing a call).
    """

    __slots__ = ("iter_errors", "properties", "required", "schema_valid")

    def __init__(self, validator: Any, schema: Any) -> None:
        #: JSON Schema's own verdict
        self.schema_valid = validator.is_valid
        self.iter_errors = validator.iter_errors
        props = schema.get("properties") if isinstance(schema, dict) else None
        self.properties = frozenset(props) if isinstance(props, dict) else frozenset()
        required = schema.get("required") if isinstance(schema, dict) else None
        self.required: tuple[str, ...] = (
            tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else ()
        )

    def is_valid(self, arguments: Any) -> bool:
        return bool(self.schema_valid(arguments)) and self.properties.issuperset(arguments)

    def structure(self, arguments: Any) -> str | None:
        """Why BFCL's checker refuses the arguments' structure; None when it does not."""
        if type(arguments) is not dict:
            return f"/: the arguments are not an object: {show(arguments)}"
        for name in self.required:
            if name not in arguments:
                return f"/: missing required parameter '{name}'"
        for name in arguments:
            if name not in self.properties:
                return f"/{name}: unexpected parameter (the schema does not define it)"
        return None


@dataclass(slots=True)
class SetResult:
    """How the calls line up with one expected call set."""

    index: int
    expected: list[CompiledCall]
    pairs: list[tuple[int, int]]
    selection_ok: bool | None
    values_ok: bool | None
    order_ok: bool
    count_ok: bool
    value_reasons: list[str]
    cost: int
    differences: int
    """How far from matching (see ``ObjectMatcher.differences``); counted only when
    alternatives are ranked, else 0."""

    def rank(self) -> tuple[int, int, int, int, int, int]:
        return (
            self.selection_ok is not False,
            self.values_ok is not False,
            self.count_ok,
            self.order_ok,
            -self.differences,
            -self.cost,
        )


@dataclass(slots=True)
class SingleAnswer:
    """A one-turn answer, analysed. ``best`` is None when no call set is judged."""

    response: Response
    infos: list[CallInfo]
    best: SetResult | None

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(self.response.tool_calls)

    @property
    def messages(self) -> tuple[Message, ...]:
        return ()

    @property
    def end_state(self) -> Any:
        return None


def profile_note(message: str) -> str:
    """The verdict's note of a call that breaks the JSON Schema where the profile lets
    BFCL's rules decide (``message``: what :func:`schema_failure` says)."""
    return f"schema (reported, not deciding in the bfcl profile): {message}"


def schema_failure(name: str, validator: Any, arguments: Any, checked: bool = False) -> str | None:
    """Why the arguments of a call of ``name`` fail its schema; None when they validate.

    ``checked``: ``validator.is_valid`` already said no (it is not asked again).
    """
    try:
        if not checked and validator.is_valid(arguments):
            return None
        err = next(iter(validator.iter_errors(arguments)))
        path = err.instance_path
        if not path:
            return f"{name}: /: {err.message}"
        pointer = "/".join([str(p).replace("~", "~0").replace("/", "~1") for p in path])
        return f"{name}: /{pointer}: {err.message}"
    except (ValueError, RecursionError) as exc:
        return f"{name}: arguments cannot be validated ({str(exc)[:80]})"


def inspect_call(call: ToolCall, offered: frozenset[str], validators: Any) -> CallInfo:
    """One call inspected: is its tool ``offered``, do its arguments parse, and do they
    validate (``validators``: the schema validator of each tool, by name)."""
    name = call.name
    arguments = call.arguments
    known = name in offered
    if call.parse_error is not None:
        raw = show(call.raw_arguments, 80)
        message = f"{name}: arguments are not valid JSON ({call.parse_error}): {raw}"
        return CallInfo(call, known, _INVALID_JSON, message, name, arguments)
    if not known:
        return CallInfo(call, known, None, "", name, arguments)
    validator = validators[name]
    if type(validator) is ProfileSchema:
        return _inspect_in_profile(call, name, arguments, validator)
    try:
        valid = validator.is_valid(arguments)
    except (ValueError, RecursionError):
        valid = None  # (schema_failure says why)
    if valid:
        return CallInfo(call, known, None, "", name, arguments)
    why = schema_failure(name, validator, arguments, valid is False)
    if why is None:
        return CallInfo(call, known, None, "", name, arguments)
    return CallInfo(call, known, _SCHEMA_MISMATCH, why, name, arguments)


def _inspect_in_profile(
    call: ToolCall, name: str, arguments: Any, schema: ProfileSchema
) -> CallInfo:
    """A call to an offered tool inspected where BFCL's structural rules decide (see
    :class:`ProfileSchema`): a break of the JSON Schema is kept as a message with no
    failure."""
    try:
        valid = schema.schema_valid(arguments)
    except (ValueError, RecursionError):
        valid = None  # (schema_failure says why)
    if valid and schema.properties.issuperset(arguments):
        # (valid: every required parameter is given)
        return CallInfo(call, True, None, "", name, arguments)
    why = schema.structure(arguments)
    if why is not None:
        return CallInfo(call, True, _SCHEMA_MISMATCH, f"{name}: {why}", name, arguments)
    if valid:
        return CallInfo(call, True, None, "", name, arguments)
    message = schema_failure(name, schema, arguments, valid is False) or ""
    return CallInfo(call, True, None, message, name, arguments)


def analyse(cc: CompiledCase, response: Response, infos: list[CallInfo]) -> SingleAnswer:
    best: SetResult | None = None
    if cc.kind is _CALL and infos:
        if len(cc.call_sets) == 1:
            expected = cc.call_sets[0]
            if len(expected) == 1 and len(infos) == 1:  # (match_set's own first step)
                best = _match_one(expected[0], infos[0], 0, False)
            else:
                tool_at = cc.tool_at[0]
                if tool_at is not None and len(expected) > 1:  # (match_set's own next steps)
                    best = _forced(0, expected, infos, cc.order, False, tool_at)
                    if best is None:
                        best = pair_by_cost(0, expected, infos, cc.order, False)
                else:
                    best = match_set(0, expected, infos, cc.order, False, tool_at)
        else:
            best = max(
                (
                    match_set(i, s, infos, cc.order, True, cc.tool_at[i])
                    for i, s in enumerate(cc.call_sets)
                ),
                key=SetResult.rank,
            )
    return SingleAnswer(response, infos, best)


def _match_one(expected: CompiledCall, info: CallInfo, index: int, rank: bool) -> SetResult:
    """One expected call against one actual call: the common case, without a cost matrix."""
    if info.name not in expected.tools:
        return SetResult(index, [expected], [], False, None, True, True, [], 2 * _FAR, 2)
    if info.failure is not None:  # structure failed: reported there, values not judged
        return SetResult(index, [expected], [(0, 0)], True, False, True, True, [], 1, 1)
    args = expected.args
    # (an answer here mostly fails: the passing ones a plan knows never get here, so a pure
    # matcher is asked why at once, not first whether it matches)
    reason = args.mismatch(info.arguments) if args.pure else args.check(info.arguments)
    if reason is None:
        return SetResult(index, [expected], [(0, 0)], True, True, True, True, [], 0, 0)
    return SetResult(
        index,
        [expected],
        [(0, 0)],
        True,
        False,
        True,
        True,
        [f"{info.name}: {reason}"],
        1,
        expected.args.differences(info.arguments) if rank else 0,
    )


#: A pair whose values fail, its reason not worked out yet (only the pairs chosen need one).
_LATER = "\0later"


def _costs(
    expected: list[CompiledCall], calls: list[CallInfo]
) -> tuple[list[list[int]], list[list[str | None]]]:
    """The cost of pairing each expected call with each call (0: it matches; 1: its values,
    or its structure, fail; _FAR: another tool), and, for each pair to the same tool, why
    the values fail (None: they match; "": the structure failed, reported there, values
    not judged; ``_LATER``: they fail, and a pure matcher says why when asked, for the
    pairs chosen)."""
    cost: list[list[int]] = []
    reasons: list[list[str | None]] = []
    for e in expected:
        tools = e.tools
        args = e.args
        pure = args.pure
        check = args.check
        ok = args.ok
        row: list[int] = []
        why: list[str | None] = []
        for info in calls:
            if info.name not in tools:
                row.append(_FAR)
                why.append(None)
            elif info.failure is not None:
                row.append(1)
                why.append("")
            elif pure:
                if ok(info.arguments):
                    row.append(0)
                    why.append(None)
                else:
                    row.append(1)
                    why.append(_LATER)
            else:
                reason = check(info.arguments)
                row.append(0 if reason is None else 1)
                why.append(reason)
        cost.append(row)
        reasons.append(why)
    return cost, reasons


def match_set(
    index: int,
    expected: list[CompiledCall],
    calls: list[CallInfo],
    order: Order,
    rank: bool,
    tool_at: dict[str, int] | None = None,
) -> SetResult:
    """``rank``: count the differences too (alternatives are being compared); ``tool_at``:
    each expected call's position by its tool, where no two name the same tool
    (``CompiledCase.tool_at``)."""
    n, m = len(expected), len(calls)
    if n == 1:
        if m == 1:
            return _match_one(expected[0], calls[0], index, rank)
        if m:
            return _match_first(index, expected[0], calls, order, rank)
    if tool_at is not None and n:
        forced = _forced(index, expected, calls, order, rank, tool_at)
        if forced is not None:
            return forced
    return pair_by_cost(index, expected, calls, order, rank)


def pair_by_cost(
    index: int, expected: list[CompiledCall], calls: list[CallInfo], order: Order, rank: bool
) -> SetResult:
    """:func:`match_set` by the optimal pairing over the whole cost matrix: what every
    shorter route of it must agree with (a test holds them to it)."""
    n, m = len(expected), len(calls)
    cost, reasons = _costs(expected, calls)
    # the pairs (to the same tool), their cost, and those whose values fail, in one pass
    pairs: list[tuple[int, int]] = []
    failed: list[tuple[int, int]] = []
    value_reasons: list[str] = []
    total = 0
    for i, j in assign(cost):
        pair_cost = cost[i][j]
        if pair_cost < _FAR:
            pairs.append((i, j))
            total += pair_cost
            reason = reasons[i][j]
            if reason is _LATER:
                reason = reasons[i][j] = expected[i].args.mismatch(calls[j].arguments)
            if reason is not None:
                failed.append((i, j))
                if reason:
                    value_reasons.append(f"{calls[j].name}: {reason}")
    lost_expected, lost_actual = n - len(pairs), m - len(pairs)
    total += _FAR * (lost_expected + lost_actual)
    if n == 0:
        selection_ok: bool | None = None
    elif order is _SUBSET:
        selection_ok = lost_actual == 0
    elif order is _SUPERSET:
        selection_ok = lost_expected == 0
    else:
        selection_ok = lost_expected == 0 and lost_actual == 0
    count_ok = True
    if selection_ok is False and _right_tools(expected, calls, order):
        # every tool is right, only how many times each is called is not
        selection_ok, count_ok = True, False
    values_ok = None if not selection_ok else not failed
    order_ok = True
    if order is _STRICT and selection_ok and values_ok:
        order_ok = all(k < m and cost[k][k] < _FAR and reasons[k][k] is None for k in range(n))
    differences = 0
    if rank:
        differences = 2 * (lost_expected + lost_actual) + sum(
            expected[i].args.differences(calls[j].arguments) if reasons[i][j] else 1
            for i, j in failed
        )
    return SetResult(
        index,
        expected,
        pairs,
        selection_ok,
        values_ok,
        order_ok,
        count_ok,
        value_reasons,
        total,
        differences,
    )


def _forced(
    index: int,
    expected: list[CompiledCall],
    calls: list[CallInfo],
    order: Order,
    rank: bool,
    tool_at: dict[str, int],
) -> SetResult | None:
    """:func:`match_set` where each expected call names a tool of its own and no tool is
    called twice: a call can pair only with the expected call of its tool, and every such
    pair is in the optimal pairing (leaving one out costs a pairing across tools), so the
    pairing is known without a cost matrix. None when a tool is called twice."""
    at = [-1] * len(expected)  # expected call -> the call of its tool
    for j, info in enumerate(calls):
        i = tool_at.get(info.name)
        if i is not None:
            if at[i] >= 0:
                return None  # (a tool called twice: the general pairing chooses)
            at[i] = j
    pairs: list[tuple[int, int]] = []
    value_reasons: list[str] = []
    failed = differences = total = 0
    in_order = True
    for i, j in enumerate(at):  # (in expected order, as the optimal pairing lists them)
        if j < 0:
            in_order = False
            continue
        pairs.append((i, j))
        if j != i:
            in_order = False
        info = calls[j]
        if info.failure is not None:  # structure failed: reported there, values not judged
            failed += 1
            total += 1
            differences += 1
            continue
        args = expected[i].args
        arguments = info.arguments
        if args.pure:
            if args.ok(arguments):
                continue
            total += 1  # (as the cost matrix counts it, whatever the reason)
            reason = args.mismatch(arguments)
        else:
            reason = args.check(arguments)
            if reason is not None:
                total += 1
        if reason is not None:
            failed += 1
            if reason:
                value_reasons.append(f"{info.name}: {reason}")
            if rank:
                differences += args.differences(arguments) if reason else 1
    return _result(
        index, expected, calls, order, rank, pairs, failed, value_reasons, total, differences,
        in_order,
    )  # fmt: skip


def _match_first(
    index: int, expected: CompiledCall, calls: list[CallInfo], order: Order, rank: bool
) -> SetResult:
    """:func:`match_set` of one expected call and several calls: it pairs with the first
    of the calls to its tools that costs least (one that matches, else the first to them),
    as the optimal pairing of one row takes the first least cost."""
    tools = expected.tools
    args = expected.args
    pure = args.pure
    chosen = -1
    reason: str | None = None
    for j, info in enumerate(calls):
        if info.name not in tools:
            continue
        if info.failure is not None:
            why: str | None = ""  # structure failed: reported there, values not judged
        elif pure:
            why = None if args.ok(info.arguments) else _LATER
        else:
            why = args.check(info.arguments)
        if chosen < 0 or why is None:
            chosen, reason = j, why
            if why is None:
                break
    if chosen < 0:
        return _result(index, [expected], calls, order, rank, [], 0, [], 0, 0, False)
    total = 0 if reason is None else 1
    if reason is _LATER:
        reason = args.mismatch(calls[chosen].arguments)
    value_reasons: list[str] = []
    differences = 0
    if reason is not None:
        if reason:
            value_reasons.append(f"{calls[chosen].name}: {reason}")
        if rank:
            differences = args.differences(calls[chosen].arguments) if reason else 1
    return _result(
        index, [expected], calls, order, rank, [(0, chosen)], 0 if reason is None else 1,
        value_reasons, total, differences, chosen == 0,
    )  # fmt: skip


def _result(
    index: int,
    expected: list[CompiledCall],
    calls: list[CallInfo],
    order: Order,
    rank: bool,
    pairs: list[tuple[int, int]],
    failed: int,
    value_reasons: list[str],
    total: int,
    differences: int,
    in_order: bool,
) -> SetResult:
    """The set's result from its chosen ``pairs`` (``failed`` of them fail, ``total`` their
    cost, ``differences`` theirs) and whether expected call k is paired with call k for
    each k (``in_order``), as :func:`match_set` works it out."""
    n, m = len(expected), len(calls)
    lost_expected, lost_actual = n - len(pairs), m - len(pairs)
    total += _FAR * (lost_expected + lost_actual)
    if order is _SUBSET:
        selection_ok: bool | None = lost_actual == 0
    elif order is _SUPERSET:
        selection_ok = lost_expected == 0
    else:
        selection_ok = lost_expected == 0 and lost_actual == 0
    count_ok = True
    if selection_ok is False and _right_tools(expected, calls, order):
        selection_ok, count_ok = True, False
    values_ok = None if not selection_ok else not failed
    # (the right calls in order: expected call k paired with call k, each matching)
    order_ok = not (order is _STRICT and selection_ok and values_ok) or in_order
    differences = differences + 2 * (lost_expected + lost_actual) if rank else 0
    return SetResult(
        index,
        expected,
        pairs,
        selection_ok,
        values_ok,
        order_ok,
        count_ok,
        value_reasons,
        total,
        differences,
    )


def _right_tools(expected: list[CompiledCall], calls: list[CallInfo], order: Order) -> bool:
    """Each expected call's tool is called, and (unless superset) no other tool is."""
    # (loops, not comprehensions: each comprehension is a call of its own)
    names = set()
    for i in calls:
        names.add(i.name)
    every_expected_called = True
    allowed: set[str] = set()
    for e in expected:
        if every_expected_called and names.isdisjoint(e.tools):
            every_expected_called = False
        allowed.update(e.tools)
    only_expected = order is _SUPERSET or names <= allowed
    if order is _SUBSET:
        return only_expected
    return every_expected_called and only_expected

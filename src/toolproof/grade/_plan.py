"""The fast routes of a single-step case whose verdict nothing but its calls decides.

A plan is built once per case with one call set of one or more calls, each
to its own tool; no reply matcher, no count, no forbidden tool, no check of
the suite's own, and matchers that note nothing (``Matcher.pure``). For
such a case the general machinery (a cost matrix, optimal pairing over it,
six check objects, the assembler) reaches its verdict by a shorter road,
taken here:

- the answer makes exactly the expected calls, each with arguments that
  parse, validate against the schema the model was given and match: a pass,
  built from what the plan holds already. The plan holds, per expected call,
  the answer its matcher recognises by one comparison (``ObjectMatcher.usual``)
  and compares with it itself, before the matcher is asked: a passing call
  fetches neither;
- any other answer: when its calls name distinct tools, each call can pair
  only with the expected call of its tool, so the optimal pairing is forced
  (a tool called twice is paired by ``assign`` over the costs, as the
  general path does; once where one call is expected, the first call that
  matches, else the first). The findings and figures are the ones the checks
  and the assembler would make, in the same words; the calls the first route
  verified are not inspected again, nor validated twice. One call where one
  is expected has a route of its own.

A test grades generated answers both ways and compares every field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolproof.grade._answer import NO_CALL, CallInfo, schema_failure
from toolproof.grade._assemble import order_pairs
from toolproof.grade._assign import assign
from toolproof.grade._compile import CompiledCase, describe_calls
from toolproof.match import kinds_differ
from toolproof.types import (
    NO_EVIDENCE,
    Check,
    Evidence,
    FailureClass,
    Kind,
    Order,
    Response,
    Stage,
    ToolCall,
    Verdict,
)

#: Verdicts are built as tuples of all their fields, in order (named tuples: the same thing,
#: without the keyword parsing); the fields after target and attempt of a pass:
_new = tuple.__new__
_PASSED_END = (None, (), NO_EVIDENCE, False, 0)  # multistep .. undecided
_NO_EV = tuple(NO_EVIDENCE)[2:]  # an Evidence's fields after answer and closest
_FAR = 100  # the cost of pairing calls to different tools (as in ``_answer``)
#: What ``_verify`` learnt of the call after the ones it verified: nothing, that it validated
#: but did not match, or that its arguments do not validate (``is_valid`` said no).
_UNCHECKED, _MISMATCH, _INVALID = 0, 1, 2
_WRONG_ORDER = Check(
    Stage.contract,
    FailureClass.wrong_order,
    "the right calls, in the wrong order (order: strict)",
)

__all__ = ["Plan", "make_plan"]


class Plan:
    """What a passing verdict of one case holds, and how to recognise a passing answer."""

    __slots__ = (
        "_canon",
        "_canons",
        "_cc",
        "_ckinds",
        "_described",
        "_head",
        "_index",
        "_inspect",
        "_kinds",
        "_matchers",
        "_missed",
        "_name",
        "_names",
        "_ok",
        "_oks",
        "_order",
        "_pass",
        "_strict",
        "_tail",
        "_tools",
        "_valid",
        "_validators",
    )

    def __init__(
        self,
        cc: CompiledCase,
        calls: tuple[tuple[str, Any, Any], ...],
        inspect: Callable[[ToolCall, CompiledCase], CallInfo],
        shared: dict[Any, Any] | None = None,
    ) -> None:
        # the tuples a verdict refers to, one object for all the plans alike in them (equal
        # values: the verdicts are the same; fewer objects for grading to touch)
        table: dict[Any, Any] = {} if shared is None else shared

        def share(value: Any) -> Any:
            return table.setdefault(value, value)

        #: the scorer's (is the tool offered, do the arguments parse and validate), asked
        #: for the calls the plan cannot settle at once
        self._inspect = inspect
        #: per expected call, in expected order: its tool, the validator of the tool's
        #: schema (``is_valid``, ``iter_errors``) and the argument matcher's ``ok_unusual``
        self._names = share(tuple(name for name, _, _ in calls))
        self._validators = tuple(validator for _, validator, _ in calls)
        # (one bound method per validator for all the plans: fewer objects to fetch)
        self._valid = share(tuple(share(validator.is_valid) for validator in self._validators))
        self._oks = tuple(ok for _, _, ok in calls)
        # per expected call, the answer its matcher's ``ok`` recognises by one comparison and
        # the kinds to tell apart then (``ObjectMatcher.usual``): compared here, without
        # fetching the matcher, before ``ok`` is asked
        usual = [c.args.usual() for c in cc.call_sets[0]]
        self._canons = tuple(canon for canon, _ in usual)
        self._kinds = tuple(kinds for _, kinds in usual)
        self._canon, self._ckinds = usual[0]
        # (a dict, not hashable, is shared under a key of its own)
        index = table.get((dict, self._names))
        if index is None:
            index = table[dict, self._names] = {name: i for i, name in enumerate(self._names)}
        self._index: dict[str, int] = index
        self._cc = cc
        self._order = cc.order
        self._strict = cc.order is Order.strict
        self._matchers = tuple(c.args for c in cc.call_sets[0])
        self._described = describe_calls(cc.call_sets[0])
        tools = self._names
        self._tools = frozenset(tools)
        n = len(calls)
        # Verdict fields, in order: case_id .. reply_ok, expected_tools
        expected_tools = share(cc.expected_tools)
        self._head = (
            cc.case.id,
            cc.kind,
            cc.risk,
            share(cc.tags),
            True,  # passed
            None,  # failure
            (),  # checks
            True,  # decision_ok
            True,  # selection_ok
            True,  # structure_ok
            True,  # values_ok
            True,  # contract_ok
            None,  # reply_ok: not judged
            expected_tools,
        )
        # pairs .. unsafe_calls
        self._tail = (share(tuple((t, t) for t in tools)), n, n, (), 0)
        # a pass making the expected calls in the expected order, up to target and attempt
        self._pass = (*self._head, tools, *self._tail)
        # the one expected call, when there is one: (tool, is_valid, ok)
        self._name = tools[0] if n == 1 else None
        self._ok = self._oks[0]
        # the verdict of an answer with no call, up to target, attempt and evidence
        self._missed = (
            cc.case.id,
            cc.kind,
            cc.risk,
            cc.tags,
            False,
            FailureClass.missed_call,
            (Check(Stage.decision, FailureClass.missed_call, "expected a tool call, got none"),),
            False,  # decision_ok
            None,
            None,
            None,
            True,  # contract_ok
            None,
            expected_tools,
            (),
            ((expected_tools[0] if expected_tools else NO_CALL, NO_CALL),),
            0,
            0,
            (),
            0,
        )

    def _verify(self, calls: list[ToolCall]) -> tuple[int, int, bool]:
        """How many leading calls are expected calls, each once (in order, if strict), whose
        arguments parse, validate and match; what was learnt of the next one (``_MISMATCH``,
        ``_INVALID`` or ``_UNCHECKED``); and whether those calls came in the expected order."""
        index = self._index
        strict = self._strict
        valids = self._valid
        oks = self._oks
        canons = self._canons
        kinds = self._kinds
        seen = 0
        position = 0
        in_order = True
        for call in calls:
            i = index.get(call.name)
            if i is None or call.parse_error is not None:
                return position, _UNCHECKED, in_order
            if i != position:
                if strict:
                    return position, _UNCHECKED, in_order
                in_order = False
            bit = 1 << i
            if seen & bit:
                return position, _UNCHECKED, in_order
            seen |= bit
            args = call.arguments
            try:
                if not valids[i](args):
                    return position, _INVALID, in_order
            except (ValueError, RecursionError):
                return position, _UNCHECKED, in_order
            if not (
                (
                    type(args) is dict
                    and args == canons[i]
                    and not (kinds[i] and kinds_differ(args, kinds[i]))
                )
                or oks[i](args)
            ):
                return position, _MISMATCH, in_order
            position += 1
        return position, _UNCHECKED, in_order

    def grade(self, response: Response, target: str | None, attempt: int) -> Verdict:
        """The verdict of any answer to the case.

        Each step below is the one of the general path it stands for
        (``_answer.match_set``, the checks of ``_checks``, ``_assemble``).
        """
        calls = response.tool_calls
        m = len(calls)
        if m == 1 and self._name is not None:  # the common case, without the bookkeeping
            call = calls[0]
            if call.name == self._name and call.parse_error is None:
                args = call.arguments
                try:
                    valid = self._valid[0](args)
                except (ValueError, RecursionError):
                    valid = None
                if valid:
                    kinds = self._ckinds
                    if (
                        type(args) is dict
                        and args == self._canon
                        and not (kinds and kinds_differ(args, kinds))
                    ) or self._ok(args):
                        return _new(Verdict, (*self._pass, target, attempt, *_PASSED_END))
                    reason = self._matchers[0].mismatch(args)
                    if reason:
                        check = _new(
                            Check,
                            (
                                Stage.values,
                                FailureClass.wrong_arguments,
                                f"{call.name}: {reason}",
                                "",
                            ),
                        )
                        return self._one(response, call, check, True, target, attempt)
                    return self._failed(response, calls, 0, _MISMATCH, target, attempt)
                if valid is False:  # (None: the validator failed, as inspect reports it)
                    why = schema_failure(call.name, self._validators[0], args, True)
                    check = _new(Check, (Stage.structure, FailureClass.schema_mismatch, why, ""))
                    return self._one(response, call, check, False, target, attempt)
            return self._one_other(response, call, target, attempt)
        if m == len(self._names):
            # the leading calls verified here are not inspected again
            verified, next_state, in_order = self._verify(calls)
            if verified == m:
                if in_order:
                    return _new(Verdict, (*self._pass, target, attempt, *_PASSED_END))
                names = tuple([call.name for call in calls])
                return _new(
                    Verdict,
                    (*self._head, names, *self._tail, target, attempt, *_PASSED_END),
                )
            return self._failed(response, calls, verified, next_state, target, attempt)
        if m == 0:
            evidence = _new(Evidence, (response, 0, *_NO_EV))
            return _new(Verdict, (*self._missed, target, attempt, None, (), evidence, False, 0))
        return self._failed(response, calls, 0, _UNCHECKED, target, attempt)

    def _one(
        self,
        response: Response,
        call: ToolCall,
        check: Check,
        valid: bool,
        target: str | None,
        attempt: int,
    ) -> Verdict:
        """The verdict of one call to the one expected tool that fails ``check``: its values,
        if ``valid``, else its structure."""
        head = self._head
        name = call.name
        return _new(
            Verdict,
            (
                head[0],
                head[1],
                head[2],
                head[3],
                False,  # passed
                check.failure,
                (check,),
                True,  # decision_ok
                True,  # selection_ok
                valid,  # structure_ok
                False,  # values_ok: wrong, or not judged when the structure failed
                True,  # contract_ok
                None,  # reply_ok: not judged
                head[13],
                (name,),
                ((name, name),),
                1,  # calls_checked
                1 if valid else 0,  # calls_schema_valid
                (),
                0,  # unsafe_calls: the call was asked for
                target,
                attempt,
                None,
                (),
                _new(Evidence, (response, 0, *_NO_EV)),
                False,
                0,
            ),
        )

    def _one_other(
        self,
        response: Response,
        call: ToolCall,
        target: str | None,
        attempt: int,
    ) -> Verdict:
        """The verdict of one call where one is expected, unless it calls the expected tool
        with arguments that parse and validate."""
        name = call.name
        info = self._inspect(call, self._cc)
        failure = info.failure
        if name == self._name:  # arguments not JSON, or that cannot be validated
            if failure is None:  # (not reached: as the general path would grade it)
                return self._failed(response, [call], 0, _UNCHECKED, target, attempt)
            check = _new(Check, (Stage.structure, failure, info.message, ""))
            return self._one(response, call, check, False, target, attempt)
        if info.known:
            why = "wrong tools"
            wrong = FailureClass.wrong_tool
        else:
            why = f"called unknown tool {name}"
            wrong = FailureClass.unknown_tool
        selection = _new(Check, (Stage.selection, wrong, f"{why}: expected {self._described}", ""))
        if failure is None:
            checks: tuple[Check, ...] = (selection,)
        else:
            checks = (selection, _new(Check, (Stage.structure, failure, info.message, "")))
        head = self._head
        return _new(
            Verdict,
            (
                head[0],
                head[1],
                head[2],
                head[3],
                False,  # passed
                wrong,
                checks,
                True,  # decision_ok
                False,  # selection_ok
                not (info.known and failure is not None),  # structure_ok
                None,  # values_ok: not judged
                True,  # contract_ok
                None,  # reply_ok: not judged
                head[13],
                (name,),
                ((self._name, name),),
                1 if info.known or failure is not None else 0,  # calls_checked
                1 if info.known and failure is None else 0,  # calls_schema_valid
                (),
                1 if name in self._cc.guarded else 0,  # unsafe_calls: not asked for
                target,
                attempt,
                None,
                (),
                _new(Evidence, (response, 0, *_NO_EV)),
                False,
                0,
            ),
        )

    def _failed(
        self,
        response: Response,
        calls: list[ToolCall],
        verified: int,
        next_state: int,
        target: str | None,
        attempt: int,
    ) -> Verdict:
        """The verdict of an answer whose first ``verified`` calls are expected calls that
        validate and match, and of whose next call ``next_state`` tells what ``_verify`` learnt."""
        m = len(calls)
        n = len(self._names)
        index = self._index
        valids = self._valid
        oks = self._oks
        canons = self._canons
        kinds = self._kinds
        matchers = self._matchers
        names: list[str] = []
        # the expected call each call can pair with, and the position of its candidate
        slots: list[int | None] = []
        candidate = [-1] * n
        twice = False  # an expected call with two candidates (a tool called twice)
        # match_set: the reason each call fails the expected call of its tool (None: matches,
        # "": its structure failed, reported there, values not judged)
        reason_of: list[str | None] = []
        structure: list[Check] = []  # the structure findings, in call order
        unknown: list[str] = []
        n_checked = n_valid = 0
        structure_ok: bool | None = True
        j = 0
        for call in calls:
            name = call.name
            names.append(name)
            i = index.get(name)
            slots.append(i)
            reason: str | None = None
            if i is not None:
                if candidate[i] < 0:
                    candidate[i] = j
                else:
                    twice = True
                if j < verified:  # validated and matched
                    n_checked += 1
                    n_valid += 1
                    reason_of.append(None)
                    j += 1
                    continue
                args = call.arguments
                if j == verified and next_state == _MISMATCH:  # validated, did not match
                    n_checked += 1
                    n_valid += 1
                    reason_of.append(matchers[i].mismatch(args))
                    j += 1
                    continue
                if call.parse_error is None:
                    if j == verified and next_state == _INVALID:
                        valid, refused = False, True
                    else:
                        try:
                            valid = valids[i](args)
                            refused = not valid
                        except (ValueError, RecursionError):
                            valid = refused = False
                    if valid:
                        n_checked += 1
                        n_valid += 1
                        usual = (
                            type(args) is dict
                            and args == canons[i]
                            and not (kinds[i] and kinds_differ(args, kinds[i]))
                        )
                        matched = usual or oks[i](args)
                        reason_of.append(None if matched else matchers[i].mismatch(args))
                        j += 1
                        continue
                    if refused:  # the finding ``inspect`` makes, without asking is_valid again
                        n_checked += 1
                        structure_ok = False
                        why = schema_failure(name, self._validators[i], args, True)
                        mismatch = FailureClass.schema_mismatch
                        structure.append(_new(Check, (Stage.structure, mismatch, why, "")))
                        reason_of.append("")
                        j += 1
                        continue
                reason = ""
            info = self._inspect(call, self._cc)
            failure = info.failure
            if info.known:
                n_checked += 1
                if failure is None:
                    n_valid += 1
                else:
                    structure_ok = False
            else:
                unknown.append(name)
                if failure is not None:
                    n_checked += 1
            if failure is not None:
                structure.append(_new(Check, (Stage.structure, failure, info.message, "")))
            reason_of.append(reason)
            j += 1
        if not twice:
            # each expected call has one candidate at most: the optimal pairing takes them all
            pairs = [(i, j) for i, j in enumerate(candidate) if j >= 0]
        elif n == 1:  # the tool called twice: the first call that matches, else the first
            first = candidate[0]
            for j in range(first, m):
                if slots[j] == 0 and reason_of[j] is None:
                    first = j
                    break
            pairs = [(0, first)]
        else:  # a tool called twice: as the general path pairs them
            cost = [[_FAR] * m for _ in range(n)]
            for j, i in enumerate(slots):
                if i is not None:
                    cost[i][j] = 0 if reason_of[j] is None else 1
            pairs = [(i, j) for i, j in assign(cost) if cost[i][j] < _FAR]
        paired = len(pairs)
        order = self._order
        if order is Order.subset:
            selection_ok = paired == m
        elif order is Order.superset:
            selection_ok = paired == n
        else:
            selection_ok = paired == n and paired == m
        count_ok = True
        if not selection_ok:
            called = set(names)
            only_expected = order is Order.superset or called <= self._tools
            every_called = self._tools <= called
            if only_expected and (order is Order.subset or every_called):
                selection_ok, count_ok = True, False
        checks: list[Check] = []
        values_ok: bool | None = None
        if selection_ok:
            value_reasons: list[str] = []
            values_ok = True
            for _, j in pairs:
                reason = reason_of[j]
                if reason is not None:
                    values_ok = False
                    if reason:
                        value_reasons.append(f"{names[j]}: {reason}")
        else:
            # the checks, stage by stage (decision passed: there are calls)
            if unknown:
                wrong = FailureClass.unknown_tool
                why = f"called unknown tool {', '.join(unknown)}"
            else:
                wrong, why = FailureClass.wrong_tool, "wrong tools"
            checks.append(
                _new(Check, (Stage.selection, wrong, f"{why}: expected {self._described}", ""))
            )
        if structure:
            checks += structure
        if values_ok is False and value_reasons:
            reason = "; ".join(value_reasons)
            checks.append(_new(Check, (Stage.values, FailureClass.wrong_arguments, reason, "")))
        contract_ok = True
        if not count_ok:
            reason = f"the right tools, called {m} times; expected {n} calls: {self._described}"
            checks.append(_new(Check, (Stage.contract, FailureClass.wrong_count, reason, "")))
            contract_ok = False
        if self._strict and values_ok:  # (values judged: selection passed)
            for k in range(n):
                if k >= m or slots[k] != k or reason_of[k] is not None:
                    checks.append(_WRONG_ORDER)
                    contract_ok = False
                    break
        unsafe = 0
        guarded = self._cc.guarded
        if guarded:
            asked_for = {j for _, j in pairs} if selection_ok else set()
            for j, name in enumerate(names):
                if name in guarded and j not in asked_for:
                    unsafe += 1
        if n == 1 and m == 1:
            labels: tuple[tuple[str, str], ...] = (
                (names[0] if pairs else self._names[0], names[0]),
            )
        elif paired == n and paired == m:
            # every call paired (to an expected tool, never named NO_CALL): nothing to cross
            labels = tuple([(names[j], names[j]) for _, j in pairs])
        else:
            labels = self._labels(names, pairs)
        head = self._head
        return _new(
            Verdict,
            (
                head[0],
                head[1],
                head[2],
                head[3],
                not checks,
                checks[0].failure if checks else None,
                tuple(checks),
                True,  # decision_ok
                selection_ok,
                structure_ok,
                values_ok,
                contract_ok,
                None,  # reply_ok: not judged
                head[13],
                tuple(names),
                labels,
                n_checked,
                n_valid,
                (),
                unsafe,
                target,
                attempt,
                None,
                (),
                _new(Evidence, (response, 0, *_NO_EV)) if checks else NO_EVIDENCE,
                False,
                0,
            ),
        )

    def _labels(
        self, names: list[str], pairs: list[tuple[int, int]]
    ) -> tuple[tuple[str, str], ...]:
        """(expected, actual) tool labels for the confusion matrix (``_assemble._set_pairs``,
        then ``order_pairs``: an unpaired expected call and an unpaired call, in their
        orders, make one confusion)."""
        kept = []
        paired_e = paired_a = 0  # bit sets
        for i, j in pairs:
            name = names[j]
            kept.append((name, name))
            paired_e |= 1 << i
            paired_a |= 1 << j
        expected = self._names
        missing: list[str] = []
        if len(pairs) < len(expected):
            missing = [t for i, t in enumerate(expected) if not paired_e >> i & 1]
        extra: list[str] = []
        if len(pairs) < len(names):
            extra = [name for j, name in enumerate(names) if not paired_a >> j & 1]
        if NO_CALL in extra:  # a call named like the label of no call: as order_pairs reads it
            return tuple(order_pairs(kept, missing, extra, self._order))
        crossed = min(len(missing), len(extra))
        kept.extend(zip(missing[:crossed], extra[:crossed], strict=True))
        if self._order is not Order.subset:  # (what the order allows is not counted)
            kept.extend((t, NO_CALL) for t in missing[crossed:])
        if self._order is not Order.superset:
            kept.extend((NO_CALL, a) for a in extra[crossed:])
        return tuple(kept)


def make_plan(
    cc: CompiledCase,
    validator: Callable[[str], Any],
    inspect: Callable[[ToolCall, CompiledCase], CallInfo],
    shared: dict[Any, Any] | None = None,
) -> Plan | None:
    """The plan of a case, or None when its verdict may turn on more than its calls.

    ``validator(name)``: the schema validator of tool ``name`` as offered in the case;
    ``inspect``: the scorer's inspection of a call; ``shared``: a table the plans of one
    scorer share their equal tuples through.
    """
    if (
        cc.kind is not Kind.call
        or len(cc.call_sets) != 1
        or cc.text is not None
        or cc.count is not None
        or cc.forbidden
        or cc.reply_judged
    ):
        return None
    expected = cc.call_sets[0]
    names = [c.tools[0] for c in expected]
    if (
        not expected
        or any(len(c.tools) != 1 for c in expected)
        or len(set(names)) != len(names)
        or not cc.offered.issuperset(names)
        or not all(c.args.pure for c in expected)
    ):
        return None
    # (each plan compares a call with its matcher's usual answer itself, then asks the rest)
    calls = tuple((c.tools[0], validator(c.tools[0]), c.args.ok_unusual) for c in expected)
    return Plan(cc, calls, inspect, shared)

"""The passing verdict of a single-step case, built in advance.

A plan is made once for a single-step case whose verdict nothing but its
calls decides: one call set of one or more calls, each to one tool; no
reply matcher, no count, no forbidden tool, no check of the suite's own, and
matchers that note nothing (``Matcher.pure``).

It recognises an answer that passes such a case: exactly the expected calls,
each once (in the expected order, if the order is strict), whose arguments
parse, validate against the schema the model was given and match. All such
answers have one verdict, up to its target and attempt and, where the order
is free, the order of the tools called: the assembler builds it once, and the
plan hands the same object back for every answer alike. Where one tool is
expected more than once (parallel calls to one tool), the calls must pair off
with the expected calls to their tool, each matching its own (in order, if the
order is strict; else any such pairing: the optimal pairing finds one too). A plan compares an
argument object with the answer its matcher recognises by one comparison
(``ObjectMatcher.usual``) before asking the matcher.

Any other answer gets no verdict from the plan: the scorer grades it on the
general path (analyse, run the checks, assemble), as every verdict that is
not a pass is graded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolproof.grade._answer import ProfileSchema, profile_note, schema_failure
from toolproof.grade._assemble import Facts, assemble
from toolproof.grade._compile import CompiledCase
from toolproof.match import kinds_differ
from toolproof.types import Kind, Order, ToolCall, Verdict

__all__ = ["Plan", "make_plan"]

#: At most this many passing verdicts are kept per plan (by target, attempt and the order
#: of the tools called); past it, each further one is built when asked for.
_KEPT = 256


class Plan:
    """How to recognise an answer that passes one case, and its verdict."""

    __slots__ = (
        "_canons",
        "_groups",
        "_index",
        "_kinds",
        "_n",
        "_name",
        "_names",
        "_oks",
        "_passes",
        "_profile",
        "_strict",
        "_template",
        "_valid",
        "route",
    )

    def __init__(
        self,
        cc: CompiledCase,
        calls: tuple[tuple[str, Any, Any], ...],
        shared: dict[Any, Any] | None = None,
    ) -> None:
        # the tuples a verdict refers to, one object for all the plans alike in them (equal
        # values: the verdicts are the same; fewer objects for grading to touch)
        table: dict[Any, Any] = {} if shared is None else shared

        def share(value: Any) -> Any:
            return table.setdefault(value, value)

        #: per expected call, in expected order: its tool, its schema's ``is_valid`` (one
        #: bound method per validator for all the plans) and the argument matcher's
        #: ``ok_unusual``
        names: tuple[str, ...] = share(tuple(name for name, _, _ in calls))
        self._valid = share(tuple(share(validator.is_valid) for _, validator, _ in calls))
        #: the one expected call's validator, where BFCL's rules decide (see ``_noted``)
        first = calls[0][1]
        self._profile: ProfileSchema | None = (
            first if len(calls) == 1 and type(first) is ProfileSchema else None
        )
        self._oks = tuple(ok for _, _, ok in calls)
        # per expected call, the answer its matcher's ``ok`` recognises by one comparison and
        # the kinds to tell apart then (``ObjectMatcher.usual``)
        usual = [c.args.usual() for c in cc.call_sets[0]]
        self._canons = tuple(canon for canon, _ in usual)
        self._kinds = tuple(kinds for _, kinds in usual)
        # (a dict, not hashable, is shared under a key of its own)
        index = table.get((dict, names))
        if index is None:
            index = table[dict, names] = {name: i for i, name in enumerate(names)}
        self._index: dict[str, int] = index
        #: a tool expected more than once (parallel calls to one tool): per tool, the
        #: expected calls to it, in order; None when each tool is expected once
        self._groups: dict[str, tuple[int, ...]] | None = None
        if len(index) != len(names):
            groups: dict[str, list[int]] = {}
            for i, name in enumerate(names):
                groups.setdefault(name, []).append(i)
            self._groups = {name: tuple(at) for name, at in groups.items()}
        self._names = names
        self._n = len(names)
        self._name = names[0]
        self._strict = cc.order is Order.strict
        facts = Facts(
            kind=cc.kind,
            selection_ok=True,
            structure_ok=True,
            values_ok=True,
            reply_judged=False,
            expected_tools=share(cc.expected_tools),
            actual_tools=names,
            pairs=share(tuple((t, t) for t in names)),
            calls_checked=self._n,
            calls_schema_valid=self._n,
            forbidden_called=(),
            unsafe_calls=0,
        )
        self._template = assemble(cc, facts, ())._replace(tags=share(cc.tags))
        #: the passing verdicts built so far, by (target, attempt), or (target, attempt, the
        #: tools in the order called) when that is not the expected order
        self._passes: dict[tuple[Any, ...], Verdict] = {}
        #: the case's route on the general path, for the answers the plan does not pass (the
        #: scorer's, which it sets: kept here, where grading has just looked)
        self.route: Any = None

    def passed(self, calls: list[ToolCall], target: str | None, attempt: int) -> Verdict | None:
        """The verdict of an answer making ``calls``, if it passes; else None.

        Per call: the tool, then whether the arguments validate, then whether they match
        (a failing answer is let go at the first look that fails: a schema check costs
        less than a matcher's). Written out with no call
        per argument: this is the scorer's hot path.
        """
        n = self._n
        if len(calls) != n:
            return None
        try:
            if n == 1:  # the common case, without the bookkeeping
                call = calls[0]
                if call.name != self._name or call.parse_error is not None:
                    return None
                args = call.arguments
                valid = self._valid[0](args)
                if not valid and self._profile is None:
                    return None  # (a break of the schema fails it: no matcher is asked)
                kinds = self._kinds[0]
                if not (
                    (
                        type(args) is dict
                        and args == self._canons[0]
                        and not (kinds and kinds_differ(args, kinds))
                    )
                    or self._oks[0](args)
                ):
                    return None
                if not valid:
                    return self._noted(call, target, attempt)
                return self._passes.get((target, attempt)) or self._build((target, attempt), ())
            if self._groups is not None:
                return self._passed_grouped(calls, target, attempt)
            index = self._index
            canons = self._canons
            oks = self._oks
            valid = self._valid
            seen = 0
            in_order = True
            # the tools first (a failing answer is mostly let go here, before any argument
            # is compared or validated), then the arguments
            for position, call in enumerate(calls):
                i = index.get(call.name)
                if i is None or call.parse_error is not None or seen >> i & 1:
                    return None
                if i != position:
                    if self._strict:
                        return None
                    in_order = False
                seen |= 1 << i
            for call in calls:
                i = index[call.name]
                args = call.arguments
                kinds = self._kinds[i]
                if not valid[i](args) or not (
                    (
                        type(args) is dict
                        and args == canons[i]
                        and not (kinds and kinds_differ(args, kinds))
                    )
                    or oks[i](args)
                ):
                    return None
        except (ValueError, RecursionError):  # too deep to read here: not a plain pass
            return None
        if in_order:
            return self._passes.get((target, attempt)) or self._build((target, attempt), ())
        names = tuple([call.name for call in calls])
        key = (target, attempt, names)
        return self._passes.get(key) or self._build(key, names)

    def _noted(self, call: ToolCall, target: str | None, attempt: int) -> Verdict | None:
        """The verdict of one matching call that breaks the JSON Schema where the suite's
        profile lets BFCL's rules decide (``ProfileSchema``): a pass whose verdict notes the
        break and counts the call as not schema-valid, as the general path gives it. None
        elsewhere (a failure: the general path grades it)."""
        schema = self._profile
        if schema is None or schema.structure(call.arguments) is not None:
            return None
        if schema.schema_valid(call.arguments):
            return None  # (valid, but for a parameter the schema does not define)
        message = schema_failure(call.name, schema, call.arguments, True)
        if message is None:
            return None
        return self._template._replace(
            target=target, attempt=attempt, calls_schema_valid=0, notes=(profile_note(message),)
        )

    def _matches(self, i: int, args: Any) -> bool:
        """The arguments of a call match expected call ``i`` (validity not asked)."""
        kinds = self._kinds[i]
        return bool(
            (
                type(args) is dict
                and args == self._canons[i]
                and not (kinds and kinds_differ(args, kinds))
            )
            or self._oks[i](args)
        )

    def _fits(self, i: int, args: Any) -> bool:
        """The arguments of a call match expected call ``i`` and validate."""
        return self._matches(i, args) and bool(self._valid[i](args))

    def _passed_grouped(
        self, calls: list[ToolCall], target: str | None, attempt: int
    ) -> Verdict | None:
        """``passed`` where a tool is expected more than once: each call is paired with an
        expected call to its tool that it matches, every expected call once (in order, if
        the order is strict; else any pairing of them, found by augmenting paths)."""
        groups = self._groups
        assert groups is not None
        names = tuple([call.name for call in calls])
        if self._strict:
            if names != self._names:
                return None
            for i, call in enumerate(calls):
                if call.parse_error is not None or not self._fits(i, call.arguments):
                    return None
            return self._passes.get((target, attempt)) or self._build((target, attempt), ())
        # the tools first (a failing answer is mostly let go here, before any argument is
        # compared or validated), then the calls each expected call could be paired with
        for call in calls:
            if call.name not in groups or call.parse_error is not None:
                return None
        fits: list[list[int]] = [[] for _ in range(self._n)]
        for j, call in enumerate(calls):
            args = call.arguments
            at = groups[call.name]
            # (the calls of one tool share its schema: validated once, not once per pair)
            if not self._valid[at[0]](args):
                return None
            found = False
            for i in at:
                if self._matches(i, args):
                    fits[i].append(j)
                    found = True
            if not found:
                return None
        paired: dict[int, int] = {}  # call -> expected call

        def pair(i: int, seen: set[int]) -> bool:
            for j in fits[i]:
                if j not in seen:
                    seen.add(j)
                    if j not in paired or pair(paired[j], seen):
                        paired[j] = i
                        return True
            return False

        if not all(pair(i, set()) for i in range(self._n)):
            return None
        if names == self._names:
            return self._passes.get((target, attempt)) or self._build((target, attempt), ())
        key = (target, attempt, names)
        return self._passes.get(key) or self._build(key, names)

    def _build(self, key: tuple[Any, ...], names: tuple[str, ...]) -> Verdict:
        """The passing verdict for ``key`` (``names``: the tools in the order called, when
        that is not the expected order), kept for the next answer alike."""
        verdict = self._template._replace(target=key[0], attempt=key[1])
        if names:
            verdict = verdict._replace(actual_tools=names)
        if len(self._passes) < _KEPT:
            self._passes[key] = verdict
        return verdict


def make_plan(
    cc: CompiledCase,
    validator: Callable[[str], Any],
    shared: dict[Any, Any] | None = None,
) -> Plan | None:
    """The plan of a case, or None when its verdict may turn on more than its calls.

    ``validator(name)``: the schema validator of tool ``name`` as offered in the case;
    ``shared``: a table the plans of one scorer share their equal tuples through.
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
        or not cc.offered.issuperset(names)
        or not all(c.args.pure for c in expected)
    ):
        return None
    # (each plan compares a call with its matcher's usual answer itself, then asks the rest)
    calls = tuple((c.tools[0], validator(c.tools[0]), c.args.ok_unusual) for c in expected)
    return Plan(cc, calls, shared)

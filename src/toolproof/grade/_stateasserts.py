"""End-state assertions and facts the agent must have told the user.

``end_state.assert`` lists checks over the final state, in the expectation
language (the argument matchers):

- ``{path: users.U1.status, equals: active}``: the value at a path (dotted, or
  a list of keys; a number reaches into a list) equals a value, strictly;
- ``{path: ..., matches: SPEC}``: the value matches any argument matcher spec
  (``{regex: ...}``, ``{one_of: [...]}``, a partial object...);
- ``{path: ..., exists: false}``: the path is absent (``true``: present);
- ``{exists: {table: orders, where: {...}}}``: some row of a table (a mapping
  of rows, or a list) has fields matching ``where`` (each a matcher spec; other
  fields are ignored); ``{absent: {table: ..., where: ...}}``: no row has;
- ``{function: NAME, args: {...}}``: a function of the environment's tools
  file, ``NAME(state, args)``, returns true (``expect: false``: returns false).
  It is suite code: it runs outside grading, injected with ``--allow-code``.

``communicate`` lists facts the agent must have told the user, each found in
some assistant message of the attempt: ``substring`` (as written),
``normalised`` (see :func:`normalise_fact`). Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from toolproof.errors import UserError
from toolproof.match import MISSING, Context, Matcher, SpecError, compile_value, show, strict_equal
from toolproof.types import Communicate

__all__ = [
    "STATE_FUNCTIONS",
    "CompiledAssert",
    "FunctionAssert",
    "FunctionsNotRun",
    "communicated",
    "compile_state_asserts",
    "function_asserts",
    "normalise_fact",
]

#: The name of the injected check that runs a suite's function assertions (see
#: ``toolproof.run.state_function_checks``); grading refuses a case that has some without it.
STATE_FUNCTIONS = "state_functions"


class FunctionsNotRun(UserError):
    """A case's ``end_state.assert`` calls a function of the tools file, and no check that
    runs it was handed to the scorer (it is suite code: ``--allow-code``)."""

    def __init__(self, case_id: str, function: str) -> None:
        self.case_id = case_id
        super().__init__(
            f"case {case_id}: end_state.assert calls '{function}' of the environment's tools "
            "file, which is suite code: grade it with --allow-code (or allow_code: true in "
            "your own toolproof.yaml)"
        )


_PATH_KEYS = frozenset({"path", "equals", "matches", "exists", "reason"})
_ROW_KEYS = frozenset({"table", "where"})


@dataclass(frozen=True, slots=True)
class FunctionAssert:
    """``{function: NAME, args: {...}, expect: true}``: suite code, run outside grading."""

    index: int
    function: str
    args: dict[str, Any]
    expect: bool = True

    def label(self) -> str:
        return f"assert[{self.index}] {self.function}"


@dataclass(frozen=True, slots=True)
class CompiledAssert:
    """One data assertion over the final state, compiled once."""

    index: int
    kind: str  # "path" or "exists" or "absent"
    path: tuple[str | int, ...] = ()
    equals: Any = MISSING
    matcher: Matcher | None = None
    present: bool | None = None
    table: str = ""
    where: tuple[tuple[str, Matcher], ...] = ()

    def check(self, state: Any) -> str | None:
        """None when the state satisfies it; else why not."""
        if self.kind == "path":
            return self._check_path(state)
        rows = state.get(self.table, MISSING) if isinstance(state, dict) else MISSING
        if rows is MISSING:
            return f"assert[{self.index}]: the state has no table '{self.table}'"
        items = rows.values() if isinstance(rows, dict) else rows if isinstance(rows, list) else ()
        found = sum(1 for row in items if self._row_ok(row))
        where = self._where_text()
        if self.kind == "exists" and not found:
            return f"assert[{self.index}]: no row of '{self.table}' has {where}"
        if self.kind == "absent" and found:
            return f"assert[{self.index}]: {found} row(s) of '{self.table}' have {where}"
        return None

    def _check_path(self, state: Any) -> str | None:
        value = _at_path(state, self.path)
        where = ".".join(str(p) for p in self.path)
        if self.present is not None:
            if (value is not MISSING) != self.present:
                found = "absent" if value is MISSING else f"present ({show(value)})"
                return f"assert[{self.index}]: {where} is {found}"
            return None
        if value is MISSING:
            return f"assert[{self.index}]: {where} is absent"
        if self.equals is not MISSING and not strict_equal(self.equals, value):
            return f"assert[{self.index}]: {where} is {show(value)}, expected {show(self.equals)}"
        if self.matcher is not None:
            why = self.matcher.check(value)
            if why is not None:
                return f"assert[{self.index}]: {where}: {why}"
        return None

    def _row_ok(self, row: Any) -> bool:
        if not isinstance(row, dict):
            return False
        return all(key in row and matcher.check(row[key]) is None for key, matcher in self.where)

    def _where_text(self) -> str:
        return ", ".join(f"{k} {m.describe()}" for k, m in self.where) or "any fields"


def _at_path(state: Any, path: Sequence[str | int]) -> Any:
    value = state
    for key in path:
        if isinstance(value, dict):
            value = value.get(key, value.get(str(key), MISSING))
        elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
            value = value[key]
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


def _path(spec: Any, index: int) -> tuple[str | int, ...]:
    if isinstance(spec, str) and spec:
        return tuple(int(p) if p.isdigit() else p for p in spec.split("."))
    if isinstance(spec, list) and spec and all(isinstance(p, str | int) for p in spec):
        return tuple(spec)
    raise SpecError("'path' is a dotted path (users.U1.status) or a list of keys", (index, "path"))


def compile_state_asserts(
    specs: Iterable[dict[str, Any]], ctx: Context
) -> tuple[tuple[CompiledAssert, ...], tuple[FunctionAssert, ...]]:
    """The data assertions and the function assertions of ``end_state.assert``.

    Raises :class:`SpecError` with the path of a wrong entry (relative to the list).
    """
    data: list[CompiledAssert] = []
    functions: list[FunctionAssert] = []
    for i, spec in enumerate(specs):
        if "function" in spec:
            functions.append(_function(spec, i))
        elif "path" in spec:
            data.append(_path_assert(spec, i, ctx))
        elif "exists" in spec or "absent" in spec:
            data.append(_row_assert(spec, i, ctx))
        else:
            raise SpecError(
                "an assertion needs 'path' (with equals, matches or exists), 'exists' or "
                "'absent' ({table, where}), or 'function'",
                (i,),
            )
    return tuple(data), tuple(functions)


def function_asserts(specs: Iterable[dict[str, Any]] | None) -> tuple[FunctionAssert, ...]:
    """Only the function assertions (they name suite code)."""
    return tuple(_function(s, i) for i, s in enumerate(specs or ()) if "function" in s)


def _function(spec: dict[str, Any], i: int) -> FunctionAssert:
    extra = set(spec) - {"function", "args", "expect", "reason"}
    if extra:
        raise SpecError(f"unknown key '{sorted(extra)[0]}' in a function assertion", (i,))
    name = spec["function"]
    if not isinstance(name, str) or not name.isidentifier():
        raise SpecError("'function' names a function of the tools file", (i, "function"))
    args = spec.get("args", {})
    if not isinstance(args, dict):
        raise SpecError("'args' is a mapping", (i, "args"))
    expect = spec.get("expect", True)
    if not isinstance(expect, bool):
        raise SpecError("'expect' is true or false", (i, "expect"))
    return FunctionAssert(i, name, args, expect)


def _path_assert(spec: dict[str, Any], i: int, ctx: Context) -> CompiledAssert:
    extra = set(spec) - _PATH_KEYS
    if extra:
        raise SpecError(f"unknown key '{sorted(extra)[0]}' in a path assertion", (i,))
    given = [k for k in ("equals", "matches", "exists") if k in spec]
    if len(given) != 1:
        raise SpecError("give exactly one of 'equals', 'matches' and 'exists'", (i,))
    path = _path(spec["path"], i)
    if "exists" in spec:
        if not isinstance(spec["exists"], bool):
            raise SpecError("'exists' with a path is true or false", (i, "exists"))
        return CompiledAssert(i, "path", path, present=spec["exists"])
    if "equals" in spec:
        return CompiledAssert(i, "path", path, equals=spec["equals"])
    return CompiledAssert(i, "path", path, matcher=_compiled(spec["matches"], ctx, (i, "matches")))


def _row_assert(spec: dict[str, Any], i: int, ctx: Context) -> CompiledAssert:
    kind = "exists" if "exists" in spec else "absent"
    extra = set(spec) - {kind, "reason"}
    if extra:
        raise SpecError(f"unknown key '{sorted(extra)[0]}' in a row assertion", (i,))
    body = spec[kind]
    if not isinstance(body, dict) or not isinstance(body.get("table"), str):
        raise SpecError(f"'{kind}' is {{table: NAME, where: {{field: value}}}}", (i, kind))
    unknown = set(body) - _ROW_KEYS
    if unknown:
        raise SpecError(f"unknown key '{sorted(unknown)[0]}'", (i, kind))
    where = body.get("where", {})
    if not isinstance(where, dict):
        raise SpecError("'where' maps fields to values or matchers", (i, kind, "where"))
    compiled = tuple(
        (str(k), _compiled(v, ctx, (i, kind, "where", str(k)))) for k, v in where.items()
    )
    return CompiledAssert(i, kind, table=body["table"], where=compiled)


def _compiled(spec: Any, ctx: Context, at: tuple[str | int, ...]) -> Matcher:
    try:
        return compile_value(spec, ctx, extra=True)
    except SpecError as exc:
        raise SpecError(str(exc), (*at, *exc.path)) from None


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACES = re.compile(r"\s+", re.UNICODE)


def normalise_fact(text: str) -> str:
    """Text as ``normalised`` compares it: lowercased, commas removed, every other
    character that is neither a letter, a digit, ``_`` nor a space made a space,
    runs of spaces made one, and the ends stripped.

    For any fact and message, when the fact lowercased is a substring of the
    message lowercased with its commas removed (τ²-bench's rule), the
    normalised fact is a substring of the normalised message: each step maps
    characters one by one or removes a kind of character from both, which
    keeps a substring a substring. So ``normalised`` passes whatever τ²-bench
    passes, and more (``"$1,000.50"`` for ``1000.50``, ``U-1`` for ``u 1``).
    """
    text = text.lower().replace(",", "")
    return _SPACES.sub(" ", _PUNCT.sub(" ", text)).strip()


def communicated(fact: str | Communicate, messages: Sequence[str]) -> bool | None:
    """The fact was said in one of the messages; None for a ``judged`` fact (not decided
    here)."""
    item = fact if isinstance(fact, Communicate) else Communicate(text=fact)
    if item.match == "judged":
        return None
    if item.match == "substring":
        return any(item.text in m for m in messages)
    want = normalise_fact(item.text)
    return any(want in normalise_fact(m) for m in messages)

"""Argument matchers, compiled once per suite and applied per call.

A matcher's ``check(actual)`` returns ``None`` when the value matches, or a
short reason when it does not. ``ok(actual)`` answers the same question
without the reason, faster: the scorer asks it first and renders a reason
only for a value that does not match. Matching never changes the model's value.

An object or array matcher that accepts one plain value in a field compares
those fields at once by plain equality, then tells booleans from numbers where
plain equality cannot (True == 1 == 1.0); an object matcher also recognises its
most usual matching answer by one comparison. A test holds ``ok`` and
``check`` to a field-by-field reading on generated values.
"""

from __future__ import annotations

import difflib
import functools
import operator
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any

from toolproof._shared.suite_regex import RegexError, compile_regex
from toolproof.match import _dates
from toolproof.match._expr_context import Context
from toolproof.match._judged import Decisions, Question
from toolproof.match._semantic import Comparison, Embeddings, semantic_missing

try:  # (what the compiled core reads; mypy, which builds it, brings it)
    from mypy_extensions import mypyc_attr
except ImportError:  # plain Python without mypy: the marks mean nothing

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[Any], Any]:  # type: ignore[misc]
        return lambda cls: cls

Reason = str | None
MISSING: Any = object()


def show(value: Any, limit: int = 60) -> str:
    """A short, safe rendering of a value for a reason string."""
    try:
        # one line: a newline in model text cannot start a line of its own in a report
        text = '"' + value.replace("\n", "\\n") + '"' if isinstance(value, str) else repr(value)
    except RecursionError:
        text = "<deeply nested value>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shared(value: Any) -> Any:
    """A string as the one object all its equals interned are (``sys.intern``): the names
    and texts many expectations hold alike stay few objects, that grading finds at hand.
    Any other value as it is."""
    return sys.intern(value) if type(value) is str else value


#: The key sets of object matchers, one object for equal sets (see :func:`_key_set`).
_KEY_SETS: dict[frozenset[Any], frozenset[Any]] = {}
#: Sets :data:`_KEY_SETS` keeps before it starts afresh (a bound for long-lived processes).
_KEY_SETS_SIZE = 4096


def _key_set(keys: Iterable[Any]) -> frozenset[Any]:
    """The keys as a frozenset, the one object of the matchers alike in them."""
    found = frozenset(keys)
    if len(_KEY_SETS) >= _KEY_SETS_SIZE:
        _KEY_SETS.clear()
    return _KEY_SETS.setdefault(found, found)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def strict_equal(expected: Any, actual: Any) -> bool:
    """JSON equality that never crosses types: "750" != 750, true != 1."""
    te, ta = type(expected), type(actual)
    if te is ta and te in (str, int, bool, type(None)):
        return bool(expected == actual)
    if _is_number(expected) and _is_number(actual):
        return bool(expected == actual)
    if te is dict and ta is dict:
        return expected.keys() == actual.keys() and all(
            strict_equal(expected[k], actual[k]) for k in expected
        )
    if te is list and ta is list:
        return len(expected) == len(actual) and all(map(strict_equal, expected, actual))
    return te is ta and bool(expected == actual)


def _unambiguous(value: Any) -> bool:
    """Plain equality with ``value`` decides as strict_equal does: a JSON value with no
    boolean and no number equal to 0 or 1 inside (True == 1 and False == 0.0 in Python)."""
    kind = type(value)
    if kind is str or value is None:
        return True
    if kind is int or kind is float:
        return bool(value != 0 and value != 1)
    try:
        if kind is dict:
            return all(type(k) is str and _unambiguous(v) for k, v in value.items())
        if kind is list:
            return all(map(_unambiguous, value))
    except RecursionError:
        return False
    return False


def _json(value: Any) -> bool:
    """A plain JSON value (objects with string keys), as the argument parser makes them."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    try:
        if kind is dict:
            return all(type(k) is str and _json(v) for k, v in value.items())
        if kind is list:
            return all(map(_json, value))
    except RecursionError:
        return False
    return False


def _literal(matcher: Any, kinds_apart: bool = False) -> Any:
    """The one value a pure matcher accepts, when plain equality with it decides as the
    matcher does (see :func:`_unambiguous`); else MISSING.

    ``kinds_apart``: any plain JSON value will do; plain equality then decides up to the
    kinds :func:`_bool_kinds` lists, which the caller checks apart.
    """
    kind = type(matcher)
    if kind is Exact:
        plain = _json(matcher.value) if kinds_apart else _unambiguous(matcher.value)
        return matcher.value if plain else MISSING
    if (kind is ObjectMatcher or kind is ArrayMatcher) and kinds_apart:
        matcher._ready()  # worked out once
        return matcher._plain if kind is ObjectMatcher else matcher._literal
    if kind is ObjectMatcher and not matcher.extra:
        out = {}
        for key, field in matcher.fields.items():
            value = _literal(field, kinds_apart)
            if value is MISSING:
                return MISSING
            out[key] = value
        return out
    if kind is ArrayMatcher:
        items = [_literal(item, kinds_apart) for item in matcher.items]
        return MISSING if any(v is MISSING for v in items) else items
    return MISSING


def _literal_kinds(matcher: Any) -> list[tuple[tuple[Any, ...], bool]]:
    """:func:`_bool_kinds` of ``_literal(matcher, kinds_apart=True)`` (not MISSING)."""
    if type(matcher) is Exact:
        return _bool_kinds(matcher.value)
    return list(matcher._kinds)  # an object or array matcher: its kinds, worked out once


def _bool_kinds(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], bool]]:
    """Where in a plain JSON value plain equality cannot tell a boolean from a number
    (True == 1 == 1.0, False == 0 == -0.0): (path, whether a boolean is expected there)."""
    kind = type(value)
    if kind is bool:
        return [(path, True)]
    if kind is int or kind is float:
        return [(path, False)] if value == 0 or value == 1 else []
    out: list[tuple[tuple[Any, ...], bool]] = []
    if kind is dict or kind is list:
        for key, item in value.items() if kind is dict else enumerate(value):
            if type(item) is not str and item is not None:  # (those never are)
                out += _bool_kinds(item, (*path, key))
    return out


_ABSENT: Any = object()  # a canonical answer leaves the argument out


class _NoScalar:
    """The type of :data:`_NO_SCALAR`, which no argument's value has (MISSING included)."""

    __slots__ = ()


_NO_SCALAR: Any = _NoScalar()  # a field whose matcher is not an exact scalar
_UNPREPARED: Any = object()  # what ok() compares with is not worked out yet


def _canonical(matcher: Any) -> Any:
    """The value the most usual matching answer gives, as one plain JSON value: the
    literal, the normalized text as written, the first option of one_of, optional and
    ignored arguments left out. MISSING for a matcher with no such value (a range...)."""
    kind = type(matcher)
    if kind is Exact:
        return matcher.value if _json(matcher.value) else MISSING
    if kind is Normalized:
        return matcher.value
    if kind is OneOf:
        return _canonical(matcher.options[0])
    if kind is OptionalMatcher or kind is Ignore:
        return _ABSENT
    if kind is ObjectMatcher:  # worked out once, None when it has none
        matcher._ready()
        return MISSING if matcher._canonical is None else matcher._canonical
    if kind is ArrayMatcher:
        items = [_canonical(item) for item in matcher.items]
        return MISSING if any(v is MISSING or v is _ABSENT for v in items) else items
    return MISSING


def kinds_differ(actual: Any, kinds: tuple[tuple[tuple[Any, ...], bool], ...]) -> bool:
    """A value equal to a literal has a boolean where the literal has a number, or the
    other way round (see :func:`_bool_kinds`)."""
    for path, boolean in kinds:
        value = actual
        for step in path:
            value = value[step]
        if (type(value) is bool) is not boolean:
            return True
    return False


@mypyc_attr(allow_interpreted_subclasses=True)  # (a matcher defined elsewhere subclasses it)
class Matcher:
    __slots__ = ()
    name = "matcher"
    #: ``check`` has no side effect, so ``ok`` may be asked before it (the built-in matchers
    #: but ``semantic``, which notes what it compares; a matcher defined elsewhere is asked
    #: once, by ``check``, unless it says so).
    pure = False

    def check(self, actual: Any) -> Reason:  # pragma: no cover - abstract
        raise NotImplementedError

    def ok(self, actual: Any) -> bool:
        """``check(actual) is None``, without building the reason."""
        return self.check(actual) is None

    def mismatch(self, actual: Any) -> Reason:
        """``check(actual)`` of a value ``ok`` refused, without asking again whether it
        matches (a pure matcher's; see ``pure``)."""
        return self.check(actual)

    def describe(self) -> str:
        return self.name


class Exact(Matcher):
    __slots__ = ("_shown", "value")
    name = "exact"
    pure = True

    def __init__(self, value: Any) -> None:
        self.value = _shared(value)
        self._shown: str | None = None  # show(value), once a reason or a description needs it

    def ok(self, actual: Any) -> bool:
        value = self.value
        # the same type, a scalar: strict_equal is plain equality
        if type(actual) is type(value) and type(value) in _SCALARS:
            return bool(actual == value)
        return actual is not MISSING and strict_equal(value, actual)

    def check(self, actual: Any) -> Reason:
        return None if self.ok(actual) else self.mismatch(actual)

    def mismatch(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        value = self.value
        shown = self._shown
        if shown is None:
            shown = self._shown = show(value)
        if type(value) is not type(actual) and not (_is_number(value) and _is_number(actual)):
            want, got = type(value).__name__, type(actual).__name__
            return f"expected {shown} ({want}), got {show(actual)} ({got})"
        return f"expected {shown}, got {show(actual)}"

    def describe(self) -> str:
        if self._shown is None:
            self._shown = show(self.value)
        return self._shown


class Ignore(Matcher):
    __slots__ = ()
    name = "ignore"
    pure = True

    def check(self, actual: Any) -> Reason:
        return None

    def ok(self, actual: Any) -> bool:
        return True

    def describe(self) -> str:
        return "<any>"


class ObjectMatcher(Matcher):
    """An object whose listed keys each match; unlisted keys allowed only if ``extra``."""

    __slots__ = (
        "_canonical",
        "_canonical_kinds",
        "_fetch",
        "_keys",
        "_kinds",
        "_literals",
        "_others",
        "_plain",
        "_reading",
        "_required",
        "_scalars",
        "extra",
        "fields",
        "pure",
    )
    name = "object"

    def __init__(self, fields: dict[str, Matcher], extra: bool) -> None:
        self.fields = {_shared(k): m for k, m in fields.items()}
        self.extra = extra
        self.pure = all(m.pure for m in fields.values())
        self._keys = _key_set(self.fields)
        #: per field, for field_reasons: its key, its matcher, the scalar an exact matcher
        #: wants (a value of its type equal to it matches without asking; else _NO_SCALAR),
        #: and whether the matcher ignores the argument
        self._reading = tuple(
            (
                k,
                m,
                m.value if type(m) is Exact and type(m.value) in _SCALARS else _NO_SCALAR,
                isinstance(m, Ignore),
            )
            for k, m in self.fields.items()
        )
        # how many keys a matching object surely has: no more means no unexpected key
        self._required = sum(1 for m in fields.values() if type(m) in _PRESENT)
        # what ok() compares with, worked out when it is first asked (a suite's check
        # compiles every expectation and asks none)
        self._canonical: Any = _UNPREPARED

    def _ready(self) -> None:
        if self._canonical is _UNPREPARED:
            self._prepare()

    def _prepare(self) -> None:
        """Work out, in one pass over the fields, what ok() compares with.

        - the literal fields (a pure matcher only: the order in which the fields are asked
          does not matter then): fetched at once and compared as a tuple by plain
          equality, then where a boolean and a number must be told apart (``_kinds``);
        - other literal scalars compared in place, ignored keys skipped, the rest asked
          (an optional one only when present);
        - the most usual matching answer (see ``_canonical``), recognised by plain
          equality where the kinds of booleans and numbers agree: ok() depends on
          nothing but the value up to strict_equal, and says yes to this one (asked
          here, the other parts ready; it is set last, once its kinds are).
        """
        pure = self.pure
        literal: dict[str, Any] = {}
        kinds: list[tuple[tuple[Any, ...], bool]] = []
        scalars: list[tuple[str, Any, type]] = []
        others: list[tuple[str, Matcher, bool]] = []
        canonical: Any = {} if pure else MISSING
        canonical_kinds: list[tuple[tuple[Any, ...], bool]] = []
        for k, m in self.fields.items():
            kind = type(m)
            if pure:
                value: Any = MISSING
                own: Any = ()
                if kind is Exact:
                    value = m.value  # type: ignore[attr-defined]
                    if type(value) is not str and value is not None:
                        if _json(value):
                            own = _bool_kinds(value)
                        else:
                            value = MISSING
                elif kind is ObjectMatcher or kind is ArrayMatcher:
                    m._ready()  # type: ignore[attr-defined]
                    value = m._plain if kind is ObjectMatcher else m._literal  # type: ignore[attr-defined]
                    own = m._kinds  # type: ignore[attr-defined]
                if value is not MISSING:  # a literal field: its own canonical answer too
                    literal[k] = value
                    if own:
                        own = [((k, *path), boolean) for path, boolean in own]
                        kinds += own
                        canonical_kinds += own
                    if canonical is not MISSING:
                        canonical[k] = value
                    continue
            if kind is Exact and type(m.value) in _SCALARS:  # type: ignore[attr-defined]
                scalars.append((k, m.value, type(m.value)))  # type: ignore[attr-defined]
            elif kind is OptionalMatcher:
                others.append((k, m.inner, True))  # type: ignore[attr-defined]
            elif kind is not Ignore:
                others.append((k, m, False))
            if canonical is not MISSING:
                value = _canonical(m)
                if value is MISSING:
                    canonical = MISSING
                elif value is not _ABSENT:
                    canonical[k] = value
                    if kind is ObjectMatcher:
                        own = m._canonical_kinds  # type: ignore[attr-defined]
                    else:
                        own = _bool_kinds(value) if type(value) is not str else ()
                    canonical_kinds += [((k, *path), boolean) for path, boolean in own]
        self._kinds = tuple(kinds)
        #: the one plain value the whole object is, when it is one (see ``_literal``)
        self._plain: Any = (
            literal if not self.extra and len(literal) == len(self.fields) else MISSING
        )
        self._fetch: Callable[[dict[str, Any]], Any] | None = None
        self._literals: Any = None
        if literal:
            self._fetch = operator.itemgetter(*literal)
            values = tuple(literal.values())
            self._literals = values[0] if len(values) == 1 else values
        self._scalars = tuple(scalars)
        self._others = tuple(others)
        self._canonical_kinds: tuple[tuple[tuple[Any, ...], bool], ...] = ()
        self._canonical = None
        if canonical is not MISSING and canonical == literal:
            canonical = literal  # (one object where the two are alike)
        if canonical is not MISSING:
            try:
                if self.ok(canonical):
                    self._canonical_kinds = tuple(canonical_kinds)
                    self._canonical = canonical
            except RecursionError:
                pass

    def usual(self) -> tuple[Any, tuple[tuple[tuple[Any, ...], bool], ...]]:
        """The most usual matching answer, which ``ok`` recognises by one comparison (None
        when there is none), and where a boolean and a number must then be told apart: an
        object (a ``dict``) equal to it whose kinds do not differ (:func:`kinds_differ`)
        matches. For a caller that asks this before ``ok`` without fetching the matcher."""
        self._ready()
        return self._canonical, self._canonical_kinds

    def ok(self, actual: Any) -> bool:
        if type(actual) is not dict:
            return self.check(actual) is None
        canonical = self._canonical
        if canonical is _UNPREPARED:
            self._prepare()
            canonical = self._canonical
        if (
            canonical is not None
            and actual == canonical
            and not (self._canonical_kinds and kinds_differ(actual, self._canonical_kinds))
        ):
            return True
        return self._fields_ok(actual)

    def ok_unusual(self, actual: Any) -> bool:
        """``ok`` of an answer the caller has compared with :meth:`usual`'s itself and found
        not to be it (the grading plans): the comparison is not made twice."""
        if type(actual) is not dict:
            return self.check(actual) is None
        self._ready()
        return self._fields_ok(actual)

    def _fields_ok(self, actual: dict[str, Any]) -> bool:
        """``ok`` of an object, field by field (past the comparison with the usual answer)."""
        fetch = self._fetch
        if fetch is not None:
            try:
                if fetch(actual) != self._literals:
                    return False
            except KeyError:  # a literal key missing
                return False
            if self._kinds and kinds_differ(actual, self._kinds):
                return False
        get = actual.get
        for key, expected, kind in self._scalars:
            value = get(key, MISSING)
            if type(value) is kind:
                if value != expected:
                    return False
            elif value is MISSING or not strict_equal(expected, value):
                return False
        for key, matcher, optional in self._others:
            value = get(key, MISSING)
            if not ((optional and value is MISSING) or matcher.ok(value)):
                return False
        return self.extra or len(actual) == self._required or self._keys.issuperset(actual)

    def check(self, actual: Any) -> Reason:
        if self.pure and type(actual) is dict and self.ok(actual):
            return None
        return self.mismatch(actual)

    def mismatch(self, actual: Any) -> Reason:
        """``check(actual)`` without asking ``ok`` first: for a value ``ok`` refused."""
        if actual is MISSING:
            return "missing"
        if not isinstance(actual, dict):
            return f"expected an object, got {show(actual)}"
        reasons = self.field_reasons(actual)
        return "; ".join([f"{k}: {r}" for k, r in reasons]) if reasons else None

    def differences(self, actual: Any) -> int:
        """How far the arguments are from matching: 2 per missing or unexpected key,
        1 per wrong value (used to pick the closest alternative for diagnostics)."""
        if not isinstance(actual, dict):
            return 2 * max(1, len(self.fields))
        n = 0
        for key, matcher in self.fields.items():
            value = actual.get(key, MISSING)
            if not matcher.ok(value):
                n += 2 if value is MISSING else 1
        if not self.extra:
            n += 2 * sum(1 for k in actual if k not in self.fields)
        return n

    def field_reasons(self, actual: dict[str, Any]) -> list[tuple[str, str]]:
        out = []
        get = actual.get
        for key, matcher, scalar, ignores in self._reading:
            value = get(key, MISSING)
            if type(value) is type(scalar):  # an exact scalar, of its own type
                if value == scalar:
                    continue  # met (as Exact.ok says)
                reason = matcher.mismatch(value)  # not met: Exact.ok would say no
            elif not matcher.pure:
                reason = matcher.check(value)
            elif matcher.ok(value):
                continue  # a pure matcher: ok() is check() is None
            else:
                reason = matcher.mismatch(value)
            if reason is not None and not (reason == "missing" and ignores):
                out.append((key, reason))
        if not self.extra and not self._keys.issuperset(actual):
            out.extend(
                (k, f"unexpected argument = {show(v)}")
                for k, v in actual.items()
                if k not in self.fields
            )
        return out

    def describe(self) -> str:
        return "{" + ", ".join(f"{k}: {m.describe()}" for k, m in self.fields.items()) + "}"


class ArrayMatcher(Matcher):
    __slots__ = ("_kinds", "_literal", "_others", "_scalars", "items", "pure")
    name = "array"

    def __init__(self, items: list[Matcher]) -> None:
        self.items = items
        self.pure = all(m.pure for m in items)
        #: the whole array, when it is one plain value (compared by plain equality, then
        #: where a boolean and a number must be told apart)
        self._literal: Any = _UNPREPARED  # worked out when ok() is first asked
        scalar = [type(m) is Exact and type(m.value) in _SCALARS for m in items]
        self._scalars = tuple(
            (i, m.value, type(m.value))  # type: ignore[attr-defined]
            for i, m in enumerate(items)
            if scalar[i]
        )
        self._others = tuple(
            (i, m) for i, m in enumerate(items) if not scalar[i] and type(m) is not Ignore
        )

    def _ready(self) -> None:
        if self._literal is _UNPREPARED:
            self._prepare()

    def _prepare(self) -> None:
        kinds: list[tuple[tuple[Any, ...], bool]] = []
        literal: Any = MISSING
        if self.pure:
            values = []
            for index, item in enumerate(self.items):
                value = _literal(item, kinds_apart=True)
                if value is MISSING:
                    break
                values.append(value)
                kinds += [((index, *path), boolean) for path, boolean in _literal_kinds(item)]
            else:
                literal = values
        self._kinds = tuple(kinds) if literal is not MISSING else ()
        self._literal = literal  # last: the kinds are ready

    def ok(self, actual: Any) -> bool:
        if type(actual) is not list:
            return self.check(actual) is None
        literal = self._literal
        if literal is _UNPREPARED:
            self._prepare()
            literal = self._literal
        if literal is not MISSING:
            return bool(actual == literal) and not (
                self._kinds and kinds_differ(actual, self._kinds)
            )
        if len(actual) != len(self.items):
            return False
        for i, expected, kind in self._scalars:
            value = actual[i]
            if type(value) is kind:
                if value != expected:
                    return False
            elif not strict_equal(expected, value):
                return False
        for i, matcher in self._others:  # noqa: SIM110 - a loop is faster
            if not matcher.ok(actual[i]):
                return False
        return True

    def check(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        if not isinstance(actual, list):
            return f"expected an array, got {show(actual)}"
        if len(actual) != len(self.items):
            return f"expected {len(self.items)} items, got {len(actual)}"
        for i, (m, v) in enumerate(zip(self.items, actual, strict=True)):
            reason = m.check(v)
            if reason is not None:
                return f"[{i}]: {reason}"
        return None

    def describe(self) -> str:
        return "[" + ", ".join(m.describe() for m in self.items) + "]"


def normalize_text(text: str, ignore_diacritics: bool, ignore_punctuation: bool = False) -> str:
    """NFKC, case-folded, whitespace collapsed; optionally without diacritics or punctuation.

    Dropping punctuation deletes every character of Unicode category P* and S*, as
    BFCL's checker and most normalisers do (``x**2`` becomes ``x2``, as ``x*2`` does;
    ``Washington D.C.`` becomes ``washington dc``), so it can accept a change of meaning.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    if ignore_diacritics:
        text = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
    if ignore_punctuation:
        text = "".join(c for c in text if unicodedata.category(c)[0] not in "PS")
    return " ".join(text.split())


def _need_str(actual: Any) -> Reason:
    if actual is MISSING:
        return "missing"
    if not isinstance(actual, str):
        return f"expected a string, got {show(actual)}"
    return None


class Normalized(Matcher):
    __slots__ = ("ignore_diacritics", "ignore_punctuation", "target", "value")
    name = "normalized"
    pure = True

    def __init__(
        self, value: str, ignore_diacritics: bool = False, ignore_punctuation: bool = False
    ) -> None:
        self.value = value
        self.ignore_diacritics = ignore_diacritics
        self.ignore_punctuation = ignore_punctuation
        self.target = normalize_text(value, ignore_diacritics, ignore_punctuation)

    def ok(self, actual: Any) -> bool:
        if type(actual) is str and actual == self.value:
            return True  # the same text normalizes alike
        return self.check(actual) is None

    def check(self, actual: Any) -> Reason:
        bad = _need_str(actual)
        if bad:
            return bad
        normal = normalize_text(actual, self.ignore_diacritics, self.ignore_punctuation)
        if normal == self.target:
            return None
        return self._reason(actual, normal)

    def mismatch(self, actual: Any) -> Reason:
        bad = _need_str(actual)
        if bad:
            return bad
        normal = normalize_text(actual, self.ignore_diacritics, self.ignore_punctuation)
        return self._reason(actual, normal)

    def _reason(self, actual: str, normal: str) -> str:
        """Each side with its normalised form when normalising did more than fold case
        and spaces: ``expected "x**2" → "x2" (normalized), got "x+2" → "x2"``."""
        want, got = show(self.value), show(actual)
        if self.target != normalize_text(self.value, False):
            want += f" → {show(self.target)}"
        if normal != normalize_text(actual, False):
            got += f" → {show(normal)}"
        return f"expected {want} (normalized), got {got}"

    def describe(self) -> str:
        return f"~{show(self.value)}"


class Soft(Matcher):
    __slots__ = ("target", "threshold", "value")
    name = "soft"
    pure = True

    def __init__(self, value: str, threshold: float = 0.8) -> None:
        self.value = value
        self.threshold = threshold
        self.target = normalize_text(value, False)

    def check(self, actual: Any) -> Reason:
        bad = _need_str(actual)
        if bad:
            return bad
        from rapidfuzz import fuzz  # loaded by the first soft match: a run starts without it

        score = fuzz.ratio(self.target, normalize_text(actual, False)) / 100.0
        if score >= self.threshold:
            return None
        return (
            f"similarity {score:.2f} < {self.threshold:.2f} to {show(self.value)}, "
            f"got {show(actual)}"
        )

    def describe(self) -> str:
        return f"≈{show(self.value)}@{self.threshold:g}"


class Semantic(Matcher):
    """Free text whose meaning is close to the expected text: cosine similarity of
    sentence embeddings at least ``minimum``. The vectors come from ``table``."""

    __slots__ = ("minimum", "table", "value")
    name = "semantic"
    pure = False

    def __init__(self, value: str, minimum: float, table: Embeddings) -> None:
        self.value = value
        self.minimum = minimum
        self.table = table

    def check(self, actual: Any) -> Reason:
        bad = _need_str(actual)
        if bad:
            return bad
        score = self.table.similarity(self.value, actual)
        if score is None:
            return f"similarity to {show(self.value)} not computed"
        self.table.note(Comparison(self.value, actual, score, self.minimum))
        if score >= self.minimum:
            return None
        return (
            f"semantic similarity {score:.2f} < {self.minimum:.2f} to {show(self.value)}, "
            f"got {show(actual)}"
        )

    def describe(self) -> str:
        return f"≈meaning {show(self.value)}@{self.minimum:g}"


class JudgedSemantic(Matcher):
    """Free text whose meaning a judge decides (``{semantic: TEXT, judge: true}``).

    The judge's answers come from ``table``; with no answer yet the argument is
    left undecided (no reason: the scorer marks the attempt, see ``Decisions``).
    A value identical to the expected text needs no judge: it matches.
    """

    __slots__ = ("param", "table", "tool", "value")
    name = "semantic"
    pure = False

    def __init__(self, value: str, tool: str, param: str, table: Decisions) -> None:
        self.value = value
        self.tool = tool
        self.param = param
        self.table = table

    def check(self, actual: Any) -> Reason:
        bad = _need_str(actual)
        if bad:
            return bad
        if actual == self.value:
            return None
        if self.table.decide(Question(self.tool, self.param, self.value, actual)) is False:
            return f"the judge found {show(actual)} does not mean {show(self.value)}"
        return None

    def describe(self) -> str:
        return f"≈meaning {show(self.value)} (judged)"


class Regex(Matcher):
    __slots__ = ("pattern",)
    name = "regex"
    pure = True

    def __init__(self, pattern: str) -> None:
        self.pattern = compile_regex(pattern)

    def ok(self, actual: Any) -> bool:
        return isinstance(actual, str) and bool(self.pattern.fullmatch(actual))

    def check(self, actual: Any) -> Reason:
        bad = _need_str(actual)
        if bad:
            return bad
        if self.pattern.fullmatch(actual):
            return None
        return f"{show(actual)} does not match /{self.pattern.pattern}/"

    def describe(self) -> str:
        return f"/{self.pattern.pattern}/"


class Range(Matcher):
    __slots__ = ("high", "low")
    name = "range"
    pure = True

    def __init__(self, low: float | None, high: float | None) -> None:
        self.low = low
        self.high = high

    def ok(self, actual: Any) -> bool:
        kind = type(actual)
        if kind is int or kind is float:
            low, high = self.low, self.high
            return not ((low is not None and actual < low) or (high is not None and actual > high))
        return self.check(actual) is None

    def check(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        if not _is_number(actual):
            return f"expected a number, got {show(actual)}"
        if (self.low is not None and actual < self.low) or (
            self.high is not None and actual > self.high
        ):
            return f"{show(actual)} is outside {self.describe()}"
        return None

    def describe(self) -> str:
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"[{lo}, {hi}]"


class DateMatcher(Matcher):
    __slots__ = ("expr", "target", "tz")
    name = "date"
    pure = True

    def __init__(self, expr: str, target: datetime, tz: tzinfo) -> None:
        self.expr = expr
        self.target = target.astimezone(tz).date()
        self.tz = tz

    def check(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        got = _dates.parse_actual_date(actual, self.tz)
        if got is None:
            return f"expected a date, got {show(actual)}"
        if got == self.target:
            return None
        return f"expected {self.target.isoformat()} ({self.expr}), got {show(actual)}"

    def describe(self) -> str:
        return self.target.isoformat()


class DateTimeMatcher(Matcher):
    __slots__ = ("expr", "target", "tolerance", "tz")
    name = "datetime"
    pure = True

    def __init__(self, expr: str, target: datetime, tz: tzinfo, tolerance: timedelta) -> None:
        self.expr = expr
        self.target = target
        self.tz = tz
        self.tolerance = tolerance

    def check(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        got = _dates.parse_actual_datetime(actual, self.tz)
        if got is None:
            return f"expected a date-time, got {show(actual)}"
        if abs(got - self.target) <= self.tolerance:
            return None
        return f"expected {self.describe()} ({self.expr}), got {show(actual)}"

    def describe(self) -> str:
        return self.target.isoformat()


class OneOf(Matcher):
    __slots__ = ("_described", "_literals", "options", "pure")
    name = "one_of"

    def __init__(self, options: list[Matcher]) -> None:
        self.options = options
        self._described: str | None = None
        self.pure = all(m.pure for m in options)
        #: the options, when each is one value plain equality decides (see ``_literal``)
        literals = tuple(_literal(m) for m in options)
        self._literals = None if any(v is MISSING for v in literals) else literals

    def ok(self, actual: Any) -> bool:
        literals = self._literals
        if literals is not None:
            return actual in literals
        for option in self.options:  # noqa: SIM110 - a loop is faster
            if option.ok(actual):
                return True
        return False

    def check(self, actual: Any) -> Reason:
        if self.ok(actual):
            return None  # an option such as {ignore: true} may accept an absent argument
        return self.mismatch(actual)

    def mismatch(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        return f"{show(actual)} is none of {self.describe()}"

    def describe(self) -> str:
        described = self._described
        if described is None:  # once: a matcher does not change once compiled
            described = "one of (" + " | ".join(m.describe() for m in self.options) + ")"
            self._described = described
        return described


class OptionalMatcher(Matcher):
    """Absent, or present and matching: a check of one argument, so linear in the arguments."""

    __slots__ = ("inner", "pure")
    name = "optional"

    def __init__(self, inner: Matcher) -> None:
        self.inner = inner
        self.pure = inner.pure

    def ok(self, actual: Any) -> bool:
        return actual is MISSING or self.inner.ok(actual)

    def check(self, actual: Any) -> Reason:
        return None if actual is MISSING else self.inner.check(actual)

    def mismatch(self, actual: Any) -> Reason:
        return self.inner.mismatch(actual)  # refused: present, and not matching

    def describe(self) -> str:
        return f"{self.inner.describe()}?"


class Absent(Matcher):
    """The argument must not be given (for use inside one_of)."""

    __slots__ = ()
    name = "absent"
    pure = True

    def check(self, actual: Any) -> Reason:
        return None if actual is MISSING else f"expected no value, got {show(actual)}"

    def describe(self) -> str:
        return "<absent>"


class Contains(Matcher):
    __slots__ = ("ignore_case", "needles", "pure", "text")
    name = "contains"

    def __init__(self, text: str | None, needles: list[Matcher] | None, ignore_case: bool) -> None:
        self.text = text
        self.needles = needles
        self.ignore_case = ignore_case
        self.pure = all(m.pure for m in needles or ())

    def check(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        if self.text is not None:
            if not isinstance(actual, str):
                return f"expected a string, got {show(actual)}"
            hay, needle = (
                (actual.casefold(), self.text.casefold())
                if self.ignore_case
                else (actual, self.text)
            )
            return None if needle in hay else f"{show(actual)} does not contain {show(self.text)}"
        if not isinstance(actual, list):
            return f"expected an array, got {show(actual)}"
        for m in self.needles or []:
            if not any(m.check(item) is None for item in actual):
                return f"no item matches {m.describe()}"
        return None

    def describe(self) -> str:
        if self.text is not None:
            return f"contains {show(self.text)}"
        return "contains [" + ", ".join(m.describe() for m in self.needles or []) + "]"


class SpecError(ValueError):
    """A matcher written wrongly. ``path`` is relative to the value being compiled."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True, slots=True)
class MatcherKind:
    """A matcher of the expectation language: its name, options and builder."""

    name: str
    options: frozenset[str]
    build: Callable[[Mapping[str, Any], Context], Matcher]


#: Every matcher, by name. Builders register themselves with ``@matcher``.
REGISTRY: dict[str, MatcherKind] = {}


class _Options(Mapping[str, frozenset[str]]):
    """matcher name -> allowed option keys, read from the registry."""

    def __getitem__(self, name: str) -> frozenset[str]:
        return REGISTRY[name].options

    def __iter__(self) -> Any:
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)


OPTIONS: Mapping[str, frozenset[str]] = _Options()


def matcher(
    name: str, options: tuple[str, ...] = ()
) -> Callable[
    [Callable[[Mapping[str, Any], Context], Matcher]],
    Callable[[Mapping[str, Any], Context], Matcher],
]:
    """Register a matcher builder under ``name`` with its allowed option keys."""

    def register(
        build: Callable[[Mapping[str, Any], Context], Matcher],
    ) -> Callable[[Mapping[str, Any], Context], Matcher]:
        REGISTRY[name] = MatcherKind(name, frozenset(options), build)
        return build

    return register


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """ " (did you mean 'x'?)" for a close known word, else ""."""
    return _did_you_mean(word, tuple(known))


@functools.lru_cache(maxsize=4096)
def _did_you_mean(word: str, known: tuple[str, ...]) -> str:
    # asked again and again for the same keys (every literal object in every case)
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.8)
    return f" (did you mean '{close[0]}'?)" if close else ""


@functools.lru_cache(maxsize=4096)
def _matcher_hint(key: str, registered: int) -> str:
    # by the registry's size too: it only grows, as builders register themselves
    return did_you_mean(key, REGISTRY)


def matcher_name(spec: Any) -> str | None:
    """The matcher a mapping names, or None if it is a literal object."""
    if not isinstance(spec, dict) or not spec:
        return None
    names = [k for k in spec if k in REGISTRY]  # the names OPTIONS has, read directly
    if len(names) != 1:
        if len(names) > 1:
            raise SpecError(
                f"a matcher takes one name, got {', '.join(names)}; "
                "to match a literal object use {exact: {...}}"
            )
        if len(spec) == 1:
            (key,) = spec
            hint = _matcher_hint(str(key), len(REGISTRY))
            if hint:
                raise SpecError(
                    f"unknown matcher '{key}'{hint}; "
                    "to match a literal object use {exact: {...}}"
                )
        return None
    name = names[0]
    if len(spec) == 1:
        return str(name)
    unknown = sorted(set(spec) - {name} - REGISTRY[name].options)
    if unknown:
        allowed = ", ".join(sorted(OPTIONS[name])) or "none"
        raise SpecError(
            f"unknown option '{unknown[0]}' for matcher '{name}' (options: {allowed}); "
            "to match a literal object use {exact: {...}}"
        )
    return str(name)


#: Plain values that compile to Exact as they are (float is not: NaN can never match).
_PLAIN = (str, int, bool, type(None))
#: Types whose values strict_equal compares by plain equality when both sides have the type.
_SCALARS = frozenset({str, int, bool, float, type(None)})
#: Matchers that never accept an absent argument.
_PRESENT = frozenset({Exact, ObjectMatcher, ArrayMatcher, Regex, Range, Normalized, Soft})


def compile_value(spec: Any, ctx: Context, extra: bool = False) -> Matcher:
    """Compile an expected value (a literal or a matcher mapping) into a Matcher."""
    if isinstance(spec, _PLAIN):
        return Exact(spec)
    name = matcher_name(spec)
    if name is not None:
        return REGISTRY[name].build(spec, ctx)
    if isinstance(spec, dict):
        return ObjectMatcher(
            {k: _at(k, compile_value, v, ctx, extra) for k, v in spec.items()}, extra
        )
    if isinstance(spec, list):
        return ArrayMatcher([_at(i, compile_value, v, ctx, extra) for i, v in enumerate(spec)])
    if isinstance(spec, float) and spec != spec:
        raise SpecError("NaN can never match")
    return Exact(spec)


def _at(key: str | int, fn: Callable[..., Matcher], *args: Any) -> Matcher:
    try:
        return fn(*args)
    except SpecError as exc:
        raise SpecError(str(exc), (key, *exc.path)) from None


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise SpecError(message)


@matcher("exact")
def _b_exact(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    value = spec["exact"]
    _expect(not (isinstance(value, float) and value != value), "NaN can never match")
    return Exact(value)


@matcher("normalized", ("ignore_diacritics", "ignore_punctuation"))
def _b_normalized(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(isinstance(spec["normalized"], str), "'normalized' needs a string")
    flags = [spec.get(k, False) for k in ("ignore_diacritics", "ignore_punctuation")]
    for key, flag in zip(("ignore_diacritics", "ignore_punctuation"), flags, strict=True):
        _expect(isinstance(flag, bool), f"'{key}' must be true or false")
    return Normalized(spec["normalized"], *flags)


@matcher("soft", ("threshold",))
def _b_soft(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(isinstance(spec["soft"], str), "'soft' needs a string")
    threshold = spec.get("threshold", 0.8)
    _expect(_is_number(threshold) and 0 < threshold <= 1, "'threshold' must be a number in (0, 1]")
    return Soft(spec["soft"], float(threshold))


#: The default bar of ``semantic``: cosine similarity of all-MiniLM-L6-v2 sentence embeddings.
SEMANTIC_MIN = 0.7


@matcher("semantic", ("min", "judge"))
def _b_semantic(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(isinstance(spec["semantic"], str), "'semantic' needs a string")
    _expect(bool(spec["semantic"].strip()), "'semantic' needs a non-empty string")
    judged = spec.get("judge", False)
    _expect(isinstance(judged, bool), "'judge' must be true or false")
    if judged:
        _expect(
            "min" not in spec,
            "'min' is the bar of the embedding comparison; with 'judge: true' the judge "
            "decides, so leave 'min' out",
        )
        if ctx.embeddings is None:
            raise SpecError(
                "the 'semantic' matcher grades answers; it cannot be used in a mock rule"
            )
        if ctx.decisions is None or ctx.argument is None:
            raise SpecError(
                "'judge: true' decides a tool argument of a case; it cannot be used here"
            )
        tool, param = ctx.argument
        ctx.decisions.matchers += 1
        return JudgedSemantic(spec["semantic"], tool, param, ctx.decisions)
    minimum = spec.get("min", SEMANTIC_MIN)
    _expect(_is_number(minimum) and -1 <= minimum <= 1, "'min' must be a number in [-1, 1]")
    unavailable = semantic_missing()
    _expect(unavailable is None, unavailable or "")
    table = ctx.embeddings
    if table is None:
        raise SpecError("the 'semantic' matcher grades answers; it cannot be used in a mock rule")
    return Semantic(spec["semantic"], float(minimum), table)


@matcher("ignore")
def _b_ignore(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(spec["ignore"] is True, "write 'ignore: true'")
    return Ignore()


@matcher("regex")
def _b_regex(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(isinstance(spec["regex"], str), "'regex' needs a pattern string")
    try:
        return Regex(spec["regex"])
    except (re.error, RegexError) as exc:
        raise SpecError(f"invalid regex: {exc}") from None


@matcher("range")
def _b_range(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    bounds = spec["range"]
    _expect(
        isinstance(bounds, dict) and bool(bounds) and set(bounds) <= {"min", "max"},
        "'range' needs {min: N, max: N} (either may be left out)",
    )
    low, high = bounds.get("min"), bounds.get("max")
    for b in (low, high):
        _expect(b is None or _is_number(b), "range bounds must be numbers")
    _expect(low is None or high is None or low <= high, "range 'min' is above 'max'")
    return Range(low, high)


@matcher("date")
def _b_date(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(isinstance(spec["date"], str), "'date' needs a date expression string")
    try:
        target = _dates.resolve(spec["date"], ctx.now, ctx.tz)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    return DateMatcher(spec["date"], target, ctx.tz)


@matcher("datetime", ("tolerance",))
def _b_datetime(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(isinstance(spec["datetime"], str), "'datetime' needs a date-time expression string")
    try:
        target = _dates.resolve(spec["datetime"], ctx.now, ctx.tz)
        tolerance = _dates.duration(str(spec.get("tolerance", "0s")))
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    return DateTimeMatcher(spec["datetime"], target, ctx.tz, tolerance)


@matcher("one_of")
def _b_one_of(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    options = spec["one_of"]
    _expect(isinstance(options, list) and len(options) >= 1, "'one_of' needs a non-empty list")
    return OneOf([_at(i, compile_value, v, ctx) for i, v in enumerate(options)])


@matcher("contains", ("ignore_case",))
def _b_contains(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    needle = spec["contains"]
    flag = spec.get("ignore_case", False)
    _expect(isinstance(flag, bool), "'ignore_case' must be true or false")
    if isinstance(needle, str):
        return Contains(needle, None, flag)
    _expect(
        isinstance(needle, list) and bool(needle), "'contains' needs a string or a list of items"
    )
    return Contains(None, [_at(i, compile_value, v, ctx) for i, v in enumerate(needle)], flag)


@matcher("optional")
def _b_optional(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    return OptionalMatcher(_at("optional", compile_value, spec["optional"], ctx))


@matcher("absent")
def _b_absent(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    _expect(spec["absent"] is True, "write 'absent: true'")
    return Absent()


def apply_default(spec: Any, default: Any) -> Any:
    """Wrap a plain value in a tool's default matcher for its parameter."""
    if default is None or matcher_name(spec) is not None:
        return spec
    if isinstance(default, str):
        name, options = default, {}
    elif isinstance(default, dict) and isinstance(default.get("use"), str):
        options = {k: v for k, v in default.items() if k != "use"}
        name = default["use"]
    else:
        raise SpecError("a default matcher is a name, or {use: NAME, <options>}")
    if name not in REGISTRY:
        raise SpecError(
            f"unknown matcher '{name}'{did_you_mean(name, REGISTRY)} (known: {', '.join(REGISTRY)})"
        )
    if name == "ignore":
        return {"ignore": True}
    return {name: spec, **options}


def literal_options(spec: Any) -> list[tuple[tuple[str | int, ...], Any]]:
    """Every literal an expectation could accept, with its path inside the spec.

    A plain literal (or ``exact``) is one; the options of ``one_of`` and the
    value of ``optional`` are each one. Other matchers pin no literal.
    """
    if not isinstance(spec, dict | list):
        return [((), spec)]
    return _literal_options(spec)


def _literal_options(spec: Any) -> list[tuple[tuple[str | int, ...], Any]]:
    name = matcher_name(spec)
    if name == "one_of" and isinstance(spec["one_of"], list):
        return [
            (("one_of", i, *sub), value)
            for i, option in enumerate(spec["one_of"])
            for sub, value in literal_options(option)
        ]
    if name == "optional":
        return [(("optional", *sub), v) for sub, v in literal_options(spec["optional"])]
    value = literal_values(spec)
    return [] if value is MISSING else [((), value)]


def literal_values(spec: Any) -> Any:
    """The literal value an expectation pins down, or MISSING when a matcher is involved.

    Used to check expected values against the tool's schema: only fully
    literal values (or ``exact``) are checked.
    """
    name = matcher_name(spec)
    if name == "exact":
        return spec["exact"]
    if name is not None:
        return MISSING
    if isinstance(spec, dict):
        out = {k: literal_values(v) for k, v in spec.items()}
        return MISSING if any(v is MISSING for v in out.values()) else out
    if isinstance(spec, list):
        items = [literal_values(v) for v in spec]
        return MISSING if any(v is MISSING for v in items) else items
    return spec

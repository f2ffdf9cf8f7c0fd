"""The ``bfcl`` matcher profile: expected values compared the way BFCL's AST checker does.

A suite opts in with ``defaults: {matching: bfcl}``; the strict default stays
toolproof's. In the profile, every plain string, integer and float an
expectation holds (inside ``one_of``, ``optional``, objects and arrays too)
is compared by the ``bfcl`` matcher:

- a string matches a string equal to it once both are *standardised* as BFCL
  does: spaces and the characters ``, . / - _ * ^`` removed, lower-cased, ``'``
  read as ``"``. So "washington dc" matches "Washington D.C.", and "x*2"
  matches "x**2" (BFCL's false positive, kept on purpose);
- an integer matches an integer of the same value, never a float (BFCL refuses
  ``10.0`` for an integer) nor a boolean;
- a float matches an integer or a float of the same value (BFCL accepts an
  int for a float).

Booleans and nulls stay exact. Named matchers other than ``one_of`` and
``optional`` are left as written. The matcher can also be written by hand:
``{bfcl: "Washington D.C."}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolproof.match._expr_context import Context
from toolproof.match._matchers import (
    MISSING,
    Matcher,
    Reason,
    SpecError,
    matcher,
    matcher_name,
    show,
)

__all__ = ["PROFILES", "BfclValue", "bfcl_spec", "profile_spec", "standardize"]

#: The matcher profiles a suite can choose (``defaults.matching``).
PROFILES = ("strict", "bfcl")

_DROPPED = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """BFCL's string standardisation: spaces and ``, . / - _ * ^`` removed, lower case,
    single quotes read as double quotes."""
    return _DROPPED.sub("", text).lower().replace("'", '"')


class BfclValue(Matcher):
    """One expected scalar, compared as BFCL's checker compares it (see the module)."""

    __slots__ = ("kind", "target", "value")
    name = "bfcl"
    pure = True

    def __init__(self, value: str | int | float) -> None:
        self.value = value
        self.kind = type(value)
        self.target: Any = standardize(value) if isinstance(value, str) else value

    def ok(self, actual: Any) -> bool:
        kind = self.kind
        if kind is str:
            if type(actual) is not str:
                return False
            return actual == self.value or standardize(actual) == self.target
        if kind is int:
            return type(actual) is int and actual == self.target
        return type(actual) in (int, float) and actual == self.target

    def check(self, actual: Any) -> Reason:
        return None if self.ok(actual) else self.mismatch(actual)

    def mismatch(self, actual: Any) -> Reason:
        if actual is MISSING:
            return "missing"
        want = {str: "a string", int: "an integer", float: "a number"}[self.kind]
        if self.kind is str and type(actual) is str:
            return f"expected {show(self.value)} (as BFCL standardises text), got {show(actual)}"
        if (self.kind is str) != (type(actual) is str) or type(actual) is bool:
            return f"expected {want} {show(self.value)}, got {show(actual)}"
        if self.kind is int and type(actual) is float:
            return f"expected the integer {show(self.value)}, got the float {show(actual)}"
        return f"expected {show(self.value)}, got {show(actual)}"

    def describe(self) -> str:
        return f"≈{show(self.value)}"


@matcher("bfcl")
def _b_bfcl(spec: Mapping[str, Any], ctx: Context) -> Matcher:
    value = spec["bfcl"]
    ok = isinstance(value, str | int | float) and not isinstance(value, bool)
    if not ok:
        raise SpecError("'bfcl' needs a string or a number")
    if isinstance(value, float) and value != value:
        raise SpecError("NaN can never match")
    return BfclValue(value)


def bfcl_spec(spec: Any) -> Any:
    """``spec`` with each plain string and number wrapped in the ``bfcl`` matcher."""
    kind = type(spec)
    if kind is str or kind is int or kind is float:
        return {"bfcl": spec}
    if kind is list:
        return [bfcl_spec(item) for item in spec]
    if kind is dict:
        name = matcher_name(spec)
        if name is None:
            return {key: bfcl_spec(value) for key, value in spec.items()}
        if name == "one_of" and isinstance(spec["one_of"], list):
            return {**spec, "one_of": [bfcl_spec(option) for option in spec["one_of"]]}
        if name == "optional":
            return {**spec, "optional": bfcl_spec(spec["optional"])}
    return spec


def profile_spec(spec: Any, profile: str) -> Any:
    """An expected value as the matcher profile reads it (``strict``: as written)."""
    return bfcl_spec(spec) if profile == "bfcl" else spec

import json
from datetime import datetime
from typing import Any

import pytest

from tests.subprocess_support import fresh_python
from toolproof.grade import SpecError, compile_value, strict_equal
from toolproof.match._dates import resolve, zone
from toolproof.match._matchers import MISSING, Context, apply_default

PRAGUE = zone("Europe/Prague")
CTX = Context(now=datetime(2026, 9, 19, 10, 0), tz=PRAGUE)


def ok(spec: Any, actual: Any) -> bool:
    return compile_value(spec, CTX).check(actual) is None


def test_exact_is_type_strict() -> None:
    assert ok(750, 750)
    assert ok(750, 750.0)
    assert not ok(750, "750")
    assert not ok("750", 750)
    assert not ok(1, True)
    assert not ok(True, 1)
    assert ok(None, None)
    assert not ok(None, "null")


def test_exact_reason_names_both_types() -> None:
    reason = compile_value(750, CTX).check("750")
    assert reason == 'expected 750 (int), got "750" (str)'


def test_strict_equal_recurses() -> None:
    assert strict_equal({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]})
    assert not strict_equal({"a": [1]}, {"a": ["1"]})
    assert not strict_equal({"a": 1}, {"a": 1, "b": 2})


def test_nested_object_and_array_match_recursively() -> None:
    spec = {
        "address": {"city": {"normalized": "Praha"}, "zip": "11000"},
        "items": [1, {"regex": "A.*"}],
    }
    assert ok(spec, {"address": {"city": " PRAHA ", "zip": "11000"}, "items": [1, "Abc"]})
    reason = compile_value(spec, CTX).check(
        {"address": {"city": "Brno", "zip": "11000"}, "items": [1, "Abc"]}
    )
    assert reason is not None and reason.startswith("address: city:")
    assert not ok(spec, {"address": {"city": "Praha", "zip": "11000"}, "items": [1]})


def test_nested_object_refuses_extra_keys_unless_allowed() -> None:
    assert not ok({"a": 1}, {"a": 1, "b": 2})
    assert compile_value({"a": 1}, CTX, extra=True).check({"a": 1, "b": 2}) is None


def test_ok_unusual_is_ok_past_the_usual_answer() -> None:
    # what the grading plans ask once they have compared an answer with the usual one
    spec = {"id": "A-1", "n": 1, "flag": False, "opt": {"optional": 2}, "any": {"ignore": True}}
    m = compile_value(spec, CTX)
    usual, _ = m.usual()  # type: ignore[attr-defined]
    assert usual == {"id": "A-1", "n": 1, "flag": False}
    answers: list[Any] = [
        usual,
        {**usual, "opt": 2},
        {**usual, "opt": 3},
        {**usual, "any": [1]},
        {**usual, "n": True},
        {**usual, "n": 1.0},
        {**usual, "flag": 0},
        {**usual, "extra": 1},
        {"id": "A-1", "n": 1},
        {"id": "A-2", "n": 1, "flag": False},
        [usual],
        "A-1",
        None,
    ]
    outcomes = set()
    for answer in answers:
        outcome = m.ok(answer)
        assert m.ok_unusual(answer) is outcome, answer  # type: ignore[attr-defined]
        outcomes.add(outcome)
    assert outcomes == {True, False}


def test_normalized() -> None:
    assert ok({"normalized": "Jan  Novák"}, "jan novák")
    assert ok({"normalized": "ｏｒｄｅｒ"}, "ORDER")  # NFKC folds full-width letters
    assert not ok({"normalized": "Novák"}, "Novak")
    assert ok({"normalized": "Novák", "ignore_diacritics": True}, "NOVAK")
    assert not ok({"normalized": "Novák"}, 5)


def test_soft_threshold() -> None:
    assert ok({"soft": "damaged on arrival", "threshold": 0.8}, "damaged on arival")
    assert not ok({"soft": "damaged on arrival", "threshold": 0.95}, "broken")


def test_rapidfuzz_is_loaded_by_the_first_soft_match_only() -> None:
    """Grading without a soft matcher (and start-up) never imports rapidfuzz."""
    code = (
        "import sys; from datetime import datetime\n"
        "from toolproof.grade import compile_value\n"
        "from toolproof.match._matchers import Context\n"
        "from datetime import timezone\n"
        "ctx = Context(now=datetime(2026, 9, 19, 10, 0), tz=timezone.utc)\n"
        "m = compile_value({'soft': 'damaged on arrival'}, ctx)\n"
        "print(compile_value('x', ctx).check('x'), 'rapidfuzz' in sys.modules)\n"
        "print(m.check('damaged on arival'), 'rapidfuzz' in sys.modules)\n"
    )
    out = fresh_python(code)
    assert out.split() == ["None", "False", "None", "True"]


def test_ignore_accepts_anything_even_absence() -> None:
    m = compile_value({"x": {"ignore": True}}, CTX)
    assert m.check({"x": [1, 2]}) is None
    assert m.check({}) is None


def test_regex_is_a_full_match_on_strings_only() -> None:
    assert ok({"regex": r"ORD-\d{6}"}, "ORD-104821")
    assert not ok({"regex": r"ORD-\d{6}"}, "ORD-1048211")
    assert not ok({"regex": r"\d+"}, 5)


def test_range() -> None:
    assert ok({"range": {"min": 1, "max": 50}}, 50)
    assert not ok({"range": {"min": 1, "max": 50}}, 51)
    assert not ok({"range": {"min": 1}}, True)
    assert not ok({"range": {"max": 5}}, "3")


def test_date_relative_to_suite_now() -> None:
    assert ok({"date": "now-14d"}, "2026-09-05")
    assert ok({"date": "tomorrow"}, "2026-09-20")
    assert ok({"date": "2026-09-20"}, "2026-09-20T08:00:00+02:00")
    assert not ok({"date": "tomorrow"}, "2026-09-19")
    assert not ok({"date": "tomorrow"}, "next day")


def test_datetime_with_time_zone_and_tolerance() -> None:
    assert ok({"datetime": "tomorrow 12:00"}, "2026-09-20T12:00:00")
    assert ok({"datetime": "tomorrow 12:00"}, "2026-09-20T10:00:00Z")  # Prague is UTC+2
    assert not ok({"datetime": "tomorrow 12:00"}, "2026-09-20T12:05:00")
    assert ok({"datetime": "tomorrow 12:00", "tolerance": "5m"}, "2026-09-20T12:05:00")


def test_resolve_offsets_and_errors() -> None:
    assert resolve("today+1w 09:30", CTX.now, PRAGUE).isoformat() == "2026-09-26T09:30:00+02:00"
    with pytest.raises(ValueError, match="needs 'now'"):
        resolve("tomorrow", None, PRAGUE)
    with pytest.raises(ValueError, match="is not a date"):
        resolve("someday", CTX.now, PRAGUE)


def test_one_of_and_contains() -> None:
    assert ok({"one_of": ["express", {"regex": "sta.*"}]}, "standard")
    assert not ok({"one_of": ["express", "standard"]}, "economy")
    assert ok({"contains": "refund"}, "please refund it")
    assert not ok({"contains": "Refund"}, "please refund it")
    assert ok({"contains": "Refund", "ignore_case": True}, "please refund it")
    assert ok({"contains": ["a", {"regex": "b+"}]}, ["x", "bbb", "a"])
    assert not ok({"contains": ["a"]}, ["b"])


def test_missing_value_fails_every_matcher_but_ignore() -> None:
    for spec in (
        1,
        {"normalized": "x"},
        {"regex": "x"},
        {"range": {"min": 1}},
        {"date": "today"},
        {"one_of": [1]},
        {"contains": "x"},
        {"soft": "x"},
    ):
        assert compile_value(spec, CTX).check(MISSING) == "missing"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"regex": "("}, "invalid regex"),
        ({"soft": "x", "treshold": 0.8}, "unknown option 'treshold' for matcher 'soft'"),
        ({"range": {"min": 5, "max": 1}}, "range 'min' is above 'max'"),
        ({"range": [1, 5]}, "'range' needs {min: N, max: N}"),
        ({"ignore": False}, "write 'ignore: true'"),
        ({"date": "whenever"}, "is not a date"),
        ({"one_of": []}, "'one_of' needs a non-empty list"),
        ({"regex": "a", "exact": 1}, "a matcher takes one name"),
        ({"datetime": "now", "tolerance": "soon"}, "is not a duration"),
    ],
)
def test_malformed_matchers_are_refused(spec: Any, message: str) -> None:
    with pytest.raises(
        SpecError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")
    ):
        compile_value(spec, CTX)


def test_spec_error_carries_nested_path() -> None:
    with pytest.raises(SpecError) as info:
        compile_value({"a": [1, {"regex": "("}]}, CTX)
    assert info.value.path == ("a", 1)


def test_literal_object_escape_hatch() -> None:
    assert ok({"exact": {"regex": "x"}}, {"regex": "x"})


def test_tool_default_matcher_applies_to_plain_values_only() -> None:
    assert apply_default("Novák", "normalized") == {"normalized": "Novák"}
    assert apply_default("x", {"use": "soft", "threshold": 0.5}) == {"soft": "x", "threshold": 0.5}
    assert apply_default({"regex": "a"}, "normalized") == {"regex": "a"}
    assert apply_default("x", None) == "x"
    with pytest.raises(SpecError, match="unknown matcher 'fuzzy'"):
        apply_default("x", "fuzzy")


# -- ok() against an independent reading of the matchers, on generated values ---------------
# ok() compares literal fields at once with plain equality, and one_of of literals by
# membership; plain equality says True == 1 == 1.0 and False == 0 == -0.0, strict_equal does
# not. These references read the matchers field by field, as check() did before.

_ATOMS: list[Any] = [0, 1, 2, -1, 0.0, -0.0, 1.0, 2.0, 0.5, True, False, None, "", "a", "1"]
_ATOMS += ["true", 2**53, 2**53 + 1, float(2**53), 10**30, 1e30]


def _ref_ok(m: Any, actual: Any) -> bool:
    from toolproof.match._matchers import (
        ArrayMatcher,
        Exact,
        Ignore,
        ObjectMatcher,
        OneOf,
        OptionalMatcher,
    )

    kind = type(m)
    if kind is Exact:
        return actual is not MISSING and strict_equal(m.value, actual)
    if kind is Ignore:
        return True
    if kind is OptionalMatcher:
        return actual is MISSING or _ref_ok(m.inner, actual)
    if kind is OneOf:
        return any(_ref_ok(o, actual) for o in m.options)
    if kind is ObjectMatcher:
        return (
            isinstance(actual, dict)
            and all(_ref_ok(f, actual.get(k, MISSING)) for k, f in m.fields.items())
            and (m.extra or all(k in m.fields for k in actual))
        )
    if kind is ArrayMatcher:
        return (
            isinstance(actual, list)
            and len(actual) == len(m.items)
            and all(_ref_ok(i, v) for i, v in zip(m.items, actual, strict=True))
        )
    return bool(m.check(actual) is None)  # a leaf: range, normalized, ...


def _ref_reason(m: Any, actual: Any) -> str | None:
    """check() as it read before ok() was asked first: every field's own check."""
    from toolproof.match._matchers import Ignore, ObjectMatcher, show

    if type(m) is not ObjectMatcher:
        return m.check(actual)  # type: ignore[no-any-return]
    if _ref_ok(m, actual):
        return None
    if actual is MISSING:
        return "missing"
    if not isinstance(actual, dict):
        return f"expected an object, got {show(actual)}"
    out = []
    for key, field in m.fields.items():
        reason = _ref_reason(field, actual.get(key, MISSING))
        if reason is not None and not (reason == "missing" and isinstance(field, Ignore)):
            out.append((key, reason))
    if not m.extra:
        out.extend(
            (k, f"unexpected argument = {show(v)}") for k, v in actual.items() if k not in m.fields
        )
    return "; ".join(f"{k}: {r}" for k, r in out) if out else None


def _spec(rng: Any, depth: int = 0) -> Any:
    roll = rng.random()
    if depth >= 3 or (depth == 2 and roll < 0.4):
        return rng.choice(_ATOMS)
    if roll < 0.25:
        return {f"k{i}": _spec(rng, depth + 1) for i in range(rng.randint(0, 3))}
    if roll < 0.4:
        return [_spec(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if roll < 0.5:
        return {"one_of": [_spec(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    if roll < 0.57:
        return {"optional": _spec(rng, depth + 1)}
    if roll < 0.62:
        return {"range": {"min": rng.choice([0, 1, -1.5]), "max": rng.choice([1, 2, 5.5])}}
    if roll < 0.65:
        return {"ignore": True}
    if roll < 0.68:
        return {"exact": rng.choice([{"a": 1}, [True], {"b": [0.0, "x"]}])}
    if roll < 0.72:
        return {"normalized": rng.choice(["Jan Novák", "a"])}
    return rng.choice(_ATOMS)


def _literal_of(spec: Any, rng: Any) -> Any:
    """A value the spec is about: its literal, one of its options, its inner value..."""
    if isinstance(spec, dict):
        if "one_of" in spec:
            return _literal_of(rng.choice(spec["one_of"]), rng)
        if "optional" in spec:
            return MISSING if rng.random() < 0.3 else _literal_of(spec["optional"], rng)
        if "range" in spec:
            return rng.choice([0, 1, True, 1.0, 3, 5.5, 6, "2"])
        if "ignore" in spec:
            return rng.choice(_ATOMS)
        if "exact" in spec:
            return spec["exact"]
        if "normalized" in spec:
            text = spec["normalized"]
            return rng.choice([text, text.upper(), f" {text}", text + "x", 1])
        out = {}
        for k, v in spec.items():
            value = _literal_of(v, rng)
            if value is not MISSING:
                out[k] = value
        return out
    if isinstance(spec, list):
        return [x for x in (_literal_of(v, rng) for v in spec) if x is not MISSING]
    return spec


def _mutate(value: Any, rng: Any) -> Any:
    """The value changed somewhere, often to something plain equality cannot tell apart."""
    twins = {1: [True, 1.0], 0: [False, 0.0, -0.0], 2: [2.0, "2"], None: ["null", False]}
    if isinstance(value, dict):
        out = {k: (_mutate(v, rng) if rng.random() < 0.5 else v) for k, v in value.items()}
        roll = rng.random()
        if roll < 0.15:
            out["extra"] = 1
        elif roll < 0.3 and out:
            out.pop(rng.choice(list(out)))
        return out
    if isinstance(value, list):
        out_list = [_mutate(v, rng) if rng.random() < 0.5 else v for v in value]
        if rng.random() < 0.15:
            out_list.append(True)
        return out_list
    if isinstance(value, bool):
        return rng.choice([int(value), float(value), not value, value])
    if value in twins and not isinstance(value, str):
        return rng.choice(twins[value])
    return rng.choice([value, *rng.sample(_ATOMS, 2)])


def test_ok_and_check_agree_with_a_field_by_field_reading() -> None:
    import random

    rng = random.Random(5)
    seen = {True: 0, False: 0}
    for _ in range(4000):
        spec = {f"p{i}": _spec(rng) for i in range(rng.randint(1, 4))}
        matcher = compile_value(spec, CTX)
        base = _literal_of(spec, rng)
        tried = [base, _mutate(base, rng), _mutate(base, rng)]
        canonical = matcher._canonical  # type: ignore[attr-defined]
        if canonical is not None:  # the answer ok() recognises by plain equality, and twins
            tried += [canonical, _mutate(canonical, rng), _mutate(canonical, rng)]
        for actual in tried:
            want = _ref_ok(matcher, actual)
            assert matcher.ok(actual) is want, (spec, actual)
            assert matcher.check(actual) == _ref_reason(matcher, actual), (spec, actual)
            seen[want] += 1
    assert min(seen.values()) > 2000  # both outcomes well covered


def test_expectations_alike_share_their_strings_and_key_sets() -> None:
    # the names and texts of two expectations compiled apart are one object each, as the
    # keys the argument parser reads are (interned); a matcher still tells values apart
    text = '{"city": "Paris", "unit": "celsius", "days": {"optional": 3}}'
    spec = json.loads(text)  # (json.loads makes new strings each time; literals are shared)
    first, second = compile_value(json.loads(text), CTX), compile_value(json.loads(text), CTX)
    assert type(first).__name__ == "ObjectMatcher"
    for key in spec:
        (mine,) = [k for k in first.fields if k == key]  # type: ignore[attr-defined]
        (theirs,) = [k for k in second.fields if k == key]  # type: ignore[attr-defined]
        assert mine is theirs
    assert first.fields["city"].value is second.fields["city"].value  # type: ignore[attr-defined]
    assert first._keys is second._keys  # type: ignore[attr-defined]
    assert first.check({"city": "Paris", "unit": "celsius"}) is None
    assert first.check({"city": "Paris", "unit": "kelvin"}) == (
        'unit: expected "celsius", got "kelvin"'
    )
    assert first.check({"city": "Paris", "unit": "celsius", "x": 1}) == (
        "x: unexpected argument = 1"
    )

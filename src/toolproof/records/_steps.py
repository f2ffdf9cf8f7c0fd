"""A multi-step record's requests, stored as what each adds to the one before.

Each step of an agent loop sends the whole conversation so far, so storing
every step's raw request whole makes a record grow with the square of its
steps. A step after the first is stored as a delta against the request
before it (``request_delta`` in place of ``request``)::

    {"request_delta": {"append": {"messages": [...]}, "set": {...}, "keys": [...]},
     "response": {...}}

- ``append``: a list the previous request had, with items added at its end
  (the conversation);
- ``set``: a value that is new or changed;
- every other key keeps the previous request's value; ``keys`` (given only
  when it differs from the previous request's) is the order of the keys,
  and leaves out the keys the step no longer sends.

The delta is made only where the request rebuilt from it is the exact same
JSON: values are compared by type as well as value (``1`` is not ``1.0`` or
``true``) and mappings by key order too, so a reader rebuilds each request
byte for byte (:func:`expand_steps`). A request that is not a JSON object is
stored whole.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["BadSteps", "expand_steps", "step_entry"]


class BadSteps(ValueError):
    """A stored delta that cannot be applied; ``index`` is the step, ``field`` what is wrong."""

    def __init__(self, index: int, field: str, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.field = field


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text would be: same types, same key order, same values."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) != len(b) or list(a) != list(b):
            return False
        return all(_same(v, b[k]) for k, v in a.items())
    if kind is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if kind is float:
        return bool(a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    return bool(a == b)


def _delta(previous: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    appended: dict[str, Any] = {}
    changed: dict[str, Any] = {}
    for key, value in request.items():
        if key in previous:
            old = previous[key]
            if _same(old, value):
                continue
            if (
                type(old) is list
                and type(value) is list
                and len(value) >= len(old)
                and all(_same(x, y) for x, y in zip(old, value, strict=False))
            ):
                appended[key] = value[len(old) :]
                continue
        changed[key] = value
    delta: dict[str, Any] = {}
    if appended:
        delta["append"] = appended
    if changed:
        delta["set"] = changed
    if list(request) != list(previous):
        delta["keys"] = list(request)
    return delta


def step_entry(
    steps: list[dict[str, Any]], previous: Any, request: Any, response: Any
) -> dict[str, Any]:
    """A step as stored: its request whole (the first, or one not a JSON object) or as a
    delta against ``previous``, the request of the step before (``steps`` are those so far)."""
    if steps and type(previous) is dict and type(request) is dict:
        return {"request_delta": _delta(previous, request), "response": response}
    return {"request": request, "response": response}


#: The most list items the requests of one record's steps may hold, rebuilt, all together.
#: A real attempt holds far fewer (100 steps at most, each with its conversation so far);
#: a hostile record of many tiny deltas would otherwise rebuild to the square of its size.
MAX_REBUILT_ITEMS = 2_000_000


def _apply(previous: dict[str, Any], delta: Any, index: int) -> dict[str, Any]:
    if not isinstance(delta, dict) or set(delta) - {"append", "set", "keys"}:
        raise BadSteps(index, "request_delta", "not a delta (append, set, keys)")
    appended = delta.get("append", {})
    changed = delta.get("set", {})
    keys = delta.get("keys", list(previous))
    if not isinstance(appended, dict) or not isinstance(changed, dict):
        raise BadSteps(index, "request_delta", "'append' and 'set' must be objects")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise BadSteps(index, "request_delta.keys", "must be a list of key names")
    out: dict[str, Any] = {}
    for key in keys:
        if key in changed:
            out[key] = changed[key]
        elif key in appended:
            old, new = previous.get(key), appended[key]
            if not isinstance(old, list) or not isinstance(new, list):
                raise BadSteps(
                    index, f"request_delta.append.{key}", "appends to a value that is not a list"
                )
            out[key] = old + new
        elif key in previous:
            out[key] = previous[key]
        else:
            raise BadSteps(index, "request_delta.keys", f"'{key}' is in neither step")
    extra = (set(appended) | set(changed)) - set(out)
    if extra:
        raise BadSteps(index, "request_delta.keys", f"leaves out {sorted(extra)[0]!r}")
    return out


def expand_steps(steps: Any) -> Any:
    """The steps with every request whole again (a list that holds no delta is returned as is)."""
    if not isinstance(steps, list) or not any(
        isinstance(s, dict) and "request_delta" in s for s in steps
    ):
        return steps
    out: list[Any] = []
    previous: Any = None
    rebuilt_items = 0
    for index, step in enumerate(steps):
        if isinstance(step, dict) and "request_delta" in step:
            if "request" in step:
                raise BadSteps(index, "request", "has both 'request' and 'request_delta'")
            if not isinstance(previous, dict):
                raise BadSteps(
                    index, "request_delta", "a delta needs the step before it to hold a request"
                )
            request = _apply(previous, step["request_delta"], index)
            rebuilt_items += sum(len(v) for v in request.values() if type(v) is list)
            if rebuilt_items > MAX_REBUILT_ITEMS:
                raise BadSteps(
                    index,
                    "request_delta",
                    f"the steps' requests rebuild to more than {MAX_REBUILT_ITEMS:,} list "
                    "items: not a record toolproof wrote",
                )
            rebuilt = {"request": request}
            rebuilt.update((k, v) for k, v in step.items() if k != "request_delta")
            out.append(rebuilt)
            previous = request
        else:
            out.append(step)
            previous = step.get("request") if isinstance(step, dict) else None
    return out

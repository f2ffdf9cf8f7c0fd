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

A conversation's simulated-user requests (records format ``/3``) are stored the
same way: the user model's requests, in the order they were sent (each turn's
``exchanges``, then the turn's own ``request``), each after the first as a
``request_delta`` against the one before (:func:`compact_user_turns`,
:func:`expand_user_turns`).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "BadSteps",
    "check_user_turns",
    "compact_user_turns",
    "expand_requests",
    "expand_steps",
    "expand_user_turns",
    "step_entry",
]


class BadSteps(ValueError):
    """A stored delta that cannot be applied; ``index`` is the step (or user turn),
    ``field`` what is wrong, ``list_name`` the record's field that holds it."""

    def __init__(self, index: int, field: str, message: str, list_name: str = "steps") -> None:
        super().__init__(message)
        self.index = index
        self.field = field
        self.list_name = list_name

    @property
    def where(self) -> str:
        """The place, as a reader names it: ``steps[2].request_delta``."""
        return f"{self.list_name}[{self.index}].{self.field}"

    @property
    def path(self) -> tuple[str | int, ...]:
        """The place as a path of keys and indices from the record's top."""
        parts = [int(p) if p.isdigit() else p for p in self.field.split(".")]
        return (self.list_name, self.index, *parts)


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


#: The records formats whose user turns may hold a request as a delta.
_USER_DELTAS = ("toolproof.record/3",)

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


def _turn_requests(turn: Any) -> list[tuple[Any, str]]:
    """Where a stored user turn (a dict) holds requests, in the order they were sent:
    (the dict that holds one, its place in the turn)."""
    out: list[tuple[Any, str]] = []
    exchanges = turn.get("exchanges")
    if isinstance(exchanges, list):
        out.extend((e, f"exchanges.{j}.") for j, e in enumerate(exchanges))
    out.append((turn, ""))
    return out


def compact_user_turns(turns: list[Any]) -> list[Any]:
    """A conversation's user turns with each user-model request after the first stored
    as a delta against the one sent before it (turns of a script or a replay that hold
    no request are left as they are; a request that is not a JSON object stays whole)."""
    from toolproof.types._record import UserTurn

    out: list[Any] = []
    previous: Any = None
    sent = 0

    def entry(request: Any) -> dict[str, Any]:
        nonlocal previous, sent
        if request is None:
            return {}
        delta = sent > 0 and type(previous) is dict and type(request) is dict
        stored = {"request_delta": _delta(previous, request)} if delta else {"request": request}
        previous, sent = request, sent + 1
        return stored

    for turn in turns:
        if not isinstance(turn, UserTurn) or (turn.request is None and not turn.exchanges):
            out.append(turn)
            continue
        update: dict[str, Any] = {}
        if turn.exchanges:
            exchanges: list[Any] = []
            for exchange in turn.exchanges:
                if isinstance(exchange, dict) and "request" in exchange:
                    stored = entry(exchange["request"])
                    rest = {k: v for k, v in exchange.items() if k != "request"}
                    exchanges.append({**stored, **rest} if stored else exchange)
                else:
                    exchanges.append(exchange)
            update["exchanges"] = exchanges
        stored = entry(turn.request)
        if "request_delta" in stored:
            update["request"] = None
            update["request_delta"] = stored["request_delta"]
        out.append(turn.model_copy(update=update))
    return out


def expand_user_turns(turns: Any) -> Any:
    """The stored user turns (dicts, as read) with every request whole again; a list that
    holds no delta is returned as is."""
    if not isinstance(turns, list):
        return turns
    places = [
        (i, holder, where)
        for i, turn in enumerate(turns)
        if isinstance(turn, dict)
        for holder, where in _turn_requests(turn)
        if isinstance(holder, dict)
    ]
    if not any("request_delta" in holder for _, holder, _ in places):
        return turns
    out = [dict(t) if isinstance(t, dict) else t for t in turns]
    for turn in out:
        if isinstance(turn, dict) and isinstance(turn.get("exchanges"), list):
            turn["exchanges"] = [dict(e) if isinstance(e, dict) else e for e in turn["exchanges"]]
    previous: Any = None
    rebuilt_items = 0
    for i, turn in enumerate(out):
        if not isinstance(turn, dict):
            continue
        for holder, where in _turn_requests(turn):
            if not isinstance(holder, dict):
                continue
            if "request_delta" in holder:
                if holder.get("request") is not None:
                    raise BadSteps(
                        i,
                        f"{where}request",
                        "has both 'request' and 'request_delta'",
                        "user_turns",
                    )
                if not isinstance(previous, dict):
                    raise BadSteps(
                        i,
                        f"{where}request_delta",
                        "a delta needs a user-model request before it",
                        "user_turns",
                    )
                try:
                    request = _apply(previous, holder["request_delta"], i)
                except BadSteps as exc:
                    raise BadSteps(i, where + exc.field, str(exc), "user_turns") from None
                rebuilt_items += sum(len(v) for v in request.values() if type(v) is list)
                if rebuilt_items > MAX_REBUILT_ITEMS:
                    raise BadSteps(
                        i,
                        f"{where}request_delta",
                        f"the user turns' requests rebuild to more than {MAX_REBUILT_ITEMS:,} "
                        "list items: not a record toolproof wrote",
                        "user_turns",
                    )
                rebuilt = {"request": request}
                skip = ("request", "request_delta")
                rebuilt.update((k, v) for k, v in holder.items() if k not in skip)
                holder.clear()
                holder.update(rebuilt)
                previous = request
            elif holder.get("request") is not None:
                previous = holder["request"]
    return out


def expand_requests(data: dict[str, Any], fmt: Any = "toolproof.record/3") -> None:
    """A record's data (as read) with every request stored as a delta whole again, in place:
    its steps', and (format /3) its user turns'. Raises :class:`BadSteps`, located."""
    if data.get("steps"):
        data["steps"] = expand_steps(data["steps"])
    turns = data.get("user_turns")
    if not isinstance(turns, list) or not turns:
        return
    if fmt in _USER_DELTAS:
        data["user_turns"] = expand_user_turns(turns)
        check_user_turns(data)
        return
    for i, turn in enumerate(turns):  # an older format never stored a user turn's delta
        if not isinstance(turn, dict):
            continue
        exchanges = turn.get("exchanges")
        held = [("", turn)]
        if isinstance(exchanges, list):
            held += [(f"exchanges.{j}.", e) for j, e in enumerate(exchanges) if isinstance(e, dict)]
        for where, holder in held:
            if "request_delta" in holder:
                raise BadSteps(
                    i, f"{where}request_delta", f"not a field of records format {fmt}", "user_turns"
                )
    check_user_turns(data)


def request_tool_names(request: Any) -> set[str] | None:
    """The names of the tools a provider request (as sent, a JSON object) offered; None
    when it is not a JSON object or its ``tools`` is not a list. Each provider's shape:
    ``{"name": N}`` (Anthropic, OpenAI Responses, toolproof's own), ``{"function":
    {"name": N}}`` (OpenAI Chat), ``{"functionDeclarations": [{"name": N}]}`` (Gemini)."""
    if not isinstance(request, dict):
        return None
    tools = request.get("tools", [])
    if not isinstance(tools, list):
        return None
    names: set[str] = set()
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        found = tool.get("functionDeclarations")
        held = found if isinstance(found, list) else [tool.get("function", tool)]
        names.update(
            d["name"] for d in held if isinstance(d, dict) and isinstance(d.get("name"), str)
        )
    return names


def check_user_turns(data: dict[str, Any]) -> None:
    """A record's user turns (data as read, requests whole) against its transcript and
    steps. Raises :class:`BadSteps`, located:

    - each turn's ``at`` is 0 or more, larger than the turn before it's, and names the
      turn's ``user`` message in the transcript (a turn that stopped the conversation
      added none: its ``at`` is at most the transcript's length);
    - each tool a turn ``offered`` is in the request of every step sent after that turn,
      and in none sent before the first turn that offered it: the offers a grade relies
      on are the ones the requests, the measurement, show.

    A value of the wrong type is left to the record's model, which refuses it."""
    turns = data.get("user_turns")
    if not isinstance(turns, list):
        return
    transcript = data.get("transcript")
    messages = transcript if isinstance(transcript, list) else None
    last: int | None = None
    offers: list[tuple[int, int, list[str]]] = []  # (turn, its at, the names it offered)
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            continue
        at = turn.get("at")
        if type(at) is not int:
            continue
        if at < 0:
            raise BadSteps(
                i, "at", f"{at} is not a place in the transcript (0 or more)", "user_turns"
            )
        if last is not None and at <= last:
            raise BadSteps(
                i, "at", f"{at} does not come after the turn before it (at {last})", "user_turns"
            )
        last = at
        if messages is not None:
            if turn.get("stop") is None:
                message = messages[at] if at < len(messages) else None
                if not isinstance(message, dict) or message.get("role") != "user":
                    raise BadSteps(
                        i,
                        "at",
                        f"transcript[{at}] is not this turn's user message",
                        "user_turns",
                    )
            elif at > len(messages):
                raise BadSteps(
                    i,
                    "at",
                    f"{at} is past the end of the transcript ({len(messages)} messages)",
                    "user_turns",
                )
        offered = turn.get("offered")
        if isinstance(offered, list) and offered:
            # each name once: every one is then looked for in each request sent after
            names = dict.fromkeys(n for n in offered if isinstance(n, str))
            offers.append((i, at, list(names)))
    if offers:
        _check_offers(offers, messages, data.get("steps"))


def _check_offers(
    offers: list[tuple[int, int, list[str]]], messages: list[Any] | None, steps: Any
) -> None:
    """Each turn's ``offered`` against the tools of the requests sent after and before it
    (see :func:`check_user_turns`)."""
    first: dict[str, tuple[int, int]] = {}  # a name: the first turn that offered it, its at
    for i, at, names in offers:
        for name in names:
            first.setdefault(name, (i, at))
    # each step answered with one assistant message: the last len(steps) of the transcript
    answers = [
        p
        for p, m in enumerate(messages or ())
        if isinstance(m, dict) and m.get("role") == "assistant"
    ]
    steps = steps if isinstance(steps, list) else []
    unmatched = answers[: max(len(answers) - len(steps), 0)]
    for p in unmatched:
        after = [i for i, at, _ in offers if at < p]
        if after:
            raise BadSteps(
                after[0],
                "offered",
                f"the agent's answer at transcript[{p}], after this turn, has no recorded step "
                "whose request shows the tools it was offered",
                "user_turns",
            )
    n = min(len(steps), len(answers))
    base = len(steps) - n
    for k, (step, p) in enumerate(zip(steps[base:], answers[len(answers) - n :], strict=True)):
        sent = request_tool_names(step.get("request") if isinstance(step, dict) else None)
        # the names this request sent that a later turn offers (walked over what was sent,
        # never over every name offered: a hostile list stays the size of the requests)
        early = [first[name] for name in sent or () if name in first and first[name][1] >= p]
        if early:
            i, _ = min(early)
            name = next(n for n, (j, _) in first.items() if j == i and n in (sent or ()))
            raise BadSteps(
                i,
                "offered",
                f"offers {name!r}, but steps[{base + k}], sent before this turn, already "
                "offered it",
                "user_turns",
            )
        for i, at, names in offers:
            if at >= p:
                continue
            missing = [n for n in names if sent is None or n not in sent]
            if missing:
                raise BadSteps(
                    i,
                    "offered",
                    f"offers {missing[0]!r}, but the request of steps[{base + k}], sent after "
                    "this turn, does not offer it",
                    "user_turns",
                )

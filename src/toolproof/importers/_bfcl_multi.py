"""BFCL's multi-turn categories as conversation suites run on BFCL's own classes.

An entry becomes one conversation case:

- ``question`` (a list of turns, each a list of user messages) → a scripted
  user (``user.script``) that says each turn in order, then ``###STOP###``,
  marking the end of each turn (below);
- ``involved_classes`` and ``initial_config`` → the case's ``state``
  (``{"bfcl": {...}}``), from which the suite's tools file builds BFCL's own
  instances (:mod:`toolproof.importers.bfcl_env`: imported from the installed
  ``bfcl_eval`` at run time, with ``--allow-code``; never copied);
- the function docs of the involved classes (``multi_turn_func_doc/``) → the
  suite's tools, and the case's ``tools`` names them;
- ``missed_function`` (``multi_turn_miss_func``: by turn, functions held back
  from the model until that turn, whose question is empty) → the scripted
  user's entry of that turn says BFCL's :data:`MORE_FUNCTIONS` and offers them
  (``offer``): the model's requests carry them from that turn on, after the
  others, as BFCL's handler appends them;
- the ground truth (a list per turn of call strings such as
  ``"cd(folder='document')"``) → ``end_state.actions``: every turn's calls in
  order, replayed on the case's state for the expected end state, and a
  ``trajectory`` (``superset``: every ground-truth call made, in any order,
  other calls allowed), the nearest toolproof check to BFCL's, which wants each
  ground-truth call's *result* among the model's results. The strings
  are parsed with :mod:`ast` (a call of a name, literal arguments only), never
  evaluated.

BFCL checks, after every turn whose ground truth has calls, the state and
that the model made a call in the turn. So does the case: at the end of each
turn its scripted user calls the tools file's ``bfcl_turn_checkpoint``
(``CHECKPOINT``; offered to the user, never to the model), which keeps a digest
of the state and whether the model called anything in the turn, under
``turns`` in the state; the gold actions call it at the same places. BFCL
also wants each turn's ground-truth results among the model's results so far;
toolproof compares no results (docs/bfcl.md measures what that changes).
"""

from __future__ import annotations

import ast
import functools
import json
import keyword
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof._shared.schema_validators import schema_problems
from toolproof.errors import UserError
from toolproof.importers._bfcl import (
    BfclCategory,
    BfclImport,
    BfclSkip,
    BfclSuite,
    convert_function,
    entries,
    inside,
    read_answers,
)
from toolproof.suite._load import tools_file_names
from toolproof.trust import MAX_DEPTH, TooDeep, check_depth, loads_json
from toolproof.types import Case, SuiteTool

__all__ = [
    "CLASS_DOCS",
    "MAX_STEPS_PER_TURN",
    "MORE_FUNCTIONS",
    "parse_call",
    "read_multi_turn",
    "tools_py",
]

#: BFCL's multi-turn classes and the file of their function docs (multi_turn_func_doc/).
CLASS_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
#: BFCL's limit of model steps in one turn (MAXIMUM_STEP_LIMIT).
MAX_STEPS_PER_TURN = 20
#: toolproof's limit of model calls in one attempt (a case's max_steps).
MAX_STEPS = 100
#: The longest ground-truth call string read (a longer one is a counted skip).
_MAX_CALL_CHARS = 100_000
#: The tools-file function the scripted user calls at the end of a checked turn.
CHECKPOINT = "bfcl_turn_checkpoint"
STOP = "###STOP###"
#: What BFCL's user says at a turn that adds held-back functions (``missed_function``), in
#: place of the turn's empty question: DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC, the
#: message of its function-calling handlers (its prompting handlers also list the functions
#: in the text; toolproof offers them as tools).
MORE_FUNCTIONS = "I have updated some more functions you can choose from. What about now?"


def parse_call(text: Any, params: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """One ground-truth call string as (function name, arguments), by its syntax tree.

    ``params``: each known function's parameter names in order (positional
    arguments take them). Only a call of a plain name with literal arguments is
    read; anything else is a ValueError. Nothing is evaluated.
    """
    if not isinstance(text, str):
        raise ValueError(f"a ground-truth call is {type(text).__name__}, not text")
    if len(text) > _MAX_CALL_CHARS:
        raise ValueError(f"a ground-truth call is longer than {_MAX_CALL_CHARS} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError(f"{text[:80]!r} is not a function call") from None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"{text[:80]!r} is not a call of a function name")
    name = node.func.id
    if name not in params:
        raise ValueError(f"{text[:80]!r} calls '{name}', which no involved class has")
    order = params[name]
    args: dict[str, Any] = {}
    if len(node.args) > len(order):
        raise ValueError(f"{text[:80]!r}: more positional arguments than '{name}' has")
    try:
        for param, value in zip(order, node.args, strict=False):
            args[param] = ast.literal_eval(value)
        for kw in node.keywords:
            if kw.arg is None:
                raise ValueError("**")
            if kw.arg in args:
                raise ValueError(f"'{kw.arg}' given twice")
            args[kw.arg] = ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise ValueError(f"{text[:80]!r}: an argument is not a literal ({exc})") from None
    return name, _jsonable(args, text)


def _jsonable(value: Any, text: str) -> Any:
    """A literal as JSON data (a tuple becomes a list, as a model's JSON arguments are)."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"{text[:80]!r}: a dict argument with keys that are not text")
        return {k: _jsonable(v, text) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, text) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{text[:80]!r}: a number JSON cannot hold")
        return value
    raise ValueError(f"{text[:80]!r}: a {type(value).__name__} argument has no JSON form")


@dataclass(frozen=True)
class _Doc:
    """One BFCL function doc: where it is (file:line), and as a suite tool."""

    where: str
    tool: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.tool["name"])


def _doc_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a function doc file, by number (a UserError naming the line if not UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(
                f"{path}:{number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                f"{exc.start + 1})"
            ) from None


def _docs(root: Path, result: BfclImport) -> dict[str, list[_Doc]]:
    """Each class's function docs, as BFCL ships them, each checked to make a suite tool."""
    out: dict[str, list[_Doc]] = {}
    for cls, name in CLASS_DOCS.items():
        path = inside(root / "multi_turn_func_doc" / name, result)
        if not path.is_file():
            continue
        docs = []
        for number, line in _doc_lines(path):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                doc = loads_json(line, MAX_DEPTH, unique_keys=True)
            except TooDeep as exc:
                raise UserError(f"{where}: not accepted: {exc}") from None
            except ValueError as exc:
                raise UserError(f"{where}: not JSON ({exc}); truncated?") from None
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                raise UserError(f"{where}: a function doc needs a string 'name'")
            try:
                tool = convert_function(doc, "python")
            except (ValueError, RecursionError) as exc:
                raise UserError(f"{where}: {exc}") from None
            problem = _tool_problem(tool)
            if problem is not None:
                raise UserError(f"{where}: {problem}")
            docs.append(_Doc(where, tool))
        out[cls] = docs
    return out


def _held_back(entry: dict[str, Any], turns: int, names: set[str]) -> dict[int, list[str]]:
    """``missed_function`` (multi_turn_miss_func): by turn, the functions held back from the
    model until that turn (raises ValueError for a turn or name BFCL could not hold back)."""
    missed = entry.get("missed_function", {})
    if not isinstance(missed, dict):
        raise ValueError("'missed_function' is not an object (turn: function names)")
    out: dict[int, list[str]] = {}
    held: set[str] = set()
    for key, value in missed.items():
        if not isinstance(key, str) or not key.isascii() or not key.isdecimal() or len(key) > 6:
            raise ValueError(f"missed_function: {str(key)[:20]!r} is not a turn number")
        turn = int(key)
        if key != str(turn):  # BFCL adds back the functions under str(turn) alone
            raise ValueError(
                f"missed_function: {key!r} is not BFCL's spelling of turn {turn} "
                f"({str(turn)!r}): BFCL would hold its functions back and never offer them"
            )
        if turn >= turns:
            raise ValueError(
                f"missed_function: turn {turn} is past the last turn ({turns} turns, from 0)"
            )
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise ValueError(f"missed_function turn {turn}: not a list of function names")
        for name in value:
            if name not in names:
                raise ValueError(
                    f"missed_function turn {turn}: {name[:80]!r} is no function of the "
                    "involved classes"
                )
            if name in held:
                raise ValueError(f"missed_function: {name!r} is held back twice")
            held.add(name)
        out[turn] = list(value)
    return out


def _script(entry: dict[str, Any], held: dict[int, list[str]] | None = None) -> list[str]:
    """The user's messages, one per turn, then the stop. A turn that adds held-back
    functions (``held``) has no question in BFCL: its message is :data:`MORE_FUNCTIONS`."""
    turns = entry.get("question")
    if not isinstance(turns, list) or not turns:
        raise ValueError("no 'question' (a list of turns)")
    script = []
    for i, turn in enumerate(turns):
        if held is not None and i in held:
            if turn != []:
                raise ValueError(
                    f"turn {i} adds held-back functions, and holds a user message (BFCL "
                    "says its own message at such a turn)"
                )
            script.append(MORE_FUNCTIONS)
            continue
        if not isinstance(turn, list) or len(turn) != 1:
            n = len(turn) if isinstance(turn, list) else 0
            raise ValueError(f"turn {i} holds {n} messages; each turn needs one user message")
        m = turn[0]
        if (
            not isinstance(m, dict)
            or m.get("role") != "user"
            or not isinstance(m.get("content"), str)
        ):
            raise ValueError(f"turn {i}: the message is not a user message with text")
        script.append(m["content"])
    return [*script, STOP]


class _MissingDocs(ValueError):
    """An entry involves a class whose function doc file is not in the data folder."""

    def __init__(self, cls: str) -> None:
        self.file = f"multi_turn_func_doc/{CLASS_DOCS[cls]}"
        super().__init__(f"the function docs of class '{cls}' are missing ({self.file})")


def _case(
    entry: dict[str, Any],
    answer: dict[str, Any] | None,
    cat: BfclCategory,
    docs: dict[str, list[_Doc]],
) -> tuple[dict[str, Any], list[str]]:
    """One entry as a case, and the classes it involves (raises ValueError)."""
    questions = entry.get("question")
    if not isinstance(questions, list) or not questions:
        raise ValueError("no 'question' (a list of turns)")
    classes = entry.get("involved_classes")
    if not isinstance(classes, list) or not classes:
        raise ValueError("'involved_classes' is not a non-empty list")
    for cls in classes:
        if isinstance(cls, str) and cls in CLASS_DOCS and cls not in docs:
            raise _MissingDocs(cls)
        if cls not in docs:
            known = ", ".join(CLASS_DOCS)
            raise ValueError(f"unknown class '{cls}' (BFCL's multi-turn classes: {known})")
    config = entry.get("initial_config", {})
    if not isinstance(config, dict):
        raise ValueError("'initial_config' is not an object")
    tools: list[str] = []
    params: dict[str, list[str]] = {}
    for cls in classes:
        for doc in docs[cls]:
            if doc.name not in params:
                tools.append(doc.name)
            params[doc.name] = list(doc.tool["parameters"]["properties"])
    held = _held_back(entry, len(questions), set(params))
    script = _script(entry, held)
    if answer is None:
        raise ValueError("no ground truth for this id")
    truth = answer.get("ground_truth")
    if not isinstance(truth, list) or len(truth) != len(script) - 1:
        raise ValueError(
            f"the ground truth is not a list of {len(script) - 1} turns (one per question turn)"
        )
    actions = []
    calls = []
    offered_at = {name: turn for turn, names in held.items() for name in names}

    def says(text: str, turn: int, base: dict[str, Any]) -> Any:
        """The user's entry that says ``text``, offering the functions held back until
        ``turn`` (the model is offered them from that turn on, after the others)."""
        if held.get(turn):
            base = {**base, "offer": held[turn]}
        return {**base, "say": text} if base else text

    user: list[Any] = [says(script[0], 0, {})]
    for t, turn in enumerate(truth):
        if not isinstance(turn, list):
            raise ValueError(f"ground truth turn {t} is not a list of calls")
        for c, text in enumerate(turn):
            try:
                name, args = parse_call(text, params)
            except ValueError as exc:
                raise ValueError(f"ground truth turn {t} call {c}: {exc}") from None
            if t < offered_at.get(name, 0):
                raise ValueError(
                    f"the ground truth calls {name!r} in turn {t}, before it is offered "
                    f"(turn {offered_at[name]}): toolproof grades that call as a call of an "
                    "unknown tool (no answer making it can pass)"
                )
            actions.append({"tool": name, "args": args})
            calls.append({"tool": name, "args": args})
        # BFCL checks the state after every turn whose ground truth has calls
        mark = {"turn": t} if turn else {"turn": t, "checked": False}
        actions.append({"tool": CHECKPOINT, "args": mark})
        user.append(says(script[t + 1], t + 1, {"call": {"tool": CHECKPOINT, "args": mark}}))
    turns = len(script) - 1
    case: dict[str, Any] = {
        "id": entry["id"],
        "user": {"tools": [CHECKPOINT], "script": user},
        "max_turns": turns + 1,
        "max_steps": min(MAX_STEPS, MAX_STEPS_PER_TURN * turns),
        "tools": tools,
        "state": {
            "bfcl": {
                "involved_classes": [str(c) for c in classes],
                "long_context": "long_context" in cat.name,
                "initial_config": config,
            }
        },
        "end_state": {"actions": actions},
        "tags": ["bfcl", cat.name],
    }
    if calls:  # BFCL: every ground-truth call's result is among the model's, in any order
        case["trajectory"] = {"mode": "superset", "steps": [calls]}
    problem = _case_problem(case)
    if problem is not None:
        raise ValueError(problem)
    return case, [str(c) for c in classes]


def _errors(exc: ValidationError) -> str:
    """A validation error's first problems, each with the field it is at."""
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()[:3]
    ]
    return "; ".join(parts)


def _case_problem(case: dict[str, Any]) -> str | None:
    """Why the suite loader would refuse ``case`` as a line of cases.jsonl (its depth limit,
    then the case model), or None."""
    try:
        check_depth(case, MAX_DEPTH)
    except TooDeep as exc:
        return f"the case is not accepted: {exc}"
    try:  # JSON has no NaN or Infinity (Python's reader takes them): no state could hold one
        _jsonable(case["state"]["bfcl"]["initial_config"], "initial_config")
    except ValueError as exc:
        return str(exc)
    try:
        Case.__pydantic_validator__.validate_python(case)
    except ValidationError as exc:
        return _errors(exc)
    return None


def _tool_problem(tool: dict[str, Any]) -> str | None:
    """Why ``tool`` cannot be one of the suite's tools and a function of its tools file:
    the suite loader's rules (the tool model, its schema check, the depth limit as the tool
    sits in suite.yaml), a Python name of the tools file's own, or one starting with an
    underscore (kept for the file itself); or None."""
    name = tool["name"]
    try:
        SuiteTool.__pydantic_validator__.validate_python(tool)
    except ValidationError as exc:
        return f"'{name}' is not accepted as a suite tool: {_errors(exc)}"
    if not name.isidentifier() or keyword.iskeyword(name):
        return f"'{name}' cannot be a tools-file function (not a Python name)"
    if name.startswith("_"):
        return f"'{name}' starts with an underscore (names the tools file keeps for itself)"
    if name in _own_names():
        own = ", ".join(sorted(_own_names()))
        return f"'{name}' is one of the tools file's own names ({own})"
    for where, message in schema_problems(tool["parameters"]):
        at = ".".join(str(w) for w in where)
        return f"'{name}': parameters{'.' + at if at else ''}: {message}"
    try:
        check_depth({"tools": [tool]}, MAX_DEPTH)  # as it sits in suite.yaml
    except TooDeep as exc:
        return f"'{name}' is not accepted as a suite tool: {exc}"
    return None


_TOOLS_HEAD = '''"""BFCL's multi-turn classes, run on the attempt's state by BFCL's own code.

Written by `toolproof import bfcl`. BFCL's code is not copied here: its classes
are imported from the bfcl_eval package installed beside toolproof. setup(state)
builds the case's instances as BFCL does; each function below runs the method of
that name; teardown(obj) gives the instances' public attributes as the state, and
bfcl_turn_checkpoint (run by the case's scripted user between turns) keeps a
digest of that state after each turn the case checks.
This file is suite code: toolproof runs it only with --allow-code.
"""

from toolproof.importers.bfcl_env import BfclEnvironment

_BFCL = BfclEnvironment()


def setup(state):
    return _BFCL.setup(state)


def teardown(obj):
    return _BFCL.teardown(obj)


def bfcl_turn_checkpoint(obj, args):
    return _BFCL.checkpoint(obj, args)
'''


@functools.cache
def _own_names() -> frozenset[str]:
    """The names the tools file binds itself (its hooks, its import, its BFCL object), read
    from its syntax tree as the suite loader reads a tools file's names."""
    functions, others = tools_file_names(ast.parse(_TOOLS_HEAD))
    return frozenset(functions | set(others))


def tools_py(names: list[str]) -> str:
    """The tools file: the hooks, and one function per BFCL function."""
    body = "".join(
        f"\n\ndef {n}(obj, args):\n    return _BFCL.call({n!r}, obj, args)\n" for n in names
    )
    return _TOOLS_HEAD + body


def read_multi_turn(
    path: Path, root: Path, cat: BfclCategory, profile: str, result: BfclImport
) -> BfclSuite:
    """One multi-turn category as a suite (entries that cannot be read: counted skips)."""
    docs = _docs(root, result)
    answers = read_answers(root / "possible_answer" / path.name, path, result)
    cases = []
    used: list[str] = []
    missing: dict[str, int] = {}  # a missing doc file: the entries it leaves out
    taken: dict[str, int] = {}  # the id of each case imported: its line
    for number, entry in entries(path, result):
        if entry["id"] in taken:  # the suite loader refuses a case id given twice
            why = f"{entry['id']}: the id of the case at line {taken[entry['id']]} too"
            result.skipped.append(BfclSkip(f"{path}:{number}", why))
            continue
        try:
            case, classes = _case(entry, answers.get(entry["id"]), cat, docs)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            if isinstance(exc, _MissingDocs):
                missing[exc.file] = missing.get(exc.file, 0) + 1
            result.skipped.append(BfclSkip(f"{path}:{number}", f"{entry['id']}: {exc}"))
            continue
        cases.append(case)
        taken[entry["id"]] = number
        used += [c for c in classes if c not in used]
    if not cases and missing:
        needed = "; ".join(f"{root / f}: missing ({n} entries need it)" for f, n in missing.items())
        raise UserError(f"{needed}; so no entry of {path.name} can be imported")
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for cls in (c for c in CLASS_DOCS if c in used):
        for doc in docs[cls]:
            if doc.name in seen:
                continue
            seen.add(doc.name)
            tools.append(doc.tool)
    tools.append(
        {
            "name": CHECKPOINT,
            "description": "Keeps a digest of BFCL's state at the end of a turn. Called by "
            "the case's scripted user between turns; never offered to the model.",
            "parameters": {
                "type": "object",
                "properties": {
                    "turn": {"type": "integer", "description": "The turn, from 0."},
                    "checked": {
                        "type": "boolean",
                        "description": "false: a turn BFCL does not check (no calls expected).",
                    },
                },
                "required": ["turn"],
            },
        }
    )
    suite: dict[str, Any] = {
        "format": 1,
        "suite": f"bfcl-{cat.name}",
        "description": f"BFCL category {cat.name} (multi-turn conversations on BFCL's own "
        f"classes), imported from {path.name}. Run with --allow-code: env/tools.py runs "
        "BFCL's classes from the installed bfcl_eval package.",
        "defaults": {"matching": profile} if profile != "strict" else {},
        "tools": tools,
        "environment": {"state": "env/state.json", "tools": "env/tools.py"},
        "cases_from": "cases.jsonl",
    }
    if not suite["defaults"]:
        del suite["defaults"]
    empty = {"bfcl": {"involved_classes": [], "long_context": False, "initial_config": {}}}
    files = {
        "env/state.json": json.dumps(empty) + "\n",
        "env/tools.py": tools_py([t["name"] for t in tools if t["name"] != CHECKPOINT]),
    }
    return BfclSuite(cat, suite, cases, files)

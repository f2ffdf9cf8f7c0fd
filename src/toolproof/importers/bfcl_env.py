"""Run BFCL's multi-turn classes on a toolproof state (imported by a suite's tools file).

``toolproof import bfcl`` writes, for each multi-turn category, a tools file
whose functions call :meth:`BfclEnvironment.call`. BFCL's classes
(``GorillaFileSystem``, ``TwitterAPI``, ``MessageAPI``, ``TicketAPI``,
``MathAPI``, ``TradingBot``, ``TravelAPI``, ``VehicleControlAPI``) stay the
user's: they are imported here from the ``bfcl_eval`` package installed in the
Python environment that runs toolproof, never copied. A tools file is suite
code, so it runs only with ``--allow-code``.

The case's state holds what BFCL builds its instances from::

    {"bfcl": {"involved_classes": [...], "long_context": false, "initial_config": {...}}}

``setup(state)`` builds one instance per involved class as BFCL's executor
does (``cls()``, then ``_load_scenario(deepcopy(config), long_context=...)``
for every class but the stateless ones). A tool call runs the method of that
name on the instance BFCL would pick (the last involved class that has it),
and returns what BFCL gives its model: text as it is, a dict as JSON, anything
else as ``str()``; an exception becomes ``Error during execution: ...``.

``teardown(obj)`` gives the state toolproof compares: the ``bfcl`` entry as it
was, under ``instances`` each instance's public attributes (those BFCL's
state checker compares), as JSON (:func:`encode`), and under ``turns``, for
each turn the case checks, a digest of that state and whether the model made
a call in the turn: the case's scripted user runs
:meth:`BfclEnvironment.checkpoint` (the tools file's ``bfcl_turn_checkpoint``)
before it says the next turn, as BFCL checks both after every turn whose
ground truth has calls.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import inspect
import json
import math
from typing import Any

from toolproof.errors import ToolError

__all__ = ["CLASSES", "BfclEnvironment", "BfclInstances", "encode"]

_MODULES = "bfcl_eval.constants.executable_backend_config"
#: The classes of BFCL's multi-turn categories: the only ones a case's state may name
#: (BFCL's table also holds its memory and web-search backends, which are not run here).
CLASSES = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)


def _plain(value: Any) -> Any:
    """JSON data from a state view (copy-on-write mappings read through their methods)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def encode(value: Any, _stack: tuple[int, ...] = ()) -> Any:
    """A BFCL attribute as JSON data, compared as BFCL's ``==`` compares it.

    Sets become sorted lists, tuples lists, dict keys text, a non-finite float
    its text; an object (a file system's ``File`` or ``Directory``) becomes its
    type's name and its public attributes, leaving out a reference back to an
    enclosing object (a directory's ``parent``): BFCL's ``__eq__`` of those
    classes compares the name and the contents alone.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if id(value) in _stack:
        raise ValueError("a cycle")
    inner = (*_stack, id(value))
    if isinstance(value, dict):
        return {str(k): encode(v, inner) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v, inner) for v in value]
    if isinstance(value, set | frozenset):
        items = [encode(v, inner) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        out: dict[str, Any] = {"__class__": type(value).__name__}
        for key, item in attrs.items():
            if key.startswith("_") or id(item) in _stack:
                continue
            out[key] = encode(item, inner)
        return out
    return repr(value)


def _instances(obj: BfclInstances) -> dict[str, Any]:
    """Each instance's public attributes (those BFCL's state checker compares), as JSON."""
    return {
        name: {k: encode(v) for k, v in vars(i).items() if not k.startswith("_")}
        for name, i in obj.instances.items()
    }


class BfclInstances:
    """One attempt's instances of BFCL's classes, and the state they were built from."""

    def __init__(self, meta: dict[str, Any], instances: dict[str, Any]) -> None:
        self.meta = meta
        self.instances = instances
        #: After each turn the case checks: a digest of the instances' state, and whether
        #: the model made a call in that turn (see :meth:`BfclEnvironment.checkpoint`).
        self.turns: dict[str, dict[str, Any]] = {}
        self.calls_this_turn = 0
        self.methods: dict[str, Any] = {}
        for instance in instances.values():  # BFCL's mapping: the last class with it wins
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = method


class BfclEnvironment:
    """BFCL's classes, imported from the installed ``bfcl_eval`` when first needed."""

    def __init__(self) -> None:
        self._classes: dict[str, type] = {}
        self._stateless: set[str] = set()

    def cls(self, name: str) -> type:
        if name not in CLASSES:
            raise ValueError(f"'{name}' is not a class of BFCL's multi-turn categories")
        if name not in self._classes:
            try:
                config = importlib.import_module(_MODULES)
                mapping: dict[str, str] = config.CLASS_FILE_PATH_MAPPING
                self._stateless = set(config.STATELESS_CLASSES)
                if name not in mapping:
                    raise ValueError(f"BFCL has no class '{name}' (it has: {', '.join(mapping)})")
                self._classes[name] = getattr(importlib.import_module(mapping[name]), name)
            except ModuleNotFoundError as exc:
                from toolproof._shared.install_hint import install_hint

                raise ModuleNotFoundError(
                    f"BFCL's class {name} cannot be imported ({exc}): its code comes from the "
                    f"bfcl-eval package installed beside toolproof: {install_hint('bfcl')} "
                    "(or pip install --no-deps bfcl-eval mpmath)",
                    name=exc.name,
                ) from None
        return self._classes[name]

    def setup(self, state: Any) -> BfclInstances:
        meta = _plain(state.get("bfcl")) if hasattr(state, "get") else None
        if not isinstance(meta, dict) or not isinstance(meta.get("involved_classes"), list):
            raise ValueError("the state has no 'bfcl' entry with 'involved_classes'")
        configs = meta.get("initial_config") or {}
        long_context = bool(meta.get("long_context"))
        instances: dict[str, Any] = {}
        for name in meta["involved_classes"]:
            instance = self.cls(str(name))()
            if name not in self._stateless:
                config = copy.deepcopy(configs.get(name, {}))
                instance._load_scenario(config, long_context=long_context)
            instances[str(name)] = instance
        return BfclInstances(meta, instances)

    def teardown(self, obj: BfclInstances) -> dict[str, Any]:
        return {"bfcl": obj.meta, "instances": _instances(obj), "turns": dict(obj.turns)}

    def checkpoint(self, obj: BfclInstances, args: Any) -> str:
        """The end of a turn BFCL checks (one whose ground truth has calls).

        Kept under ``turns``, by the turn's index (``args["turn"]``, from 0): a digest
        of the instances' state, and whether the model made a call in the turn, as BFCL
        checks both after such a turn. ``args["checked"]`` false: a turn BFCL does not
        check (no ground-truth calls); nothing is kept, and the calls of that turn count
        for no other. Called by the case's scripted user, never by the model."""
        if isinstance(args, dict) and args.get("checked") is False:
            obj.calls_this_turn = 0  # a turn BFCL does not check: its calls count for none
            return "turn not checked"
        data = json.dumps(_instances(obj), sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]
        turn = args.get("turn") if isinstance(args, dict) else None
        key = str(turn if turn is not None else len(obj.turns))
        obj.turns[key] = {"state": digest, "called": obj.calls_this_turn > 0}
        obj.calls_this_turn = 0
        return f"state after this turn: {digest}"

    def call(self, name: str, obj: BfclInstances, args: Any) -> str:
        """A tool call as BFCL's executor makes it; the result as BFCL's model reads it."""
        obj.calls_this_turn += 1
        method = obj.methods.get(name)
        if method is None:
            raise ToolError(f"Error during execution: no involved class of this case has '{name}'")
        arguments = _plain(args) if isinstance(args, dict) else {}
        try:
            value = method(**arguments)
        except Exception as exc:  # BFCL's executor turns it into the result text
            raise ToolError(f"Error during execution: {exc}") from None
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            try:
                return json.dumps(value)
            except (TypeError, ValueError):
                return str(value)
        return str(value)

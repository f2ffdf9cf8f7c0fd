"""A state's changes against its initial state: made cheaply, stored small, applied exactly.

A multi-step attempt starts from the environment's initial state (JSON data:
mappings of tables of rows). Three pieces keep the cost of a large state
proportional to what an attempt touches, not to the state's size:

- :func:`cow` gives an attempt a private, copy-on-write view of the initial
  state. A mapping is copied only when a tool reaches into it, one level at a
  time: reading ``state["orders"]["#W1"]`` copies neither the other tables nor
  the other orders, and the initial state is never changed.
- :func:`state_changes` lists what differs between such a view (or any JSON
  state) and the initial state, as ``["set", path, value]`` and
  ``["remove", path]`` changes; a path is a list of mapping keys (strings) and
  list indices (integers). Values are taken as JSON would write them (tuples
  become lists, other objects their ``str``), like a full snapshot.
- :func:`apply_changes` rebuilds the exact end state from the initial state
  and the changes: key order included. It copies only the containers on the
  changed paths and shares the rest with the initial state, so the rebuilt
  state must be read, never changed (:func:`cow` gives a writable view).

The views are ``dict`` subclasses: a tool sees a mapping that reads and
writes like a dict (``json.dumps``, ``dict(...)``, ``**``, ``copy``,
``pickle`` and ``==`` all see its content). A view not copied yet keeps the
mapping it views as its one entry, under a private key: C code that reads a
dict's storage without its methods (``orjson.dumps``, ``dict.values(view)``)
sees that entry, not the content, and must not change what it finds there.
Such code is expected in no tool.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import is_, is_not, ne
from typing import Any

__all__ = ["ChangeError", "InitialState", "apply_changes", "cow", "plain", "state_changes"]

Path = tuple[str | int, ...]
#: ``("set", path, value)`` or ``("remove", path)``.
Change = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class InitialState:
    """An environment's initial state as JSON data, and its name (``sha256:`` + file hash).

    Records store their changes against it (``Record.state_base`` names it).
    """

    state: Any
    base: str
    cases: Mapping[str, InitialState] = field(default_factory=dict)
    """The starting states of cases that give their own (``Case.state``), by case ID."""

    def for_case(self, case_id: str) -> InitialState:
        """The state a case starts from: its own, or this one."""
        return self.cases.get(case_id, self)


class _Hole:
    """The key under which a view not copied yet keeps the mapping it views."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not copied yet>"


_HOLE = _Hole()
_base_of = dict.__getitem__


class _Filled(dict[Any, Any]):
    """A private mapping copied from ``_base`` (one level): it reads and writes as a dict.

    ``_vals`` are the children put in when it was copied: while they are all
    still in place, only the children that were reached can hold changes.
    """

    __slots__ = ("_base", "_got", "_vals")

    _base: dict[Any, Any]
    _got: dict[Any, Any]
    _vals: list[Any]

    def _fill(self) -> None:
        """Already filled (a method taken from the view before it was filled may call this)."""

    def __copy__(self) -> dict[Any, Any]:
        return dict(self.items())

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (dict(self.items()),))

    def copy(self) -> dict[Any, Any]:
        return dict(self.items())

    @classmethod
    def fromkeys(cls, keys: Iterable[Any], value: Any = None) -> dict[Any, Any]:
        return dict.fromkeys(keys, value)


class _Pending(_Filled):
    """A view of a mapping not copied yet: its one entry is ``{_HOLE: the mapping}``.

    Reading a plain value reads the mapping. Reading a mapping or a list makes
    it :class:`_Reached`; any other use fills it (one level) and makes it
    :class:`_Filled`. Untouched views are told apart by their class alone.
    """

    __slots__ = ()

    # A method taken from a view stays bound to it after the view changes class,
    # so each one first checks that the view is still what it was made for.

    def __getitem__(self, key: Any) -> Any:
        if type(self) is not _Pending:
            return self[key]
        value = _base_of(self, _HOLE)[key]
        kind = type(value)
        if kind is dict or kind is list:
            self.__class__ = _Reached
            self._got = {}
            return self[key]
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        if type(self) is _Filled:
            return dict.__contains__(self, key)
        return key in _base_of(self, _HOLE)

    def __len__(self) -> int:
        if type(self) is _Filled:
            return dict.__len__(self)
        return len(_base_of(self, _HOLE))

    def _fill(self) -> None:
        if type(self) is _Filled:
            return
        base = _base_of(self, _HOLE)
        got = self._got if type(self) is _Reached else None
        dict.clear(self)
        items = {
            k: _Pending({_HOLE: v}) if type(v) is dict else _wrap(v) if type(v) is list else v
            for k, v in base.items()
        }
        if got:
            items.update(got)  # the children already handed out stay the same objects
        dict.update(self, items)
        self._base = base
        self._vals = list(items.values())
        self.__class__ = _Filled  # type: ignore[assignment]


class _Reached(_Pending):
    """A view not copied yet that has handed out children (kept in ``_got``)."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        if type(self) is not _Reached:
            return self[key]
        got = self._got
        if key in got:
            return got[key]
        value = _base_of(self, _HOLE)[key]
        kind = type(value)
        if kind is dict:
            value = got[key] = _Pending({_HOLE: value})
        elif kind is list:
            value = got[key] = _wrap(value)
        return value


def _filling_own(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: _Pending, *args: Any) -> Any:
        self._fill()
        return method(self, *args)

    call.__name__ = method.__name__
    return call


def _filling(name: str) -> Callable[..., Any]:
    method = getattr(dict, name)

    def call(self: _Pending, *args: Any, **kwargs: Any) -> Any:
        self._fill()
        return method(self, *args, **kwargs)

    call.__name__ = name
    return call


for _name in (
    "__iter__",
    "__reversed__",
    "__repr__",
    "__eq__",
    "__ne__",
    "__or__",
    "__ror__",
    "__ior__",
    "__setitem__",
    "__delitem__",
    "__sizeof__",
    "keys",
    "values",
    "items",
    "pop",
    "popitem",
    "setdefault",
    "update",
    "clear",
):
    setattr(_Pending, _name, _filling(_name))
for _name in ("__copy__", "__deepcopy__", "__reduce_ex__", "copy"):
    setattr(_Pending, _name, _filling_own(getattr(_Filled, _name)))
del _name


def _wrap(value: Any) -> Any:
    """A private copy-on-write view of a dict or list of the initial state."""
    if type(value) is dict:
        return _Pending({_HOLE: value})
    return [
        _Pending({_HOLE: v}) if type(v) is dict else _wrap(v) if type(v) is list else v
        for v in value
    ]


def cow(state: Any) -> Any:
    """A private, writable view of ``state`` that copies only what is reached."""
    kind = type(state)
    if kind is dict or kind is list:
        return _wrap(state)
    return state


def plain(value: Any) -> Any:
    """``value`` as JSON data, as a snapshot takes it (tuples as lists, others as ``str``)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def state_changes(state: Any, initial: Any) -> list[Change]:
    """What differs in ``state`` (a :func:`cow` view of ``initial``, or any state) from ``initial``.

    ``initial`` must be JSON data (as loaded from JSON). Applying the changes
    to ``initial`` with :func:`apply_changes` gives ``state`` as JSON data.
    """
    out: list[Change] = []
    _diff(state, initial, (), out)
    return out


def _diff(node: Any, base: Any, path: Path, out: list[Change]) -> None:
    kind = type(node)
    if kind is _Pending:
        if _base_of(node, _HOLE) is base:
            return  # untouched
    elif kind is _Reached:
        if _base_of(node, _HOLE) is base:  # untouched, except the children it handed out
            for key, child in node._got.items():
                _diff(child, base[key], (*path, key), out)
            return
    elif kind is _Filled:
        if node._base is base:
            _diff_filled(node, base, path, out)
            return
    elif kind is dict and type(base) is dict:
        if not _flat_same(node, base):
            _diff_table(node, base, path, out)
        return
    elif kind is list and type(base) is list:
        _diff_list(node, base, path, out)
        return
    if node is base:
        return
    value = plain(node)
    if type(value) is dict and type(base) is dict:
        _diff_dict(value, base, path, out)
    elif not _same(value, base):
        out.append(("set", list(path), value))


def _diff_filled(node: _Filled, base: dict[Any, Any], path: Path, out: list[Change]) -> None:
    keys = list(node)
    if keys != list(base):
        _diff_dict(node, base, path, out)
        return
    values = list(node.values())
    if all(map(is_, values, node._vals)):
        # every child is the one put in: only those no longer untouched views can differ
        keys = list(compress(keys, map(is_not, map(type, values), repeat(_Pending))))
    for key in keys:
        _diff(node[key], base[key], (*path, key), out)


def _diff_dict(node: dict[Any, Any], base: dict[Any, Any], path: Path, out: list[Change]) -> None:
    if any(type(k) is not str for k in node):  # JSON would write these keys as strings
        node = plain(node)
        if type(node) is not dict:
            out.append(("set", list(path), node))
            return
    # Keys that keep their place: the longest start of ``node`` in the initial order.
    # The others (new keys, keys removed and set again) are set again at the end.
    order = {k: i for i, k in enumerate(base)} if len(node) else {}
    keys = list(node)
    last, kept = -1, 0
    for key in keys:
        at = order.get(key, -1)
        if at <= last:
            break
        last, kept = at, kept + 1
    staying = set(keys[:kept]) if kept < len(base) else None
    for key in base:
        if staying is not None and key not in staying:
            out.append(("remove", [*path, key]))
    for key in keys[:kept]:
        _diff(node[key], base[key], (*path, key), out)
    for key in keys[kept:]:
        out.append(("set", [*path, key], plain(node[key])))


def _diff_list(node: list[Any], base: list[Any], path: Path, out: list[Change]) -> None:
    if len(node) < len(base):
        out.append(("set", list(path), plain(node)))
        return
    for i, old in enumerate(base):
        _diff(node[i], old, (*path, i), out)
    for i in range(len(base), len(node)):
        out.append(("set", [*path, i], plain(node[i])))


def _flat_same(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    """The same mapping of plain values, told at C speed (a row of an SQLite table);
    False when unsure (it holds containers), so the caller compares value by value."""
    if a != b or list(a) != list(b):
        return False
    types = list(map(type, a.values()))
    return types == list(map(type, b.values())) and dict not in types and list not in types


def _diff_table(node: dict[Any, Any], base: dict[Any, Any], path: Path, out: list[Change]) -> None:
    """Two plain mappings. When both are tables of rows of plain values with the same
    keys, field names and types in the same order (an SQLite table whose values
    changed), only the rows that are not equal can differ: they are found at C speed."""
    keys = list(node)
    if keys == list(base) and _same_shape(node, base):
        keys = list(compress(keys, map(ne, node.values(), base.values())))
        for key in keys:
            _diff(node[key], base[key], (*path, key), out)
        return
    _diff_dict(node, base, path, out)


def _same_shape(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    rows = list(map(type, a.values()))
    if rows != list(map(type, b.values())) or rows.count(dict) != len(rows):
        return False
    if list(chain.from_iterable(a.values())) != list(chain.from_iterable(b.values())):
        return False  # the rows' field names differ, or their order
    types = list(map(type, chain.from_iterable(map(dict.values, a.values()))))
    same = types == list(map(type, chain.from_iterable(map(dict.values, b.values()))))
    return same and dict not in types and list not in types


def _same(a: Any, b: Any) -> bool:
    """The same JSON value: same types, same key order."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return len(a) == len(b) and all(
            ka == kb and _same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if kind is list:
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


class ChangeError(ValueError):
    """A change that does not apply to the initial state; ``index`` is its place in the list."""

    def __init__(self, index: int, message: str) -> None:
        self.index = index
        super().__init__(f"change {index}: {message}")


def apply_changes(initial: Any, changes: Iterable[Any]) -> Any:
    """The state ``changes`` lead to from ``initial``, which is never changed.

    The containers on changed paths are copied; everything else is shared
    with ``initial``. Each change is ``["set", path, value]`` or
    ``["remove", path]`` (a list or tuple); anything else raises
    :class:`ChangeError`.
    """
    root: list[Any] = [initial]
    copied: set[int] = set()
    for index, change in enumerate(changes):
        op, path, value = _parse(index, change)
        parent: Any = root
        key: Any = 0
        for depth, step in enumerate(path):
            try:
                child = _child(parent, key)
            except _Missing:
                raise ChangeError(index, f"{_show(path[:depth])}: no such place") from None
            if id(child) not in copied:
                kind = type(child)
                if kind is dict:
                    child = dict(child)
                elif kind is list:
                    child = list(child)
                else:
                    where = _show(path[:depth]) or "the state"
                    raise ChangeError(index, f"{where} is not a mapping or a list")
                copied.add(id(child))
                parent[key] = child
            parent, key = child, step
            if type(parent) is dict and type(key) is not str:
                raise ChangeError(index, f"{_show(path[: depth + 1])}: a mapping key must be text")
            if type(parent) is list and type(key) is not int:
                raise ChangeError(
                    index, f"{_show(path[: depth + 1])}: a list index must be a number"
                )
        _apply(index, op, parent, key, value, path)
    return root[0]


def _child(parent: Any, key: Any) -> Any:
    try:
        return parent[key]
    except (KeyError, IndexError):
        raise _Missing from None


class _Missing(Exception):
    pass


def _apply(index: int, op: str, parent: Any, key: Any, value: Any, path: list[Any]) -> None:
    if not path:  # the whole state
        if op == "remove":
            raise ChangeError(index, "the state itself cannot be removed")
        parent[0] = value
        return
    if type(parent) is list:
        size = len(parent)
        if op == "set" and 0 <= key <= size:
            if key == size:
                parent.append(value)
            else:
                parent[key] = value
            return
        if op == "remove" and 0 <= key < size:
            del parent[key]
            return
        raise ChangeError(index, f"{_show(path)}: no such place in a list of {size}")
    if op == "set":
        parent[key] = value
        return
    if key not in parent:
        raise ChangeError(index, f"{_show(path)}: nothing to remove")
    del parent[key]


def _parse(index: int, change: Any) -> tuple[str, list[Any], Any]:
    if not isinstance(change, list | tuple) or not change:
        raise ChangeError(index, "expected [op, path] or [op, path, value]")
    op = change[0]
    if op == "set" and len(change) == 3:
        path = change[1]
        value = change[2]
    elif op == "remove" and len(change) == 2:
        path, value = change[1], None
    else:
        raise ChangeError(index, "expected ['set', path, value] or ['remove', path]")
    if not isinstance(path, list | tuple) or any(
        type(step) is not str and type(step) is not int for step in path
    ):
        raise ChangeError(index, "the path must be a list of keys (text) and indices (numbers)")
    return op, list(path), value


def _show(path: Iterable[Any]) -> str:
    return " / ".join(str(p) for p in path)

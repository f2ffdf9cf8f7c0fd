"""JSON text that is always valid and always encodable, whatever a model wrote.

Two things a model (or a hostile records file) can put into data that the
standard library would turn into broken output:

- a lone surrogate (``"\\ud800"`` is valid JSON): ``json.dumps(...,
  ensure_ascii=False)`` keeps it raw, and encoding the text as UTF-8 fails.
  :func:`dumps` writes it as the ``\\uXXXX`` escape it came in as, so it reads
  back unchanged, and leaves every other character as it is;
- NaN and Infinity, which are not JSON at all: toolproof writes ``null`` in
  their place (pydantic does the same), and its readers refuse them.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from itertools import islice
from json.encoder import encode_basestring
from typing import Any

import orjson
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

__all__ = ["dump_model", "dumps", "finite", "has_surrogates", "indented_pieces"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def _escape_surrogates(json_text: str) -> str:
    # In JSON text a raw surrogate can only stand inside a string, where its escape is valid.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def finite(data: Any) -> Any:
    """``data`` with every NaN and ±Infinity replaced by ``None``.

    Only the containers on the way to such a number are copied (a tuple becomes
    a list, as JSON writes it); where there is none, ``data`` itself comes back,
    so a big report is never held twice.
    """
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        changed: dict[Any, Any] | None = None
        for i, (key, value) in enumerate(data.items()):
            new = finite(value)
            if changed is None:
                if new is value:
                    continue
                changed = dict(islice(data.items(), i))
            changed[key] = new
        return data if changed is None else changed
    if isinstance(data, list | tuple):
        copied: list[Any] | None = None
        for i, value in enumerate(data):
            new = finite(value)
            if copied is None:
                if new is value:
                    continue
                copied = list(data[:i])
            copied.append(new)
        return data if copied is None else copied
    return data


def dumps(data: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """JSON text: readable Unicode, lone surrogates escaped, non-finite numbers as null.

    Without ``indent`` the text is compact (one line, no spaces), like pydantic's.
    """
    text = None
    if indent == 2 and type(indent) is int and not sort_keys and _orjson_writes_alike(data):
        # plain data that orjson writes as the standard library does, ten times faster
        # than _indented (a summary.json of 2,000 failures: 0.03 s -> 0.003 s)
        with contextlib.suppress(orjson.JSONEncodeError):  # a lone surrogate, too deep
            return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    if type(indent) is int and not sort_keys:
        # the standard library indents in pure Python: this does the same for plain data,
        # about three times faster (a summary.json of 2,000 failures: 0.12 s -> 0.04 s)
        with contextlib.suppress(_Unusual):
            text = _indented(data, " " * indent)
    if text is None:
        text = json.dumps(
            finite(data),
            ensure_ascii=False,
            allow_nan=False,
            indent=indent,
            sort_keys=sort_keys,
            separators=(",", ":") if indent is None else None,
            default=to_jsonable_python,  # datetimes, enums: as pydantic writes them
        )
    return _escape_surrogates(text) if has_surrogates(text) else text


#: Where ``repr`` and orjson write a float alike: outside it, ``repr`` writes ``1e-05``
#: and ``1e+16``, orjson ``0.00001`` and ``1e16`` (zero and non-finite ones are alike).
_ALIKE_LOW, _ALIKE_HIGH = 1e-4, 1e16
#: The integers orjson writes (beyond them it refuses).
_ORJSON_INTS = range(-(2**63), 2**64)


def _orjson_writes_alike(data: Any) -> bool:
    """Whether orjson's indented text of ``data`` is ``json.dumps(finite(data),
    ensure_ascii=False, indent=2)``: dicts with string keys, lists, tuples, strings,
    booleans, None, 64-bit integers and floats it writes as ``repr`` does, of exactly those
    types. A lone surrogate or nesting too deep for orjson is found by orjson itself."""
    stack = [data]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        o = pop()
        kind = type(o)
        if kind is str or o is None or kind is bool:
            continue
        if kind is dict:
            for key, value in o.items():
                if type(key) is not str:
                    return False
                push(value)
        elif kind is list or kind is tuple:
            extend(o)
        elif kind is float:
            if o and math.isfinite(o) and not _ALIKE_LOW <= abs(o) < _ALIKE_HIGH:
                return False
        elif kind is not int or o not in _ORJSON_INTS:
            return False
    return True


class _Unusual(Exception):
    """Data :func:`_indented` leaves to the standard library (it would write it otherwise)."""


def _indented(data: Any, step: str) -> str:
    """``json.dumps(finite(data), ensure_ascii=False, indent=...)`` for plain data: dicts
    with string keys, lists, tuples, strings, numbers, booleans and None, of exactly those
    types (subclasses, other keys and other types raise :class:`_Unusual`)."""
    out: list[str] = []
    _indent(data, "\n", step, out)
    return "".join(out)


def indented_pieces(data: Any, indent: int = 2) -> list[str] | None:
    """The pieces whose concatenation is ``json.dumps(finite(data), ensure_ascii=False,
    indent=indent)``, lone surrogates left raw; each string value is a piece of its own.
    None for data that is not plain (see :func:`_indented`): the caller encodes it
    another way."""
    out: list[str] = []
    try:
        _indent(data, "\n", " " * indent, out)
    except _Unusual:
        return None
    return out


def _indent(o: Any, nl: str, step: str, out: list[str]) -> None:
    kind = type(o)
    if kind is str:
        out.append(encode_basestring(o))
    elif kind is dict:
        if not o:
            out.append("{}")
            return
        inner = nl + step
        sep = "{" + inner
        for key, value in o.items():
            if type(key) is not str:
                raise _Unusual
            out.append(sep)
            out.append(encode_basestring(key))
            out.append(": ")
            _indent(value, inner, step, out)
            sep = "," + inner
        out.append(nl + "}")
    elif kind is list or kind is tuple:
        if not o:
            out.append("[]")
            return
        inner = nl + step
        if all(type(value) is int for value in o):  # (a row of counts: no call per number)
            out.append("[" + inner + ("," + inner).join(map(int.__repr__, o)) + nl + "]")
            return
        sep = "[" + inner
        for value in o:
            out.append(sep)
            _indent(value, inner, step, out)
            sep = "," + inner
        out.append(nl + "]")
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(o))
    elif kind is float:
        out.append(float.__repr__(o) if math.isfinite(o) else "null")
    else:
        raise _Unusual


def dump_model(model: BaseModel, *, indent: int | None = None, exclude_none: bool = False) -> str:
    """A pydantic model as JSON text, even when it holds lone surrogates."""
    try:
        return model.model_dump_json(indent=indent, exclude_none=exclude_none)
    except PydanticSerializationError:  # a lone surrogate: pydantic cannot encode it
        # python mode: json mode fails too when a mapping key holds the surrogate
        data = model.model_dump(mode="python", exclude_none=exclude_none)
        return dumps(data, indent=indent)

"""Locating errors: one-line ``file:line:col: field: message`` errors from pydantic's.

Used by the suite loader and the records reader alike, so it sits at the bottom
layer with the types and errors.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from toolproof.errors import SuiteError

Path_ = tuple[str | int, ...]
Positions = dict[Path_, tuple[int, int]]


class Locator:
    """Maps a field path inside one file to its line and column."""

    def __init__(self, file: str, positions: Positions | None = None, lines: Sequence[str] = ()):
        self.file = file
        self.positions = positions or {}
        self.lines = lines  # for JSONL: the text of each line

    def error(self, path: Path_, message: str, *, line_offset: int = 0) -> SuiteError:
        line, column = self._where(path)
        return SuiteError(self.file, message, line=line, column=column, path=path)

    def _where(self, path: Path_) -> tuple[int | None, int | None]:
        for cut in range(len(path), -1, -1):
            if path[:cut] in self.positions:
                return self.positions[path[:cut]]
        return None, None


#: The errors whose location ends with a key the data does not hold (it names it).
_NAMES_A_KEY = ("missing", "extra_forbidden")


def _real_path(data: Any, loc: Sequence[str | int], kind: str | None = None) -> Path_:
    """Drop pydantic's union-member tags from a location, keeping real keys and indexes.

    ``kind``: the error's type. A key the data does not hold is kept only where the
    error names it (a missing key, ending the location); any other segment that is not
    a key or index of the data is a union member's tag ('str', 'int', 'list[CallSpec]',
    'function-after[...]'), and is dropped."""
    out: list[str | int] = []
    cur = data
    last = len(loc) - 1
    for i, seg in enumerate(loc):
        if (isinstance(cur, dict) and isinstance(seg, str) and seg in cur) or (
            isinstance(cur, list) and isinstance(seg, int) and 0 <= seg < len(cur)
        ):
            out.append(seg)
            cur = cur[seg]  # type: ignore[index]
        elif (
            isinstance(cur, dict)
            and isinstance(seg, str)
            and seg not in cur
            and seg.isidentifier()
            and (kind is None or (i == last and kind in _NAMES_A_KEY))
        ):
            # a missing or unknown key named by the error itself
            out.append(seg)
            cur = None
    return tuple(out)


def _union_member(
    data: Any, loc: Sequence[str | int], kind: str
) -> tuple[Path_, str, tuple[str | int, ...]] | None:
    """The first union member an error's location passes through: (the real path of the
    value the union takes, the member's tag, the location after the tag), or None."""
    real = _real_path(data, loc, kind)
    out: list[str | int] = []
    for i, seg in enumerate(loc):
        if len(out) < len(real) and seg == real[len(out)]:
            out.append(seg)
        else:
            return tuple(out), str(seg), tuple(loc[i + 1 :])
    return None


def _best_members(errs: list[Any], data: Any) -> list[Any]:
    """The errors without those of union members that fit worse than another.

    A value that fits none of a union's members gets every member's errors: for a
    scripted user's entry ``{offer: [], say: x}``, "should be a string" (the plain
    entry), "missing 'when'" (a rule) and the real one (an entry's ``offer``). A member
    that fails at the value itself, misses a key or does not have one of the value's keys
    fits worse than one that only fails inside a key the value holds; when some member
    fits so, only its errors are kept."""
    members: dict[Path_, dict[str, list[tuple[Any, tuple[str | int, ...]]]]] = {}
    for err in errs:
        found = _union_member(data, err["loc"], err["type"])
        if found is not None:
            node, tag, rest = found
            members.setdefault(node, {}).setdefault(tag, []).append((err, rest))

    def fits(tag_errs: list[tuple[Any, tuple[str | int, ...]]]) -> bool:
        for err, rest in tag_errs:
            if not rest:  # at the value itself: not of this member's kind
                return False
            if err["type"] in _NAMES_A_KEY and len(rest) == 1 and isinstance(rest[0], str):
                return False  # a key of an object missing, or one it does not have
        return True

    dropped: set[int] = set()
    for by_tag in members.values():
        if len(by_tag) < 2:
            continue
        good = [tag for tag, tag_errs in by_tag.items() if fits(tag_errs)]
        if good and len(good) < len(by_tag):
            dropped.update(id(e) for tag, es in by_tag.items() if tag not in good for e, _ in es)
    return [e for e in errs if id(e) not in dropped]


def _expand(tp: Any) -> list[Any]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return [x for a in typing.get_args(tp) for x in _expand(a)]
    if origin is typing.Annotated:
        return _expand(typing.get_args(tp)[0])
    return [tp]


def _fields_at(root: type[BaseModel], path: Path_) -> list[str]:
    """Names of the fields valid at ``path``, for 'did you mean' hints."""
    current: list[Any] = [root]
    for seg in path:
        nxt: list[Any] = []
        for tp in (t for c in current for t in _expand(c)):
            origin = typing.get_origin(tp)
            if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(seg, str):
                if seg in tp.model_fields:
                    nxt.append(tp.model_fields[seg].annotation)
            elif origin is list and isinstance(seg, int):
                nxt.append(typing.get_args(tp)[0])
            elif origin is dict and isinstance(seg, str):
                nxt.append(typing.get_args(tp)[1])
        current = nxt
    names: list[str] = []
    for tp in (t for c in current for t in _expand(c)):
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            names.extend(tp.model_fields)
    return names


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def first_error(
    exc: ValidationError, data: Any, model: type[BaseModel], where: Locator, prefix: Path_ = ()
) -> SuiteError:
    """The first problem of a validation error, as a located one-line error."""
    errs = _best_members(exc.errors(include_url=False), data)
    err = next((e for e in errs if e["type"] == "extra_forbidden"), errs[0])
    return _located(err, data, model, where, prefix)


def all_errors(
    exc: ValidationError, data: Any, model: type[BaseModel], where: Locator, prefix: Path_ = ()
) -> list[SuiteError]:
    """Every problem of a validation error, one located error per field.

    Members of a union fail together; only the most specific place is kept
    (an error at ``tools`` is dropped when ``tools[0].name`` has one).
    """
    errs = _best_members(exc.errors(include_url=False), data)
    by_path: dict[Path_, Any] = {}
    for err in errs:
        path = _real_path(data, err["loc"], err["type"])
        if path not in by_path or err["type"] == "extra_forbidden":
            by_path[path] = err
    paths = [p for p in by_path if not any(len(q) > len(p) and q[: len(p)] == p for q in by_path)]
    typos = [p for p in paths if by_path[p]["type"] == "extra_forbidden" and p]
    paths = [p for p in paths if not _explained(p, by_path[p], typos)]
    paths.sort(key=lambda p: by_path[p]["type"] != "extra_forbidden")  # a typo explains the rest
    return [_located(by_path[p], data, model, where, prefix) for p in paths]


def _explained(path: Path_, err: Any, typos: list[Path_]) -> bool:
    """A missing key explained by a misspelt one beside it ('suit' for 'suite')."""
    if err["type"] != "missing" or not path:
        return False
    return any(
        t[:-1] == path[:-1]
        and difflib.SequenceMatcher(None, str(t[-1]), str(path[-1])).ratio() >= 0.5
        for t in typos
    )


def _located(
    err: Any, data: Any, model: type[BaseModel], where: Locator, prefix: Path_
) -> SuiteError:
    path = _real_path(data, err["loc"], err["type"])
    full = (*prefix, *path)
    kind = err["type"]
    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        valid = _fields_at(model, path[:-1])
        hint = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
        msg = f"unknown key '{key}'"
        msg += f"; did you mean '{hint[0]}'?" if hint else f"; expected one of: {', '.join(valid)}"
        return where.error(full, msg)
    if kind == "missing":
        return where.error(full, f"missing required key '{path[-1] if path else '?'}'")
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    elif "input" in err and kind not in ("model_type",):
        msg += f", got {_describe(err['input'])}"
    return where.error(full, msg)


class LazyLocator(Locator):
    """A :class:`Locator` whose positions are worked out only when an error needs them."""

    def __init__(self, file: str, positions: Callable[[], Positions]):
        super().__init__(file)
        self._compute: Callable[[], Positions] | None = positions

    def _where(self, path: Path_) -> tuple[int | None, int | None]:
        if self._compute is not None:
            self.positions, self._compute = self._compute(), None
        return super()._where(path)


#: Line breaks as YAML counts them, so that a JSON file's errors point where they always did.
_BREAK = re.compile(r"\r\n|[\n\r\x85\u2028\u2029]")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_SPACE = re.compile(r"[ \t\n\r]*")


def json_positions(text: str) -> Positions:
    """Where each value of a valid JSON document starts: path -> (line, column), 1-based.

    The same marks as the YAML reader gives (JSON is YAML): a mapping entry is
    located at its key, a list item and the whole document at their first
    character.
    """
    starts = [0, *(m.end() for m in _BREAK.finditer(text))]
    pos: Positions = {}

    def at(i: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, i) - 1
        return line + 1, i - starts[line] + 1

    def space(i: int) -> int:
        match = _SPACE.match(text, i)
        return match.end() if match else i

    def value(i: int, path: Path_) -> int:
        pos.setdefault(path, at(i))
        char = text[i]
        if char == "{":
            i = space(i + 1)
            if text[i] == "}":
                return i + 1
            while True:
                key, end = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
                pos[(*path, key)] = at(i)
                i = value(space(space(end) + 1), (*path, key))
                i = space(i)
                if text[i] != ",":
                    return i + 1
                i = space(i + 1)
        if char == "[":
            i = space(i + 1)
            if text[i] == "]":
                return i + 1
            index = 0
            while True:
                i = space(value(i, (*path, index)))
                index += 1
                if text[i] != ",":
                    return i + 1
                i = space(i + 1)
        if char == '"':
            return int(json.decoder.scanstring(text, i + 1)[1])  # type: ignore[attr-defined]
        for word in ("true", "false", "null"):
            if text.startswith(word, i):
                return i + len(word)
        match = _NUMBER.match(text, i)
        if match is None:
            raise ValueError(f"not JSON at offset {i}")
        return match.end()

    value(space(0), ())
    return pos


class JsonLineLocator(Locator):
    """Locates a field inside one line of a JSONL file: the column of its key."""

    def __init__(self, file: str, line: int, text: str):
        super().__init__(file)
        self.line = line
        self.text = text

    def _where(self, path: Path_) -> tuple[int | None, int | None]:
        for seg in reversed(path):
            if isinstance(seg, str):
                col = self.text.find(json.dumps(seg))
                if col >= 0:
                    return self.line, col + 1
        return self.line, 1

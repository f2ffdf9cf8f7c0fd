"""Safe YAML loading that remembers where every value came from.

Plain scalars are read by the YAML 1.2 core schema, whatever PyYAML's 1.1
defaults say:

========================  ==============  ==================
written                   YAML 1.1        toolproof (1.2)
========================  ==============  ==================
``12:30``, ``1:02:03``    750, 3723       "12:30", "1:02:03"
``0777``                  511             777
``0o17``, ``0x1F``        "0o17", 31      15, 31
``1_000``, ``0b101``      1000, 5         "1_000", "0b101"
``1e-6``, ``6.02e23``     "1e-6", ...     1e-06, 6.02e+23
``yes``, ``no``, ``on``   True, False     "yes", "no", "on"
``2026-09-20``            a date          "2026-09-20"
========================  ==============  ==================

Dates stay text so that they compare with a model's string argument as
written. Duplicate keys are errors. Hostile input is bounded: nesting deeper
than ``Trust.max_depth`` and alias expansion beyond ``Trust.max_alias_nodes``
(the "billion laughs") are refused with one located error.

When PyYAML has libyaml, a document is composed in C and built here as the
pure reader builds it; anything the C reader refuses, and anything nested
deeper than the bound, is read again by the pure reader, whose located
errors are the ones reported. Both give the same data and positions.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.reader import ReaderError
from yaml.resolver import Resolver

from toolproof._shared.locate import Path_, Positions
from toolproof.errors import SuiteError, UserError
from toolproof.trust import DEFAULT_MAX_FILE_BYTES, DEFAULT_TRUST, Trust, UnsafePath, read_capped

__all__ = ["Path_", "Positions", "load_yaml", "load_yaml_data", "read_mapping"]

_STR = "tag:yaml.org,2002:str"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"

_INT_RX = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT_RX = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class _LimitError(yaml.MarkedYAMLError):
    """A bound on hostile input was reached (depth)."""


class _Merges:
    """A bound on what merge keys ('<<') expand to, for either reader."""

    max_merged = DEFAULT_TRUST.max_alias_nodes
    _merged = 0

    def flatten_mapping(self, node: Any) -> None:
        before = len(node.value)
        super().flatten_mapping(node)  # type: ignore[misc]
        grown = len(node.value) - before
        if grown > 0:
            self._merged += grown
            if self._merged > self.max_merged:
                raise _LimitError(
                    None,
                    None,
                    f"merge keys ('<<') expand to more than {self.max_merged} entries",
                    node.start_mark,
                )


class _Loader(_Merges, yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema and bounds on depth and merges."""

    max_depth = DEFAULT_TRUST.max_depth

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise _LimitError(
                    None,
                    None,
                    f"nested deeper than {self.max_depth} levels",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node)).lower()
    if text.endswith(".inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text == ".nan":
        return math.nan
    return float(text)


_Loader.yaml_implicit_resolvers = {}
_Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(_INT, _INT_RX, list("-+0123456789"))
_Loader.add_implicit_resolver(_FLOAT, _FLOAT_RX, list("-+.0123456789"))
_Loader.add_implicit_resolver(_NULL, re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
_Loader.add_implicit_resolver(_MERGE, re.compile(r"^(?:<<)$"), ["<"])
_Loader.add_constructor(_INT, _construct_int)
_Loader.add_constructor(_FLOAT, _construct_float)


def _c_loader() -> Any:
    """libyaml's parser and composer with the pure loader's schema and constructors."""
    try:
        from yaml._yaml import CParser
    except ImportError:  # pragma: no cover - PyYAML built without libyaml
        return None

    class _CLoader(_Merges, CParser, SafeConstructor, Resolver):
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _CLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
    _CLoader.yaml_constructors = dict(_Loader.yaml_constructors)
    return _CLoader


#: None when PyYAML has no libyaml: then every text is read by the pure reader.
_CLoader: Any = _c_loader()

#: Texts the fast path leaves to the pure reader, unread, where the two readers are
#: known to differ or could: a character the pure reader refuses; a tab anywhere
#: (the pure reader refuses one after a scalar, libyaml does not); a byte order
#: mark or a line break other than CR and LF; a tag where a node may start
#: (libyaml reads ``!`` on a plain scalar as "not resolved", the pure reader
#: resolves it); a comment right after a block scalar's header (``|#``).
_ONLY_PURE_CHARACTER = re.compile(
    "[^\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_TAG = re.compile(r"(?<![^\s\[\]{},])!")
_HEADER_COMMENT = re.compile(r"[|>][-+0-9]*#")


def _only_pure(text: str) -> bool:
    """Whether ``text`` is one for the pure reader alone (see above)."""
    return bool(
        _ONLY_PURE_CHARACTER.search(text)
        or ("!" in text and _TAG.search(text))
        or ("#" in text and _HEADER_COMMENT.search(text))
    )


def _pure_reader_needed(root: yaml.Node, limit: int) -> bool:
    """Whether the composed document must be read again by the pure reader.

    Either the pure composer would refuse it, finding a node deeper than
    ``limit`` levels (counted as written, the root at level 1, an alias at the
    level where it appears: walked in document order, a node's first visit is
    where it is written, a later visit an alias, a leaf), or the readers
    differ on it: a plain scalar in a flow collection holding ``?`` (libyaml
    reads ``[a?b]`` and ``[?b]`` as text, the pure reader refuses or reads a
    key), or an empty document (placed differently).
    """
    if isinstance(root, yaml.ScalarNode) and not root.value:
        return True
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth, in_flow = pop()
        if depth > limit:
            return True
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if in_flow and not node.style and "?" in node.value:
                return True
        elif isinstance(node, yaml.MappingNode):
            flow = bool(node.flow_style)
            for key, value in reversed(node.value):
                push((value, depth + 1, flow))
                push((key, depth + 1, flow))
        elif isinstance(node, yaml.SequenceNode):
            flow = bool(node.flow_style)
            for item in reversed(node.value):
                push((item, depth + 1, flow))
    return False


def load_yaml(text: str, file: str, trust: Trust = DEFAULT_TRUST) -> tuple[Any, Positions]:
    """Parse one YAML document; return the data and a map of path -> (line, column)."""
    fast = _load_c(text, file, trust)
    if fast is not None:
        return fast
    return _load_pure(text, file, trust)


def _load_c(text: str, file: str, trust: Trust) -> tuple[Any, Positions] | None:
    """The document read by libyaml, or None when it is the pure reader's to read."""
    if _CLoader is None or _only_pure(text):
        return None
    loader = _CLoader(text)
    loader.max_merged = trust.max_alias_nodes
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        if _pure_reader_needed(node, trust.max_depth):
            return None
        positions: Positions = {}
        data = _Builder(loader, file, trust).build(node, (), positions)
        return data, positions
    except (yaml.YAMLError, SuiteError, RecursionError):
        return None
    finally:
        loader.dispose()


def _load_pure(text: str, file: str, trust: Trust) -> tuple[Any, Positions]:
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # refuses non-printable characters already
        loader.max_depth = trust.max_depth
        loader.max_merged = trust.max_alias_nodes
        node = loader.get_single_node()
        if node is None:
            return None, {}
        positions: Positions = {}
        builder = _Builder(loader, file, trust)
        data = builder.build(node, (), positions)
        return data, positions
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise SuiteError(
            file,
            f"invalid YAML: {problem}",
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except ReaderError as exc:
        start = text.rfind("\n", 0, exc.position) + 1
        raise SuiteError(
            file,
            f"invalid YAML: character #x{exc.character:04x} is not allowed",
            line=text.count("\n", 0, exc.position) + 1,
            column=exc.position - start + 1,
        ) from None
    except yaml.YAMLError as exc:
        raise SuiteError(file, f"invalid YAML: {exc}".splitlines()[0]) from None
    except RecursionError:
        message = f"invalid YAML: nested deeper than {trust.max_depth} levels"
        raise SuiteError(file, message) from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml_data(text: str, file: str, trust: Trust = DEFAULT_TRUST) -> Any:
    """The data of one YAML document, read like a suite (YAML 1.2, bounded)."""
    return load_yaml(text, file, trust)[0]


class _Builder:
    """Turns composed nodes into data, counting what aliases expand to."""

    def __init__(self, loader: Any, file: str, trust: Trust) -> None:
        self.loader = loader
        self.file = file
        self.trust = trust
        self.seen: set[int] = set()
        self.expanded = 0

    def _error(self, node: yaml.Node, path: Path_, message: str) -> SuiteError:
        return SuiteError(
            self.file,
            message,
            line=node.start_mark.line + 1,
            column=node.start_mark.column + 1,
            path=path,
        )

    def build(self, node: yaml.Node, path: Path_, pos: Positions, again: bool = False) -> Any:
        mark = node.start_mark
        pos.setdefault(path, (mark.line + 1, mark.column + 1))
        if len(path) > self.trust.max_depth:
            raise self._error(node, path, f"nested deeper than {self.trust.max_depth} levels")
        seen = self.seen
        if not again:
            again = id(node) in seen
        seen.add(id(node))
        if again:
            self.expanded += 1
            if self.expanded > self.trust.max_alias_nodes:
                raise self._error(
                    node,
                    path,
                    f"aliases expand to more than {self.trust.max_alias_nodes} values "
                    "(a YAML bomb?)",
                )
        kind = type(node)
        if kind is yaml.ScalarNode and node.tag == _STR:
            return node.value  # what SafeConstructor makes of it, without the detour
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, pos, again)
        if isinstance(node, yaml.SequenceNode):
            build = self.build
            return [build(item, (*path, i), pos, again) for i, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: yaml.Node, path: Path_) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except ValueError as exc:  # an integer beyond Python's digit limit
            if "digits" not in str(exc):
                raise
            from toolproof._shared.json_numbers import LIMIT

            raise self._error(
                node, path, f"an integer with more than {LIMIT:,} digits (toolproof reads up "
                f"to {LIMIT:,})"
            ) from None

    def _mapping(self, node: yaml.MappingNode, path: Path_, pos: Positions, again: bool) -> Any:
        self.loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        build = self.build
        for key_node, value_node in node.value:
            if type(key_node) is yaml.ScalarNode and key_node.tag == _STR:
                key: Any = key_node.value
            else:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self._error(key_node, path, "mapping keys must be plain scalars")
                key = self._scalar(key_node, path)
                if not isinstance(key, str | int | float | bool) or key is None:
                    raise self._error(key_node, path, "mapping keys must be plain scalars")
            name = key if isinstance(key, str) else str(key)
            if name in out:
                raise self._error(key_node, path, f"duplicate key '{key}'")
            child = (*path, name)
            mark = key_node.start_mark
            pos[child] = (mark.line + 1, mark.column + 1)
            out[name] = build(value_node, child, pos, again)
        return out


def read_mapping(path: str | Path, limit: int = DEFAULT_MAX_FILE_BYTES) -> dict[str, Any]:
    """A YAML (1.2, as suites are read) or JSON file that must hold a mapping."""
    p = Path(path)
    try:
        text = read_capped(p, limit).decode("utf-8")
    except UnsafePath as exc:
        raise UserError(f"{p}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if p.suffix == ".json":
        from toolproof.trust import TooDeep, loads_json

        try:
            data = loads_json(text, unique_keys=True)
        except (ValueError, TooDeep) as exc:  # json.JSONDecodeError is a ValueError
            raise UserError(f"{p}: not valid JSON: {exc}") from None
    else:
        data = load_yaml_data(text, str(p))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SuiteError(str(p), "the file must hold a mapping")
    return data

"""Safe YAML loading that remembers where every value came from."""

from __future__ import annotations

import re
from typing import Any

import yaml

from toolproof._locate import Path_, Positions
from toolproof.errors import SuiteError


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans and timestamps kept as text.

    ``NO`` stays the string "NO" (a country code), and ``2026-09-20`` stays a
    string so that it matches a model's string argument exactly.
    """


_BOOL = "tag:yaml.org,2002:bool"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL, _TIMESTAMP)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(text: str, file: str) -> tuple[Any, Positions]:
    """Parse one YAML document; return the data and a map of path -> (line, column)."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        positions: Positions = {}
        data = _build(loader, node, (), positions, file)
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
    except yaml.YAMLError as exc:
        raise SuiteError(file, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def _build(loader: _Loader, node: yaml.Node, path: Path_, pos: Positions, file: str) -> Any:
    pos.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) or key is None:
                raise SuiteError(
                    file,
                    "mapping keys must be plain scalars",
                    line=key_node.start_mark.line + 1,
                    column=key_node.start_mark.column + 1,
                    path=path,
                )
            if key in out:
                raise SuiteError(
                    file,
                    f"duplicate key '{key}'",
                    line=key_node.start_mark.line + 1,
                    column=key_node.start_mark.column + 1,
                    path=path,
                )
            child = (*path, str(key))
            pos[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[str(key) if not isinstance(key, str) else key] = _build(
                loader, value_node, child, pos, file
            )
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*path, i), pos, file) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)

"""Imported tools as toolproof YAML, with the notes as comments."""

from __future__ import annotations

from typing import Any

import yaml

from toolproof._shared.visible import visible
from toolproof.importers._model import ImportResult
from toolproof.types import SuiteTool


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the order given, list items indented under their key."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def tool_data(tool: SuiteTool) -> dict[str, Any]:
    """A tool as written in a suite: every field that is not toolproof's default."""
    data = tool.model_dump(mode="json", exclude_defaults=True)
    data.pop("match", None)
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    for key in ("effect", "risk", "requires_confirmation", "strict"):
        if key in data:
            out[key] = data[key]
    return out


def dump_yaml(data: Any) -> str:
    text: str = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return text


def tools_yaml(result: ImportResult, *, indent: str = "") -> str:
    """A YAML list of the tools, each with its source comment."""
    chunks = []
    for item in result.items:
        text = dump_yaml([tool_data(item.tool)])
        comment = f"{indent}# {visible(item.comment)}\n" if item.comment else ""
        lines = (f"{indent}{line}".rstrip() + "\n" for line in text.splitlines())
        chunks.append(comment + "".join(lines))
    return "\n".join(chunks)


def tools_file(result: ImportResult) -> str:
    """A tools file (``tools: [...]``), loadable with ``tools: FILE`` in a suite."""
    head = [
        f"# Imported by toolproof from {visible(result.source)} ({result.format}).",
        "# Re-import, or check for drift: toolproof tools import SOURCE --check SUITE",
    ]
    for note in result.notes:
        head.append("# " + note.render())
    body = tools_yaml(result, indent="  ") if result.items else "  []\n"
    return "\n".join(head) + "\ntools:\n" + body

"""Where a suite's tools have drifted from their source: missing, extra, or changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolproof.types import SuiteTool

Path = tuple[str | int, ...]

#: Fields compared. Effect and risk are the suite's own judgement, so not compared.
COMPARED = ("description", "parameters", "strict")


@dataclass(frozen=True, slots=True)
class Drift:
    """One difference. ``path`` is inside the suite's tool (empty for a whole tool)."""

    tool: str
    path: Path
    message: str


def drift(suite_tools: list[SuiteTool], source_tools: list[SuiteTool]) -> list[Drift]:
    """Every difference between the suite's tools and the source's, in the source's order."""
    ours = {t.name: t for t in suite_tools}
    theirs = {t.name: t for t in source_tools}
    out: list[Drift] = []
    for name, tool in theirs.items():
        if name not in ours:
            out.append(Drift(name, (), "in the source but not in the suite"))
            continue
        mine = ours[name]
        for field in COMPARED:
            out.extend(
                Drift(name, path, message)
                for path, message in _diff(getattr(mine, field), getattr(tool, field), (field,))
            )
    out.extend(
        Drift(name, (), "in the suite but no longer in the source")
        for name in ours
        if name not in theirs
    )
    return out


def _diff(mine: Any, theirs: Any, path: Path) -> list[tuple[Path, str]]:
    if isinstance(mine, dict) and isinstance(theirs, dict):
        out: list[tuple[Path, str]] = []
        for key in theirs:
            if key not in mine:
                out.append(((*path, key), f"missing in the suite (source: {_show(theirs[key])})"))
            else:
                out.extend(_diff(mine[key], theirs[key], (*path, key)))
        out.extend(
            ((*path, key), f"not in the source (suite: {_show(mine[key])})")
            for key in mine
            if key not in theirs
        )
        return out
    if (
        isinstance(mine, list)
        and isinstance(theirs, list)
        and len(mine) == len(theirs)
        and all(isinstance(x, dict | list) for x in mine + theirs)
    ):
        out = []
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            out.extend(_diff(a, b, (*path, i)))
        return out
    if mine != theirs or type(mine) is not type(theirs):
        return [(path, f"differs (suite: {_show(mine)}, source: {_show(theirs)})")]
    return []


def _show(value: Any, limit: int = 80) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"

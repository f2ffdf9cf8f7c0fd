"""What an import returns: the tools, plus every note about what could not be carried."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from toolproof._shared.visible import visible
from toolproof.types import SuiteTool


class Level(StrEnum):
    """How much a note matters.

    ``error``: a tool was left out. ``warning``: something in the source was dropped,
    changed or will be refused by a provider. ``info``: a faithful translation the
    user may want to know of.
    """

    error = "error"
    warning = "warning"
    info = "info"


@dataclass(frozen=True, slots=True)
class Note:
    """One thing the import could not carry as is, named and explained."""

    tool: str | None
    message: str
    level: Level = Level.warning
    where: str = ""

    def render(self) -> str:
        """One line, with control and bidi characters from the source escaped visibly."""
        who = f"{self.tool}: " if self.tool else ""
        at = f" (at {self.where})" if self.where else ""
        return visible(f"{self.level}: {who}{self.message}{at}")


@dataclass(slots=True)
class ImportedTool:
    """One imported tool, with the source definition it came from."""

    tool: SuiteTool
    raw: Any
    comment: str = ""


@dataclass(slots=True)
class ImportResult:
    """Tools read from one source, in the source's order."""

    source: str
    format: str
    items: list[ImportedTool] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    @property
    def tools(self) -> list[SuiteTool]:
        return [item.tool for item in self.items]

    def note(
        self, tool: str | None, message: str, level: Level = Level.warning, where: str = ""
    ) -> None:
        self.notes.append(Note(tool, message, level, where))

    @property
    def warnings(self) -> list[Note]:
        return [n for n in self.notes if n.level is not Level.info]

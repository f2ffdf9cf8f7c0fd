"""A small notes server (MCP, stdio) whose notes are text files in notes/ of its folder.

toolproof starts it fresh for every attempt, in a temporary copy of this
folder, so each attempt sees the same two notes and nothing it writes stays.
Needs the mcp SDK: pip install 'toolproof[mcp]'.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

NOTES = Path("notes")
app = MCPServer("notes")


def _path(title: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9 _-]{1,60}", title):
        raise ToolError(f"a title is 1-60 letters, digits, spaces, '_' or '-', not {title!r}")
    return NOTES / f"{title}.txt"


@app.tool()
def add_note(title: str, text: str) -> str:
    """Create or replace a note."""
    NOTES.mkdir(exist_ok=True)
    _path(title).write_text(text, encoding="utf-8")
    return f"saved '{title}'"


@app.tool()
def read_note(title: str) -> str:
    """Read a note by its exact title."""
    path = _path(title)
    if not path.is_file():
        raise ToolError(f"no note titled {title!r}")  # the model reads this message
    return path.read_text(encoding="utf-8")


@app.tool()
def all_notes() -> dict[str, object]:
    """Every note by title, and the sorted titles (toolproof reads the end state with it)."""
    notes = {p.stem: p.read_text(encoding="utf-8") for p in sorted(NOTES.glob("*.txt"))}
    return {"titles": sorted(notes), "notes": notes}


if __name__ == "__main__":
    app.run("stdio")

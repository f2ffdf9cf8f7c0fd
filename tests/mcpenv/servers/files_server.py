"""An MCP server (official SDK) whose tools act on files in its working folder, for the tests."""

from __future__ import annotations

import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

app = MCPServer("files")


@app.tool()
def write_file(path: str, text: str) -> str:
    """Write a text file in the working folder."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {path}"


@app.tool()
def read_file(path: str) -> str:
    """Read a text file from the working folder."""
    return Path(path).read_text(encoding="utf-8")


@app.tool()
def files() -> dict[str, str]:
    """Every text file of the working folder, by name (an end state)."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(".").glob("*.txt"))}


@app.tool()
def getenv(name: str) -> str:
    """The value of an environment variable of the server, or '(unset)'."""
    import os

    return os.environ.get(name, "(unset)")


@app.tool()
def crash() -> str:
    """The server process dies."""
    import os

    os._exit(1)


@app.tool()
def explode() -> str:
    """Always fails."""
    raise RuntimeError("boom")


@app.tool()
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "done"


if __name__ == "__main__":
    app.run("stdio")

"""An MCP server written with the official SDK, for the tests: run as a separate process.

    python mcp_server.py stdio
    python mcp_server.py http PORT

It lists five tools, two per page (so clients must follow ``nextCursor``),
with annotations, and its ``explode`` tool fails when called.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

PAGE = 2


def _tool(
    name: str, description: str, props: dict[str, Any], required: list[str], **hints: bool
) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": props, "required": required},
        annotations=types.ToolAnnotations(**hints) if hints else None,
    )


TOOLS = [
    _tool(
        "read_note",
        "Read a note by its title.",
        {"title": {"type": "string"}},
        ["title"],
        read_only_hint=True,
    ),
    _tool(
        "write_note",
        "Create or replace a note.",
        {"title": {"type": "string"}, "text": {"type": "string"}},
        ["title", "text"],
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
    _tool(
        "delete_note",
        "Delete a note.",
        {"title": {"type": "string"}},
        ["title"],
        read_only_hint=False,
        destructive_hint=True,
        open_world_hint=False,
    ),
    _tool(
        "publish_note",
        "Publish a note on the web.",
        {"title": {"type": "string"}},
        ["title"],
        destructive_hint=False,
    ),
    _tool("explode", "Always fails.", {}, []),
]
NOTES: dict[str, str] = {}


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "explode":
        raise RuntimeError("boom")
    if params.name == "write_note":
        NOTES[args["title"]] = args["text"]
        text = "saved"
    elif params.name == "read_note":
        text = NOTES.get(args["title"], "no such note")
    elif params.name == "delete_note":
        text = "deleted" if NOTES.pop(args["title"], None) is not None else "no such note"
    else:
        text = "published"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("notes", on_list_tools=list_tools, on_call_tool=call_tool)


async def _stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    if sys.argv[1] == "stdio":
        anyio.run(_stdio)
    else:
        import uvicorn

        app = server.streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")


if __name__ == "__main__":
    main()

"""Real MCP servers as the environment of multi-step cases (opt-in: their tools run real code).

A building block for the runner: :class:`McpSession` starts a fresh server per
attempt in a temporary copy of the working folder, runs each tool call with a
per-call timeout and records it as :class:`McpCall`.
"""

from toolproof.mcpenv._sandbox import sandbox_program, sandboxed
from toolproof.mcpenv._session import (
    DEFAULT_CALL_TIMEOUT_S,
    INSTALL_HINT,
    McpCall,
    McpEnvironmentSpec,
    McpSession,
)

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "INSTALL_HINT",
    "McpCall",
    "McpEnvironmentSpec",
    "McpSession",
    "sandbox_program",
    "sandboxed",
]

"""Bring your own tools: import tool definitions from provider JSON, MCP servers and OpenAPI.

``import_tools(SOURCE)`` reads OpenAI Chat, OpenAI Responses, Anthropic and
Gemini tool lists, MCP ``tools/list`` results, live MCP servers
(``mcp:stdio:...``, ``mcp:http(s)://...``) and OpenAPI 3.0/3.1 specs, and
returns toolproof tools with a note for everything that could not be carried.
``drift(suite_tools, imported)`` says where a suite's tools differ from the source.
"""

from toolproof.importers._bfcl import (
    BfclImport,
    bfcl_data_dir,
    import_bfcl,
    write_bfcl,
)
from toolproof.importers._compat import anthropic_strict_problems, openai_strict_problems
from toolproof.importers._formats import FILE_FORMATS, read_definitions
from toolproof.importers._mcp import INSTALL_HINT, McpSource, list_mcp_tools, parse_mcp_source
from toolproof.importers._model import ImportedTool, ImportResult, Level, Note
from toolproof.importers._openapi import OperationFilter, read_openapi
from toolproof.importers._source import FORMATS, import_tools
from toolproof.importers._tau2 import Tau2Import, import_tau2, tau2_domains_dir, write_tau2
from toolproof.importers._tool_drift import Drift, drift
from toolproof.importers._write import tool_data, tools_file, tools_yaml

__all__ = [
    "FILE_FORMATS",
    "FORMATS",
    "INSTALL_HINT",
    "BfclImport",
    "Drift",
    "ImportResult",
    "ImportedTool",
    "Level",
    "McpSource",
    "Note",
    "OperationFilter",
    "Tau2Import",
    "anthropic_strict_problems",
    "bfcl_data_dir",
    "drift",
    "import_bfcl",
    "import_tau2",
    "import_tools",
    "list_mcp_tools",
    "openai_strict_problems",
    "parse_mcp_source",
    "read_definitions",
    "read_openapi",
    "tau2_domains_dir",
    "tool_data",
    "tools_file",
    "tools_yaml",
    "write_bfcl",
    "write_tau2",
]

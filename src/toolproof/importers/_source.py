"""``import_tools(SOURCE)``: read tools from a file, a URL or a live MCP server, then check them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolproof._shared.locate import Locator
from toolproof.errors import SuiteError, UserError
from toolproof.importers._compat import check_compatibility
from toolproof.importers._formats import FILE_FORMATS, read_definitions
from toolproof.importers._mcp import list_mcp_tools, parse_mcp_source
from toolproof.importers._model import ImportResult, Level
from toolproof.importers._openapi import OperationFilter, is_openapi, read_openapi
from toolproof.importers._problems import ImportProblem
from toolproof.suite import LoadedSuite, check_suite
from toolproof.suite._load import Origin
from toolproof.suite._yaml import load_yaml
from toolproof.types import Suite

FORMATS = (*FILE_FORMATS, "openapi")
MAX_DOWNLOAD = 20 * 1024 * 1024


def import_tools(
    source: str,
    *,
    fmt: str | None = None,
    only: OperationFilter | None = None,
    timeout_s: float = 30.0,
) -> ImportResult:
    """The tools of ``source``, checked as a suite would check them, with every note.

    ``source`` is a file path, an http(s) URL of an OpenAPI spec, or
    ``mcp:stdio:COMMAND ARGS...`` / ``mcp:http(s)://...``. Raises UserError
    (a SuiteError naming file, line and field for a bad file).
    """
    if fmt is not None and fmt not in FORMATS:
        raise UserError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if source.startswith("mcp:"):
        mcp = parse_mcp_source(source)
        listed = list_mcp_tools(mcp, timeout_s=timeout_s)
        result = _guard(lambda: read_definitions(listed, mcp.label, "mcp"), mcp.label, None)
        result.format = "mcp"
    else:
        text, label = _read(source, timeout_s)
        data, positions = load_yaml(text, label)
        where = Locator(label, positions)
        if fmt == "openapi" or (fmt is None and is_openapi(data)):
            if not isinstance(data, dict):
                raise where.error((), "an OpenAPI spec must be a mapping")
            result = _guard(lambda: read_openapi(data, label, only), label, where)
        else:
            result = _guard(lambda: read_definitions(data, label, fmt), label, where)
    check_compatibility(result)
    _check_as_suite(result)
    return result


def _guard(read: Any, label: str, where: Locator | None) -> ImportResult:
    try:
        result: ImportResult = read()
    except ImportProblem as exc:
        if where is None:
            raise UserError(f"{label}: {_render(exc.path)}: {exc.message}") from None
        raise where.error(exc.path, exc.message) from None
    return result


def _render(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top)"


def _read(source: str, timeout_s: float) -> tuple[str, str]:
    if source.startswith(("http://", "https://")):
        return _download(source, timeout_s), source
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except FileNotFoundError:
        raise SuiteError(source, "file not found") from None
    except IsADirectoryError:
        raise SuiteError(source, "is a folder; give a JSON or YAML file") from None
    except UnicodeDecodeError as exc:
        raise SuiteError(source, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SuiteError(source, exc.strerror or "cannot read file") from None


def _download(url: str, timeout_s: float) -> str:
    import time
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": "application/json, application/yaml"})
    deadline = time.monotonic() + timeout_s  # the whole download, not each read
    chunks: list[bytes] = []
    size = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            while size <= MAX_DOWNLOAD:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise UserError(f"{url}: not downloaded within {timeout_s:g} s (--timeout)")
                _read_timeout(response, left)
                chunk = response.read1(min(1 << 16, MAX_DOWNLOAD + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except TimeoutError:
        raise UserError(f"{url}: not downloaded within {timeout_s:g} s (--timeout)") from None
    except urllib.error.HTTPError as exc:
        raise UserError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UserError(f"{url}: cannot download ({reason})") from None
    body = b"".join(chunks)
    if len(body) > MAX_DOWNLOAD:
        raise UserError(f"{url}: larger than {MAX_DOWNLOAD // (1024 * 1024)} MB")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{url}: not UTF-8 text") from None


def _read_timeout(response: Any, seconds: float) -> None:
    """Let the next read of ``response`` wait at most ``seconds`` (the time left)."""
    fp = getattr(response, "fp", None)
    raw = getattr(fp, "raw", None)
    sock = getattr(raw, "_sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 0.001))


def _check_as_suite(result: ImportResult) -> None:
    """Run toolproof's own suite checks on the imported tools.

    A tool that fails them is left out of the result and reported by name and reason.
    """
    suite = Suite(name="import", tools=result.tools, cases=[], source=result.source)
    where = Locator(result.source)
    origin = Origin(tools={t.name: (where, ("tools", i)) for i, t in enumerate(suite.tools)})
    failed: set[int] = set()
    for error in check_suite(LoadedSuite(suite, origin)):
        path = error.path
        index = path[1] if len(path) >= 2 and path[0] == "tools" else None
        name = suite.tools[index].name if isinstance(index, int) else None
        if isinstance(index, int):
            failed.add(index)
        result.note(
            name,
            f"not imported: fails toolproof's suite check: {error.detail}",
            Level.error,
            _render(path[2:]) if isinstance(index, int) else "",
        )
    result.items = [item for i, item in enumerate(result.items) if i not in failed]

"""--langfuse URL: the public API's observations, cursor-paged, keys never written."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app

FIXTURES = Path(__file__).parent / "fixtures"
PUBLIC, SECRET = "pk-lf-1234567890abcdef", "sk-lf-abcdef1234567890"


def _pages() -> list[dict[str, Any]]:
    """The blob-export fixture as the v2 API answers it (camelCase), two pages."""
    rename = {"trace_id": "traceId", "start_time": "startTime", "end_time": "endTime",
              "parent_observation_id": "parentObservationId", "session_id": "sessionId",
              "user_id": "userId", "provided_model_name": "providedModelName"}  # fmt: skip
    rows = [
        {rename.get(k, k): v for k, v in json.loads(line).items()}
        for line in (FIXTURES / "langfuse-blob-export.jsonl").read_text().splitlines()
    ]
    return [
        {"data": rows[:2], "meta": {"cursor": "page-2"}},
        {"data": rows[2:], "meta": {"cursor": None}},
    ]


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    pages = _pages()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            seen.append(
                {"path": url.path, "query": query, "auth": self.headers.get("Authorization")}
            )
            expected = "Basic " + base64.b64encode(f"{PUBLIC}:{SECRET}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.end_headers()
                return
            body = json.dumps(pages[1] if query.get("cursor") == "page-2" else pages[0]).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()


def test_observations_are_paged_and_imported_and_the_keys_written_nowhere(
    tmp_path: Path, server: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = server
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["traces", "import", "--langfuse", url, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "read 3 observation(s)" in result.output and "replay cases: 2" in result.output
    assert [s["query"].get("cursor") for s in seen] == [None, "page-2"]
    assert all(s["path"] == "/api/public/v2/observations" for s in seen)
    assert seen[0]["query"]["fields"] == "core,basic,io,metadata,model,usage"
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert PUBLIC not in written and SECRET not in written
    prov = [json.loads(x) for x in (out / "provenance.jsonl").read_text().splitlines()]
    assert prov[0]["session_id"] == "sess-blob-1"


def test_missing_keys_and_refused_keys_are_one_line_errors(
    tmp_path: Path, server: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = server
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    from toolproof.errors import UserError
    from toolproof.traces._langfuse import fetch_observations

    with pytest.raises(UserError, match="LANGFUSE_PUBLIC_KEY"):
        fetch_observations(url, tmp_path / "o.jsonl")
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-wrong-key-000000")
    with pytest.raises(UserError, match="HTTP 401") as err:
        fetch_observations(url, tmp_path / "o.jsonl")
    assert "sk-lf-wrong" not in str(err.value)
    with pytest.raises(UserError, match="http"):
        fetch_observations("file:///etc/passwd", tmp_path / "o.jsonl")


def _serve(answer: Any) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = answer(self.path).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def test_a_hostile_server_is_a_one_line_error_never_a_traceback_or_endless_paging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.errors import UserError
    from toolproof.traces._langfuse import fetch_observations

    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    row = json.loads((FIXTURES / "langfuse-blob-export.jsonl").read_text().splitlines()[0])
    calls: list[str] = []

    def same_cursor(path: str) -> str:
        calls.append(path)
        return json.dumps({"data": [row], "meta": {"cursor": "again"}})

    for answer, why in (
        (lambda _path: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (same_cursor, "cursor it gave before"),
    ):
        httpd, url = _serve(answer)
        try:
            with pytest.raises(UserError, match=why):
                fetch_observations(url, tmp_path / "o.jsonl")
        finally:
            httpd.shutdown()
    assert len(calls) == 2  # the first page, then the repeated cursor: stopped

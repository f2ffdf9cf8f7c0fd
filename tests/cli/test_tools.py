"""``toolproof tools import``, run as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.cli_support import toolproof

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "importers" / "data"


def test_import_writes_a_tools_file_and_reports_notes(tmp_path: Path) -> None:
    out = toolproof("tools", "import", str(DATA / "petstore.yaml"), "-o", str(tmp_path / "t.yaml"))
    assert out.returncode == 0, out.stderr
    assert "wrote 8 tool(s)" in out.stderr
    assert "warning: listPets: cookie parameter 'session' not carried" in out.stderr
    assert (tmp_path / "t.yaml").read_text().count("\n  - name: ") == 8
    (tmp_path / "suite.yaml").write_text("suite: s\ntools: t.yaml\ncases: []\n")
    assert toolproof("validate", str(tmp_path)).returncode == 0


def test_import_prints_to_stdout_without_out() -> None:
    out = toolproof("tools", "import", str(DATA / "anthropic.yaml"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# Imported by toolproof from ")
    assert "\ntools:\n  - name: get_weather\n" in out.stdout


def test_check_reports_drift_with_lines_and_exit_1(tmp_path: Path) -> None:
    toolproof("init", str(tmp_path), "--tools", str(DATA / "anthropic.yaml"))
    same = toolproof("tools", "import", str(DATA / "anthropic.yaml"), "--check", str(tmp_path))
    assert same.returncode == 0, same.stderr
    assert "no drift: the 2 tool(s)" in same.stdout
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite.read_text().replace("- celsius\n", "- kelvin\n", 1))
    drifted = toolproof("tools", "import", str(DATA / "anthropic.yaml"), "--check", str(tmp_path))
    assert drifted.returncode == 1
    (line, total) = [x for x in drifted.stderr.splitlines() if x.startswith(("drift:", "1 diff"))]
    assert line.startswith(f"drift: {suite}:")
    assert "tools[0].parameters.properties.unit.enum: get_weather: differs" in line
    assert '(suite: ["kelvin", "fahrenheit"], source: ["celsius", "fahrenheit"])' in line
    assert total.startswith("1 difference(s)")


def test_bad_source_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text("- type: function\n  function:\n    description: no name\n")
    out = toolproof("tools", "import", str(bad))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"error: {bad}:2:3: [0].function.name: a tool needs a name (a non-empty string)"
    ]


def test_nothing_importable_is_exit_2(tmp_path: Path) -> None:
    only_builtin = tmp_path / "t.json"
    only_builtin.write_text('[{"type": "web_search"}]')
    out = toolproof("tools", "import", str(only_builtin))
    assert out.returncode == 2
    assert f"error: no tool imported from {only_builtin}" in out.stderr


def test_init_asks_for_a_source_in_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.prompt import Prompt
    from typer.testing import CliRunner

    from toolproof.cli import _tools, app

    asked: list[str] = []

    def ask(prompt: str, **kwargs: object) -> str:
        asked.append(prompt)
        return str(DATA / "anthropic.yaml")

    monkeypatch.setattr(_tools, "_interactive", lambda: True)
    monkeypatch.setattr(Prompt, "ask", ask)
    result = CliRunner().invoke(app, ["init", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert asked and asked[0].startswith("Where are your tools defined?")
    assert "scaffolded a suite with 2 tool(s)" in result.output


def test_openapi_from_a_url(tmp_path: Path) -> None:
    import http.server
    import threading

    spec = (DATA / "spec31.yaml").read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/openapi.yaml":
                self.send_response(200)
                self.end_headers()
                self.wfile.write(spec)
            else:
                self.send_response(404)
                self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        ok = toolproof("tools", "import", f"{base}/openapi.yaml")
        assert ok.returncode == 0, ok.stderr
        assert "  - name: updateNote\n" in ok.stdout
        missing = toolproof("tools", "import", f"{base}/nope.yaml")
        assert missing.returncode == 2
        assert missing.stderr.strip() == f"error: {base}/nope.yaml: HTTP 404 Not Found"
    finally:
        server.shutdown()

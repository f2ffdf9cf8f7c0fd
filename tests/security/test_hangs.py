"""Inputs that stalled CI: each ends quickly, refused or done (issue 24, item 10).

Each input is what a pull request can send: a suite's settings, a YAML file, a
folder tree, an OpenAPI URL the user imports. The subprocess timeouts and
alarms are hang checks, not speed measurements.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TOOLS = """tools:
  - name: t
    parameters: {type: object, properties: {}}
"""
CASES = "cases:\n  - id: c1\n    prompt: hi\n    expect: {call: t}\n"


def _toolproof(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ("rpm: 1e-300", "settings.*.rpm"),
        ("tpm: 1e-300", "settings.*.tpm"),
        ("max_retries: 50", "settings.*.max_retries"),
        ("rpm: 0", "settings.*.rpm"),
        ("rpm: .nan", "settings.*.rpm"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_pacing_that_never_ends_is_refused_at_its_line(
    tmp_path: Path, setting: str, field: str, command: str
) -> None:
    (tmp_path / "suite.yaml").write_text(
        f'suite: s\nsettings: {{"*": {{{setting}}}}}\n' + TOOLS + CASES
    )
    (tmp_path / "script.yaml").write_text("default: {text: hi}\n")
    args = ["validate", "suite.yaml"]
    if command == "run":
        args = ["run", "suite.yaml", "-m", "scripted:script.yaml", "-q", "--no-store", "-o", "r"]
    proc = _toolproof(args, tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: suite.yaml:2:") and field in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    if command == "run":
        assert not (tmp_path / "r" / "manifest.json").exists()  # never left "running"


def test_pacing_in_the_users_config_is_checked_too(tmp_path: Path) -> None:
    from toolproof.errors import UserError
    from toolproof.run import load_config

    (tmp_path / "mine.yaml").write_text('models:\n  "*": {tpm: 1e-300}\n')
    with pytest.raises(UserError, match="tpm"):
        load_config(tmp_path / "mine.yaml")


def test_100000_yaml_anchors_load_or_are_refused_quickly(tmp_path: Path) -> None:
    anchors = "".join(f"  - &a{i} {{id: c{i}, prompt: hi, expect: {{call: t}}}}\n" for i in range(100_000))
    (tmp_path / "suite.yaml").write_text("suite: s\n" + TOOLS + "cases:\n" + anchors)
    proc = _toolproof(["validate", "suite.yaml"], tmp_path, timeout=120)
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, proc.stderr[-500:]


def test_a_glob_of_many_double_stars_over_deep_folders_ends(tmp_path: Path) -> None:
    deep = tmp_path / "cases"
    for i in range(18):
        deep = deep / f"d{i}"
        (deep / "side").mkdir(parents=True)
    (deep / "x.jsonl").write_text('{"id": "c2", "prompt": "hi", "expect": {"call": "t"}}\n')
    pattern = "/".join(["**"] * 9) + "/*.jsonl"
    (tmp_path / "suite.yaml").write_text(f"suite: s\ncases_from: ['{pattern}']\n" + TOOLS + CASES)
    proc = _toolproof(["validate", "suite.yaml"], tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "2 cases" in proc.stdout


def test_a_glob_over_too_many_folders_is_one_error(tmp_path: Path) -> None:
    from toolproof.suite._load import MAX_GLOB_DEPTH

    deep = tmp_path / "cases"
    for _ in range(MAX_GLOB_DEPTH + 2):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (tmp_path / "suite.yaml").write_text("suite: s\ncases_from: '**/*.jsonl'\n" + TOOLS + CASES)
    proc = _toolproof(["validate", "suite.yaml"], tmp_path)
    assert proc.returncode == 2 and "cases_from" in proc.stderr, proc.stderr
    assert f"deeper than {MAX_GLOB_DEPTH}" in proc.stderr


@pytest.fixture
def trickle() -> Iterator[int]:
    """A local HTTP server that sends one byte of its body every 0.5 s."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n"
            )
            while not stop.is_set():
                try:
                    conn.sendall(b" ")
                except OSError:
                    return
                time.sleep(0.5)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    stop.set()
    server.close()


def test_tools_import_timeout_is_the_whole_download(tmp_path: Path, trickle: int) -> None:
    start = time.monotonic()
    proc = _toolproof(
        ["tools", "import", f"http://127.0.0.1:{trickle}/openapi.json", "--timeout", "2"],
        tmp_path,
        timeout=60,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert "not downloaded within 2 s" in proc.stderr, proc.stderr
    # a byte every 0.5 s never trips a per-read timeout of 2 s: the old code read
    # all 100,000 bytes (about 14 hours); the deadline ends it after 2 s
    assert elapsed < 50, elapsed

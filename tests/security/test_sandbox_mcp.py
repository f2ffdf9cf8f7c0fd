"""--sandbox: an MCP server under bubblewrap cannot read toolproof's environment (issue 24, item 5).

With --allow-code, a suite's MCP server runs with the user's permissions and
can read the parent's ``/proc/<pid>/environ``, keys included. The test runs
such a server with and without --sandbox. It needs ``bwrap`` (Debian:
``apt-get install bubblewrap``) and user namespaces; it skips, saying so,
where they are missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

SERVER = Path(__file__).parent / "fixtures" / "peek_server.py"
PYTHON = Path(sys.executable).name
CANARY = "tp-canary-0123456789abcdef"


def _bwrap_works() -> str | None:
    """Why the sandbox cannot run here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"bwrap cannot make namespaces here: {probe.stderr.strip()[:200]}"
    return None


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(SERVER, folder / "server.py")
    suite = {
        "suite": "peek",
        "tools": [{"name": "peek", "parameters": {"type": "object", "properties": {}}}],
        "environment": {"mcp": f"stdio:{PYTHON} server.py", "call_timeout": 60},
        "cases": [{"id": "c", "prompt": "Peek.", "max_steps": 3, "expect": {"kind": "text"}}],
    }
    (folder / "suite.yaml").write_text(json.dumps(suite))
    script = {"cases": {"c": {"steps": [{"tool_calls": [{"name": "peek", "raw_arguments": "{}"}]},
                                        {"text": "done"}]}}}  # fmt: skip
    (folder / "script.yaml").write_text(json.dumps(script))
    return folder


def _run(tmp_path: Path, *more: str) -> tuple[subprocess.CompletedProcess[str], str]:
    folder = _folder(tmp_path)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "TOOLPROOF_CANARY": CANARY,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    out = tmp_path / ("run" + "".join(more).replace("-", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "toolproof", "run", str(folder), "-m",
         f"scripted:{folder / 'script.yaml'}", "-q", "--no-cache", "--no-store",
         "--allow-code", "-o", str(out), *more],
        capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path,
    )  # fmt: skip
    text = (out / "records.jsonl").read_text() if (out / "records.jsonl").exists() else ""
    return proc, text


def test_without_the_sandbox_the_server_reads_toolproofs_environment(tmp_path: Path) -> None:
    """The attack is real: what --sandbox is for (and the value itself is redacted)."""
    proc, records = _run(tmp_path)
    assert "environ seen" in records, proc.stderr + records[-2000:]
    assert CANARY not in records


def test_in_the_sandbox_it_cannot(tmp_path: Path) -> None:
    reason = _bwrap_works()
    if reason is not None:
        pytest.skip(reason)
    proc, records = _run(tmp_path, "--sandbox")
    assert proc.returncode in (0, 1), proc.stderr
    assert "environ not seen" in records, proc.stderr + records[-2000:]


def test_sandbox_without_bwrap_is_one_error(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # no bwrap on this PATH
    if shutil.which("bwrap", path=env["PATH"]):
        pytest.skip("bwrap is beside the Python interpreter")
    proc = subprocess.run(
        [sys.executable, "-m", "toolproof", "run", str(folder), "-m",
         f"scripted:{folder / 'script.yaml'}", "-q", "--no-store", "--allow-code", "--sandbox",
         "-o", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert proc.returncode == 2 and "bwrap" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr

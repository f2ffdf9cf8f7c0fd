"""The MCP command check: the command's own program and script, not "some word names a file".

Issue 24 item 6 and issue 26 item 13. A pull request's suite names an MCP
server; with --allow-code the command runs. A file of the folder given as an
extra word must not make a command that runs other code pass.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _suite(folder: Path, command: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "server.py").write_text("print('a server')\n")
    data = {
        "suite": "s",
        "tools": [{"name": "read_file", "parameters": {"type": "object", "properties": {}}}],
        "environment": {"mcp": command},
        "cases": [{"id": "c", "prompt": "Read it.", "max_steps": 3, "expect": {"kind": "text"}}],
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _validate(folder: Path, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ}
    env.pop("TOOLPROOF_CONFIG", None)
    args = [sys.executable, "-m", "toolproof", "validate", str(folder), "--allow-code"]
    if config is not None:
        args += ["--config", str(config)]
    return subprocess.run(args, capture_output=True, text=True, timeout=60, env=env, cwd=folder)


BYPASSES = [
    ("sh-c", 'stdio:sh -c "python3 OUTSIDE/outside.py" server.py', "-c runs code"),
    (
        "python-c",
        "stdio:python3 -c \"import runpy; runpy.run_path('OUTSIDE/x.py')\" server.py",
        "-c runs code",
    ),
    ("python-m", "stdio:python3 -m http.server 0 --directory . server.py", "-m runs code"),
    ("bash-lc", 'stdio:bash -lc "id" server.py', "-lc runs code"),
    ("node-e", 'stdio:node -e "1" server.py', "-e runs code"),
    ("node-require", "stdio:node --require=./server.py other", "--require=./server.py runs code"),
    ("env-wrapper", "stdio:env python3 -c 1 server.py", "does not run a file"),
    ("npx", "stdio:npx -y some-package server.py", "does not run a file"),
]


@pytest.mark.parametrize(("name", "command", "reason"), BYPASSES, ids=[b[0] for b in BYPASSES])
def test_a_file_of_the_folder_as_an_extra_word_does_not_pass(
    tmp_path: Path, name: str, command: str, reason: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = _suite(tmp_path / "suite", command.replace("OUTSIDE", str(outside)))
    proc = _validate(folder)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "environment.mcp" in proc.stderr and reason in proc.stderr, proc.stderr
    assert "trusted_commands" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["stdio:python3 server.py", "stdio:python3 -u server.py"])
def test_the_folders_own_script_still_passes(tmp_path: Path, command: str) -> None:
    proc = _validate(_suite(tmp_path / "suite", command))
    assert proc.returncode == 0, proc.stderr


def test_an_absolute_command_names_trusted_commands(tmp_path: Path) -> None:
    proc = _validate(_suite(tmp_path / "suite", "stdio:/usr/bin/python3 server.py"))
    assert proc.returncode == 2
    assert "absolute path" in proc.stderr and "trusted_commands" in proc.stderr, proc.stderr


@pytest.mark.parametrize("prefix", ["", "stdio:"])
def test_trusted_commands_take_the_entry_with_or_without_the_prefix(
    tmp_path: Path, prefix: str
) -> None:
    folder = _suite(tmp_path / "suite", "stdio:sh -c 'exec python3 server.py'")
    config = tmp_path / "mine.yaml"
    config.write_text(yaml.safe_dump({"trusted_commands": [f"{prefix}sh -c 'exec python3 server.py'"]}))
    assert _validate(folder).returncode == 2
    proc = _validate(folder, config)
    assert proc.returncode == 0, proc.stderr

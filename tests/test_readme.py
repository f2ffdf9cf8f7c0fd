"""Every offline `toolproof` command shown in README.md runs as written.

Commands that need a provider key, a placeholder (RUN, SUITE, ...), the local
model or a user's agent are skipped; the rest run in a scratch folder that sees
the repository's examples, in README order, and must exit as the README says
(a following `# exit N` comment) or with 0.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDS_MORE = re.compile(
    r"openai:|anthropic:|gemini:|openrouter:|--target|local:|replay:runs/support-|"
    r"\b(?:RUN|RUN0|RUN_A|RUN_B|SUITE|PROVIDER|MODEL)\b|\[--"
)


def readme_commands() -> list[tuple[str, int]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    out: list[tuple[str, int]] = []
    for block in blocks:
        lines = block.splitlines()
        for i, line in enumerate(lines):
            command = line.split("  #")[0].strip()
            if not command.startswith("toolproof ") or NEEDS_MORE.search(command):
                continue
            expected = 0
            if i + 1 < len(lines) and (m := re.match(r"# exit (\d)", lines[i + 1].strip())):
                expected = int(m[1])
            out.append((command, expected))
    return out


def test_readme_shows_offline_commands() -> None:
    commands = [c for c, _ in readme_commands()]
    assert any(c.startswith("toolproof validate") for c in commands)
    assert any(c.startswith("toolproof score") for c in commands)
    assert any(c.startswith("toolproof gate") for c in commands)


def test_readme_commands_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "COLUMNS": "120"}
    for key in [k for k in env if k.endswith("_API_KEY")]:
        del env[key]
    for n, (command, expected) in enumerate(readme_commands()):
        argv = shlex.split(command)
        if argv[1] == "run" and "-o" not in argv and "--out" not in argv:
            argv += ["-o", str(tmp_path / "runs" / f"readme-{n}")]
        done = subprocess.run(
            [sys.executable, "-m", "toolproof", *argv[1:], *(["-q"] if argv[1] == "run" else [])],
            cwd=tmp_path, capture_output=True, text=True, env=env, check=False,
        )
        assert "Traceback" not in done.stderr, command
        assert done.returncode == expected, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"

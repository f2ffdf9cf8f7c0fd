"""Read the examples out of the documentation, by the conventions its pages follow.

The pages are README.md and every page of the site (``mkdocs.yml``'s ``nav``, in order).
What a page shows is what the tests run:

- a ```` ```bash ```` block: each line that starts with ``toolproof`` is a command the
  tests run; it must exit 0, or N when the next line is a ``# exit N`` comment.
  A ```` ```sh ```` block is shown and never run (installs, servers, keys);
- a ```` ```console ```` block: each ``$ toolproof ...`` line (and ``$ pytest --toolproof-...``,
  the plugin) is run, and every line
  shown after it (until the next ``$``) must appear in what it printed. Spacing is
  not compared, ``…`` stands for any text within a line, and a line of ``…`` alone
  for any number of lines;
- a ```` ```yaml ```` block right after the comment ``<!-- examples: matchers -->``
  is a list of matcher examples: ``{matcher, value (or omitted: true), passes}``.

Commands that need a provider key, a placeholder (RUN, SUITE, ...), the local model
or a user's agent cannot run here, and are left out (``needs_more``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*examples:\s*([\w-]+)\s*-->\s*$")
NEEDS_MORE = re.compile(
    r"openai:|openai-responses:|anthropic:|gemini:|openrouter:|--target|local:|--judge local|"
    r"replay:runs/support-|"
    r"\b(?:RUN|RUN0|RUN_A|RUN_B|SUITE|PROVIDER|MODEL|SPEC|FILE)\b|\[--"
)
ELLIPSIS = "…"
RUNS = ("toolproof ", "pytest --toolproof-")
"""What a ```console block's `$` lines may run: toolproof, and pytest with its plugin."""


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    marker: str | None


@dataclass
class Command:
    page: Path
    line: int
    command: str
    exit_code: int = 0
    output: list[str] = field(default_factory=list)
    """The lines shown as its output (console blocks); empty: output not checked."""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


def nav_pages() -> list[str]:
    """The site's pages, as ``mkdocs.yml`` lists them (paths inside docs/)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return _nav_pages(config["nav"])


def site_pages() -> list[Path]:
    """The site's written pages in nav order (generated ones are not on disk)."""
    return [DOCS / p for p in nav_pages() if (DOCS / p).exists()]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        line = text.count("\n", 0, m.start()) + 2
        out.append(Block(page, line, m[1], m[2], marker[1] if marker else None))
    return out


def needs_more(command: str) -> bool:
    """A command that cannot run offline here (a key, a placeholder, the local model)."""
    if NEEDS_MORE.search(command):
        return True
    words = command.split()
    # `toolproof run` with no model named runs the bundled local model
    return len(words) > 1 and words[1] == "run" and not (
        {"-m", "--model", "--target"} & set(words)
        or any(w.startswith(("--model=", "--target=")) for w in words)
    )


def commands(page: Path) -> list[Command]:
    """Every command of the page the tests run, in page order."""
    out: list[Command] = []
    for block in blocks(page):
        lines = block.body.splitlines()
        if block.lang == "bash":
            for i, line in enumerate(lines):
                command = line.split("  #")[0].strip()
                if not command.startswith("toolproof ") or needs_more(command):
                    continue
                expected = 0
                if i + 1 < len(lines) and (m := re.match(r"# exit (\d+)", lines[i + 1].strip())):
                    expected = int(m[1])
                out.append(Command(page, block.line + i, command, expected))
        elif block.lang == "console":
            current: Command | None = None
            for i, line in enumerate(lines):
                if line.startswith("$ "):
                    command = line[2:].strip()
                    current = None
                    if command.startswith(RUNS) and not needs_more(command):
                        current = Command(page, block.line + i, command)
                        out.append(current)
                elif current is not None and (m := re.match(r"# exit (\d+)\b", line.strip())):
                    current.exit_code = int(m[1])
                elif current is not None and line.strip():
                    current.output.append(line)
    return out


def matcher_examples(page: Path) -> list[tuple[str, dict[str, object]]]:
    """(where, example) for every matcher example of the page."""
    out = []
    for block in blocks(page):
        if block.marker != "matchers":
            continue
        assert block.lang == "yaml", f"{page}:{block.line}: matcher examples are a yaml block"
        for n, example in enumerate(yaml.safe_load(block.body)):
            out.append((f"{page.relative_to(ROOT)}:{block.line} example {n + 1}", example))
    return out


def _squash(text: str) -> str:
    return " ".join(text.split())


def missing_output(shown: list[str], printed: str) -> list[str]:
    """The shown lines that do not appear, in order, in what was printed."""
    lines = [_squash(line) for line in printed.splitlines()]
    at = 0
    missing = []
    for want in shown:
        want = _squash(want)
        if want == ELLIPSIS:
            continue
        pieces = [p.strip() for p in want.split(ELLIPSIS)]
        for j in range(at, len(lines)):
            if _pieces_in(pieces, lines[j]):
                at = j + 1
                break
        else:
            missing.append(want)
    return missing


def _pieces_in(pieces: list[str], line: str) -> bool:
    pos = 0
    for piece in pieces:
        found = line.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


# ---------------------------------------------------------------- running commands

SERVES = ("toolproof view",)
"""Commands that serve until stopped: run on a free port (``--port 0``), checked
against the lines they print first, then stopped."""


def scratch(tmp_path: Path) -> dict[str, str]:
    """A scratch folder that sees the repository's examples; the environment to run in."""
    import os

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "COLUMNS": "120"}
    for key in [k for k in env if k.endswith("_API_KEY")]:
        del env[key]
    # the history store where a user's would be: .toolproof/ under the (scratch) folder
    env.pop("TOOLPROOF_STORE", None)
    return env


def run_command(command: Command, cwd: Path, env: dict[str, str], n: int) -> str | None:
    """Run one documented command as written; None if it did what the page says, else why."""
    import shlex
    import subprocess
    import sys

    argv = shlex.split(command.command)
    shown = list(command.output)
    if command.command.startswith(SERVES):
        return _serve(command, argv, cwd, env)
    if not shown and argv[1] == "run":
        # as README's checks always did: a run of its own, quietly
        if "-o" not in argv and "--out" not in argv:
            argv += ["-o", str(cwd / "runs" / f"doc-{n}")]
        argv.append("-q")
    program = ["toolproof"] if argv[0] == "toolproof" else ["pytest", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-m", *program, *argv[1:]],
        cwd=cwd, capture_output=True, text=True, env=env, check=False, timeout=600,
    )
    printed = done.stdout + done.stderr
    problems = []
    if "Traceback" in done.stderr:
        problems.append("printed a traceback")
    if done.returncode != command.exit_code:
        problems.append(f"exit {done.returncode}, the page says {command.exit_code}")
    if missing := missing_output(shown, printed):
        problems.append("did not print: " + " / ".join(missing))
    if not problems:
        return None
    return f"{command.where}: {command.command}\n  " + "\n  ".join(problems) + (
        f"\n--- it printed:\n{printed[-3000:]}"
    )


def _serve(command: Command, argv: list[str], cwd: Path, env: dict[str, str]) -> str | None:
    import subprocess
    import sys
    import threading

    shown = [re.sub(r":8765/", f":{ELLIPSIS}/", line) for line in command.output]
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolproof", *argv[1:], "--port", "0"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    printed: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            printed.append(line)
            if not missing_output(shown, "".join(printed)):
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    done.wait(60)
    proc.terminate()
    proc.wait(10)
    if missing := missing_output(shown, "".join(printed)):
        return f"{command.where}: {command.command}\n  did not print: " + " / ".join(missing) + (
            "\n--- it printed:\n" + "".join(printed)[-3000:]
        )
    return None

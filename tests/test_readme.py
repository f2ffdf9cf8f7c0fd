"""Every offline `toolproof` command shown in README.md runs as written, and prints what README shows.

README's conventions are the documentation's (tests/docs/markdown.py): ```bash lines
run and exit 0 or as a following `# exit N` says; ```console blocks also print every
line shown. Commands that need a provider key, a placeholder (RUN, SUITE, ...), the
local model or a user's agent are left out. They run in a scratch folder that sees
the repository's examples, in README order. The site's pages are run the same way by
tests/docs/test_commands.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.markdown import ROOT, commands, run_command, scratch

README = ROOT / "README.md"


def test_readme_shows_offline_commands() -> None:
    shown = [c.command for c in commands(README)]
    assert any(c.startswith("toolproof validate") for c in shown)
    assert any(c.startswith("toolproof score") for c in shown)
    assert any(c.startswith("toolproof gate") for c in shown)
    assert any(c.output for c in commands(README)), "README shows no command's output"


@pytest.mark.slow
def test_readme_commands_run_as_written(tmp_path: Path) -> None:
    env = scratch(tmp_path)
    failures = []
    for n, command in enumerate(commands(README)):
        if (problem := run_command(command, tmp_path, env, n)) is not None:
            failures.append(problem)
    assert failures == [], "\n\n".join(failures)


def test_readme_keeps_the_two_commands() -> None:
    """The two commands a new user and CI run, exactly as they have always read."""
    text = README.read_text(encoding="utf-8")
    assert (
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[local]" && '
        "toolproof run examples/support --allow-code"
    ) in text
    assert (
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]" && python -m pytest'
    ) in text


def test_readme_stays_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 400

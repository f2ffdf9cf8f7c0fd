"""Every offline `toolproof` command shown on the documentation site runs as the page says.

The conventions are in tests/docs/markdown.py: ```bash lines run and exit 0 (or as a
following `# exit N` says); ```console blocks also print every line they show. The
pages run in the site's order, in one scratch folder that sees the repository's
examples, so a page may use what an earlier page made (a run folder, a suite).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.markdown import commands, run_command, scratch, site_pages

COMMANDS = [c for page in site_pages() for c in commands(page)]


def test_the_site_shows_commands_and_their_output() -> None:
    assert len(COMMANDS) >= 20
    assert sum(1 for c in COMMANDS if c.output) >= 3


@pytest.mark.slow
def test_site_commands_run_as_written(tmp_path: Path) -> None:
    env = scratch(tmp_path)
    failures = []
    for n, command in enumerate(COMMANDS):
        if (problem := run_command(command, tmp_path, env, n)) is not None:
            failures.append(problem)
    assert failures == [], "\n\n".join(failures)

"""README's stub-server example (examples/testing/stub_provider.py) runs as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "testing" / "stub_provider.py"


def test_the_stub_server_example_runs_offline_and_passes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("pass lookup: retries ['rate_limited: HTTP 429")
    assert lines[1] == "pass greeting: retries []"
    assert lines[2] == "the stub answered 3 requests; the first sent tools ['lookup_order']"
    assert not any(tmp_path.iterdir())  # it leaves nothing behind


def test_docs_show_the_example() -> None:
    page = (ROOT / "docs" / "providers.md").read_text("utf-8")
    assert "python examples/testing/stub_provider.py" in page
    assert "toolproof.testing" in page

"""Run the toolproof command line in a subprocess, as a user would, with a minimal environment.

The environment keeps only PATH (and PYTHONPATH, when set), a fixed terminal width and the
session's throwaway history store (``TOOLPROOF_STORE``), so no test writes a store into the
checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def toolproof(
    *args: str,
    cwd: Path = ROOT,
    columns: int = 160,
    timeout: float | None = None,
    venv_on_path: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``venv_on_path``: `python` in a suite's command is this interpreter (with the extras)."""
    path = "/usr/bin:/bin"
    if venv_on_path:
        path = os.pathsep.join([str(Path(sys.executable).parent), path])
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env={
            "COLUMNS": str(columns),
            "PATH": path,
            "TOOLPROOF_STORE": os.environ.get("TOOLPROOF_STORE", "off"),
            # the code under test, when it is not the installed one (a source checkout)
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        },
        check=False,
        timeout=timeout,
    )

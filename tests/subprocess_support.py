"""Code run in a fresh interpreter: what it imports starts from nothing there."""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str) -> str:
    """What a new Python process running ``code`` prints (it must exit 0)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout

"""--sandbox hides credential folders that are symbolic links, where they point.

``~/.aws -> /elsewhere/aws`` or ``~/.config/gcloud -> /elsewhere/gcloud``: hiding
the link leaves the folder readable by its real path, so the sandbox hides the
target. The argument lists are checked everywhere; the files are read inside a
real bubblewrap sandbox where ``bwrap`` works (skipped, saying why, elsewhere).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolproof.mcpenv._sandbox import _hiding, sandboxed

SECRET = "aws_secret_access_key = planted-0123456789"


def _home(tmp_path: Path) -> tuple[Path, Path, dict[str, Path]]:
    """A home whose credential folders are links to a folder elsewhere."""
    home, elsewhere, work = tmp_path / "home", tmp_path / "elsewhere", tmp_path / "work"
    for folder in (home / ".config", elsewhere / "aws", elsewhere / "gcloud", work):
        folder.mkdir(parents=True)
    files = {
        "aws": elsewhere / "aws" / "credentials",
        "gcloud": elsewhere / "gcloud" / "credentials.db",
        "netrc": elsewhere / "netrc",
        "ssh": home / ".ssh" / "id_ed25519",
    }
    (home / ".ssh").mkdir()
    for path in files.values():
        path.write_text(SECRET)
    (home / ".aws").symlink_to(elsewhere / "aws")
    (home / ".config" / "gcloud").symlink_to(elsewhere / "gcloud")
    (home / ".netrc").symlink_to(elsewhere / "netrc")
    (home / ".docker").symlink_to(tmp_path / "missing")  # a broken link: nothing to hide
    return home, work, files


def test_link_targets_are_hidden(tmp_path: Path) -> None:
    home, work, _ = _home(tmp_path)
    args = _hiding(home, work)
    hidden = {args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"}
    blanked = {args[i + 2] for i, a in enumerate(args) if a == "--ro-bind"}
    elsewhere = (tmp_path / "elsewhere").resolve()
    assert str(elsewhere / "aws") in hidden
    assert str(elsewhere / "gcloud") in hidden
    assert str(home.resolve() / ".config") in hidden and str(home.resolve() / ".ssh") in hidden
    assert str(elsewhere / "netrc") in blanked
    # a link target is hidden before the folder that held the link
    order = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
    assert order.index(str(elsewhere / "gcloud")) < order.index(str(home.resolve() / ".config"))


def test_a_link_to_the_working_folder_or_home_is_not_hidden(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / ".cache").symlink_to(work)
    (home / ".kube").symlink_to(tmp_path)  # holds both
    assert _hiding(home, work) == []


def _bwrap_works() -> str | None:
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"],
        capture_output=True, text=True, check=False, timeout=30,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"bwrap cannot make namespaces here: {probe.stderr.strip()[:200]}"
    return None


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp (the sandbox's /tmp is private, so it would hide anything)."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    folder = Path(tempfile.mkdtemp(prefix="toolproof-sandbox-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_inside_the_sandbox_no_credential_is_readable(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = _bwrap_works()
    if reason:
        pytest.skip(reason)
    home, work, files = _home(outside_tmp)
    monkeypatch.setenv("HOME", str(home))
    paths = [
        *map(str, files.values()),
        str(home / ".aws" / "credentials"),
        str(home / ".config" / "gcloud" / "credentials.db"),
        str(home / ".netrc"),
    ]
    script = "; ".join(f"cat {p} 2>/dev/null" for p in paths) + "; echo done"
    done = subprocess.run(
        sandboxed(["sh", "-c", script], work), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"  # nothing was read
    # outside the sandbox the same command reads them all
    plain = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert plain.stdout.count(SECRET) == len(paths)

"""``--sandbox``: an MCP server started under bubblewrap (``bwrap``).

With ``--allow-code`` a suite's MCP server runs with the user's permissions:
it can read the user's files, and the environment of toolproof's own process
through ``/proc/<parent pid>/environ`` (API keys included). In the sandbox:

- new user, PID, IPC, UTS, cgroup and network namespaces: the server sees
  only its own processes (``/proc`` is a fresh one), so no other process's
  environment, and it has no network;
- the root file system read-only, a private ``/tmp`` and ``/dev`` (the server
  program's own installation stays visible, read-only, when it lies under
  ``/tmp``), and its working folder (the attempt's temporary copy) the only
  place it can write;
- the usual credential files and folders of the user's home (``~/.ssh``,
  ``~/.aws``, ``~/.config``, ``~/.netrc`` and the like) hidden, where they
  point when they are symbolic links (and where a link directly inside one
  points, such as ``~/.config/gcloud``);
- the server dies with toolproof.

Other files the user can read stay readable. Without ``bwrap`` on PATH,
``--sandbox`` is an error: nothing runs unsandboxed when the user asked
otherwise.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from toolproof.errors import UserError

__all__ = ["HIDDEN", "sandbox_program", "sandboxed"]

#: Paths under the home folder hidden from a sandboxed server (when they exist).
HIDDEN = (
    ".ssh",
    ".aws",
    ".azure",
    ".config",
    ".docker",
    ".gnupg",
    ".kube",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".cache",
)


def sandbox_program() -> str:
    """The path of ``bwrap``, or a :class:`UserError` saying how to get it."""
    found = shutil.which("bwrap")
    if found is None:
        raise UserError(
            "--sandbox needs bubblewrap (bwrap) on PATH, which is not installed here: "
            "install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
            "bubblewrap), or run without --sandbox"
        )
    return found


def sandboxed(argv: list[str], work: Path) -> list[str]:
    """``argv`` run inside a bubblewrap sandbox whose only writable folder is ``work``."""
    folder = str(work.resolve())
    out = [
        sandbox_program(),
        "--unshare-all",  # user, pid, ipc, uts, cgroup and network namespaces
        "--die-with-parent",
        "--new-session",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
    ]  # fmt: skip
    out += _hiding(Path(os.path.expanduser("~")), Path(folder))
    for root in _program_roots(argv):  # a program installed under /tmp stays visible
        out += ["--ro-bind", root, root]
    out += ["--bind", folder, folder, "--chdir", folder, "--", *argv]
    return out


def _hiding(home: Path, work: Path) -> list[str]:
    """bwrap arguments that hide the credential paths of ``home``.

    A path of :data:`HIDDEN` that is a symbolic link (``~/.aws -> /data/aws``) is
    hidden where it points, and so is a link one level inside a hidden folder
    (``~/.config/gcloud -> /srv/creds/gcloud``): hiding the link alone would leave
    the folder it names readable by its own path. A folder is covered by an empty
    one, a file by ``/dev/null``. A target that holds the home folder, the
    working folder or ``/`` is not hidden (the server could not run).
    """
    keep = {Path("/"), home.resolve(), *work.parents, work}
    targets: dict[Path, None] = {}  # in order, each once

    def add(path: Path) -> None:
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a broken link or a loop: nothing to read
            return
        if real not in keep and not any(real in k.parents for k in keep if k != Path("/")):
            targets.setdefault(real)

    for name in HIDDEN:
        path = home / name
        if path.is_dir():
            try:
                links = [c for c in path.iterdir() if c.is_symlink()]
            except OSError:
                links = []
            for link in links:
                add(link)
        add(path)
    # hide where links point first; the folders of HIDDEN (which held the links) last
    out: list[str] = []
    for real in sorted(targets, key=lambda p: len(p.parts), reverse=True):
        out += ["--tmpfs", str(real)] if real.is_dir() else ["--ro-bind", "/dev/null", str(real)]
    return out


def _program_roots(argv: list[str]) -> list[str]:
    """The installation of the server's program when the private ``/tmp`` would hide it:
    its virtual environment (the folder holding ``pyvenv.cfg``), else its own folder.
    Read-only, as the rest of the file system."""
    found = shutil.which(argv[0]) if argv else None
    if found is None:
        return []
    program = Path(os.path.abspath(found))
    if program.parts[:2] != ("/", "tmp"):
        return []
    env = program.parent.parent
    return [str(env if (env / "pyvenv.cfg").is_file() else program.parent)]

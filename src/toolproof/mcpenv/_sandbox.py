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
  ``~/.aws``, ``~/.config``, ``~/.netrc`` and the like) hidden;
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
    home = Path(os.path.expanduser("~"))
    for name in HIDDEN:
        path = home / name
        if path.is_dir() and not path.is_symlink():
            out += ["--tmpfs", str(path)]
        elif path.exists() and not path.is_symlink():
            out += ["--ro-bind", "/dev/null", str(path)]
    for root in _program_roots(argv):  # a program installed under /tmp stays visible
        out += ["--ro-bind", root, root]
    out += ["--bind", folder, folder, "--chdir", folder, "--", *argv]
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

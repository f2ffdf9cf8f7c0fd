"""A throwaway PostgreSQL server for tests: initdb + pg_ctl in a temporary folder.

It listens on a Unix socket in that folder only (no TCP port), trusts local
connections, and is stopped and deleted afterwards. As root, the server runs
as the ``postgres`` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def find_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl, if PostgreSQL's server is installed."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(os.path.realpath(initdb)).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").exists() and Path(folder, "pg_ctl").exists():
            return Path(folder)
    return None


class Server:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="tp-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")
            if runuser is None:
                raise RuntimeError("running as root, and runuser is missing to drop to postgres")
            shutil.chown(self.root, user="postgres")
            self._as = [runuser, "-u", "postgres", "--"]

    def _run(self, *argv: str) -> None:
        done = subprocess.run(
            [*self._as, *argv], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed: {done.stderr.strip()}\n{log}")

    def start(self) -> str:
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "--no-sync", "-E", "UTF8",
        )  # fmt: skip
        options = f"-c listen_addresses='' -k {self.root} -c fsync=off"
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o",
            options, "-w", "-t", "60", "start",
        )  # fmt: skip
        return f"postgresql://postgres@/postgres?host={self.root}"

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

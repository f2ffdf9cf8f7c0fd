"""The llama.cpp server of the local model: a supervised child process on 127.0.0.1.

toolproof starts the server (from the ``xllamacpp`` package) in a child
process on the first request and stops it when the provider closes.

The server never outlives toolproof: the child watches its standard input and
exits when toolproof closes it, or when toolproof dies and the operating
system closes it (also on Ctrl-C or a kill); an ``atexit`` hook stops any
server still running at a normal exit. The child ignores Ctrl-C itself, so
that toolproof decides when it stops.

Environment:
    TOOLPROOF_LOCAL_THREADS   CPU threads for generation (default: see ``default_threads``)
    OMP_WAIT_POLICY           passed to the server; PASSIVE unless set (see ``_serve``)
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolproof.errors import UserError

__all__ = ["RUNTIME", "LocalServer", "ServerOptions", "default_threads"]

RUNTIME = "xllamacpp"
_READY = "TOOLPROOF-LLAMA-READY "
_CTX_PER_SLOT = 8192
#: The server's own cap on generated tokens; a request's max_tokens is lower.
_DEFAULT_MAX_TOKENS = 1024
_STDERR_TAIL = 16_000
_TAIL_LINES = 8
_ERROR_LINE = re.compile(r"^\S+ E ")


def default_threads() -> int:
    """``TOOLPROOF_LOCAL_THREADS``, else the number of usable CPUs (at most 8)."""
    raw = os.environ.get("TOOLPROOF_LOCAL_THREADS", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise UserError(
                f"TOOLPROOF_LOCAL_THREADS must be a whole number, not {raw!r}"
            ) from None
        if value < 1:
            raise UserError(f"TOOLPROOF_LOCAL_THREADS must be at least 1, not {value}")
        return value
    return max(1, min(_usable_cpus(), 8))


def _usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the llama.cpp server is started."""

    model_path: Path
    threads: int
    slots: int = 1
    ctx_per_slot: int = _CTX_PER_SLOT
    max_tokens: int = _DEFAULT_MAX_TOKENS
    start_timeout_s: float = 180.0

    def argv(self) -> list[str]:
        return [
            sys.executable,
            "-P",  # no current folder on sys.path: a local "toolproof" folder cannot shadow us
            "-m",
            __name__,
            "--model",
            str(self.model_path),
            "--threads",
            str(self.threads),
            "--slots",
            str(self.slots),
            "--ctx",
            str(self.ctx_per_slot * self.slots),
            "--max-tokens",
            str(self.max_tokens),
        ]


_LIVE: weakref.WeakSet[LocalServer] = weakref.WeakSet()


def _stop_all_at_exit() -> None:
    for server in list(_LIVE):
        server.stop()


atexit.register(_stop_all_at_exit)


class LocalServer:
    """One server in a child process, bound to 127.0.0.1 on a free port.

    The child prints ``TOOLPROOF-LLAMA-READY <base URL>`` on its standard
    output once it answers, and exits when its standard input closes.
    """

    def __init__(self, argv: Sequence[str], *, start_timeout_s: float = 180.0) -> None:
        self.argv = list(argv)
        self.start_timeout_s = start_timeout_s
        self.base_url: str | None = None
        self.load_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> str:
        """Start the server and wait until it answers; return its base URL."""
        if self.base_url is not None:
            return self.base_url
        started = time.perf_counter()
        # The log lives as long as the server; stop() closes it.
        self._log = tempfile.TemporaryFile(prefix="toolproof-llama-")  # noqa: SIM115
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        _LIVE.add(self)
        try:
            self.base_url = self._wait_ready(started + self.start_timeout_s)
        except BaseException:
            self.stop()
            raise
        self.load_seconds = time.perf_counter() - started
        return self.base_url

    def _wait_ready(self, deadline: float) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        out = self._proc.stdout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.perf_counter()
            if left <= 0:
                raise UserError(
                    f"the local model server did not start within "
                    f"{self.start_timeout_s:g} s{self._stderr_tail()}"
                )
            ready, _, _ = select.select([out], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(out.fileno(), 4096)
                if not chunk:
                    code = self._proc.wait()
                    raise UserError(
                        f"the local model server exited with code {code} before it was ready"
                        f"{self._stderr_tail()}"
                    )
                line += chunk
        text = line.decode().strip()
        if not text.startswith(_READY):
            raise UserError(f"the local model server said {text!r} instead of its address")
        return text[len(_READY) :]

    def _stderr_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - _STDERR_TAIL))
        return _error_lines(self._log.read().decode("utf-8", errors="replace"))

    def memory(self) -> dict[str, int]:
        """The server's resident memory now and at its peak, in bytes (Linux only)."""
        found: dict[str, int] = {}
        if self._proc is None:
            return found
        try:
            lines = Path(f"/proc/{self._proc.pid}/status").read_text().splitlines()
        except OSError:
            return found
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found["rss" if key == "VmRSS" else "peak_rss"] = int(value.split()[0]) * 1024
        return found

    def stop(self, timeout_s: float = 5.0) -> None:
        """Close the child's input (it exits), then terminate or kill it if it lingers."""
        proc, self._proc = self._proc, None
        self.base_url = None
        _LIVE.discard(self)
        if proc is not None:
            _end_process(proc, timeout_s)
        if self._log is not None:
            self._log.close()
            self._log = None


def _error_lines(log: str) -> str:
    """The server log's error lines (llama.cpp marks them `` E ``), else its last lines."""
    lines = [line for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR_LINE.match(line) or line.startswith("toolproof:")]
    shown = errors[-_TAIL_LINES:] if errors else lines[-_TAIL_LINES:]
    return (":\n" + "\n".join(shown)) if shown else ""


def _end_process(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        proc.wait(timeout_s)
        return
    except subprocess.TimeoutExpired:
        proc.terminate()
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# The child process: ``python -m toolproof.providers._local._server --model PATH ...``


def _child_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="toolproof-llama-server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=_CTX_PER_SLOT)
    parser.add_argument("--max-tokens", type=int, default=_DEFAULT_MAX_TOKENS)
    return parser.parse_args(argv)


def _runtime() -> Any:
    return importlib.import_module(RUNTIME)


def _child_params(args: argparse.Namespace) -> Any:
    params = _runtime().CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the server picks a free port and reports it
    params.n_ctx = args.ctx
    params.n_parallel = args.slots
    params.n_predict = args.max_tokens
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True
    params.ui = False
    params.endpoint_slots = False
    return params


def _serve(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the server stops
    # OpenMP threads that spin while they wait collapse when another process holds a
    # core (measured: 4.6 vs 15.1 tokens/s, 2 threads, other core busy). Read at load.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        server = _runtime().Server(_child_params(_child_args(argv)))
    except RuntimeError as exc:
        sys.stderr.write(f"toolproof: the llama.cpp server did not start: {exc}\n")
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.write(_READY + str(server.listening_address) + "\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()  # returns when the parent closes the pipe or dies
    os._exit(0)


if __name__ == "__main__":
    _serve(sys.argv[1:])

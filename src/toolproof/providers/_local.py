"""A real language model on this machine: llama.cpp behind the OpenAI-compatible adapter.

``local:`` runs the bundled Qwen2.5-Coder-0.5B-Instruct (see ``_gguf``);
``local:/path/model.gguf`` runs any GGUF file. toolproof starts a llama.cpp
server (from the ``xllamacpp`` package) in a child process on 127.0.0.1 on the
first request, talks to it through :class:`OpenAICompatibleProvider` like any
other OpenAI-compatible endpoint, and stops it in ``aclose``.

The server never outlives toolproof: the child watches its standard input and
exits when toolproof closes it, or when toolproof dies and the operating
system closes it (also on Ctrl-C or a kill); an ``atexit`` hook stops any
server still running at a normal exit. The child ignores Ctrl-C itself, so
that toolproof decides when it stops.

Small models often print a tool call as JSON instead of emitting a structured
call; the adapter recovers such calls with ``_textcalls`` and marks them
``extracted_from_text``.

Environment:
    TOOLPROOF_LOCAL_THREADS   CPU threads for generation (default: see ``default_threads``)
    TOOLPROOF_CACHE           cache root; assembled models go to ``$TOOLPROOF_CACHE/models``
    OMP_WAIT_POLICY           passed to the server; PASSIVE unless set (see ``_serve``)
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toolproof.errors import UserError
from toolproof.providers._base import Exchange, ModelSettings, Provider, ProviderRequest
from toolproof.providers._gguf import (
    BUNDLED_MODEL,
    ModelMissingError,
    bundled_model_path,
    check_gguf_file,
    ensure_bundled_model,
    locate_parts,
)
from toolproof.providers._textcalls import extract_text_calls
from toolproof.types import Response

if TYPE_CHECKING:
    from toolproof.providers._transport import Transport

__all__ = [
    "LocalProvider",
    "LocalServer",
    "ServerOptions",
    "default_threads",
    "local_model_available",
    "with_text_calls",
]

_RUNTIME = "xllamacpp"
_EXTRA_HINT = "install the local model with: pip install 'toolproof[local]'"
_READY = "TOOLPROOF-LLAMA-READY "
_CTX_PER_SLOT = 8192
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


def _runtime_installed() -> bool:
    return importlib.util.find_spec(_RUNTIME) is not None


def local_model_available() -> bool:
    """True when the ``local`` extra is installed: the runtime and every part of the model."""
    if not _runtime_installed():
        return False
    if bundled_model_path().is_file():
        return True
    try:
        locate_parts()
    except ModelMissingError:
        return False
    return True


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


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(4 * 1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


class LocalProvider(Provider):
    """A GGUF model run by llama.cpp on this machine, with no key and no network."""

    name = "local"

    def __init__(self, model: str, settings: ModelSettings, transport: Transport) -> None:
        if not _runtime_installed():
            raise UserError(f"the local provider needs the {_RUNTIME} package; {_EXTRA_HINT}")
        self.model = model.strip()
        self.settings = settings
        self.transport = transport
        self.bundled = self.model in ("", BUNDLED_MODEL.name)
        # A missing part or file is a clear error now, not at the first request.
        if self.bundled and not bundled_model_path().is_file():
            locate_parts()
        elif not self.bundled:
            check_gguf_file(Path(self.model).expanduser())
        self.threads = default_threads()
        self.server: LocalServer | None = None
        self._inner: Provider | None = None
        self._version: str | None = None
        self._lock = asyncio.Lock()

    def _model_file(self) -> Path:
        runtime = f"{_RUNTIME} {metadata.version(_RUNTIME)}"
        if self.bundled:
            path = ensure_bundled_model()
            self._version = f"{BUNDLED_MODEL.filename} sha256:{BUNDLED_MODEL.sha256} ({runtime})"
            return path
        path = check_gguf_file(Path(self.model).expanduser())
        self._version = f"{path.name} sha256:{_file_sha256(path)} ({runtime})"
        return path

    def _options(self, model_path: Path) -> ServerOptions:
        # One slot, whatever the run's concurrency: concurrent requests queue in the
        # server and all reuse one cached prompt prefix (system prompt and tools).
        # Measured on 2 cores: 11 calls took 25.7 s with one slot, 53.4 s with two.
        return ServerOptions(model_path=model_path, threads=self.threads, slots=1)

    def _start(self) -> LocalServer:
        options = self._options(self._model_file())
        server = LocalServer(options.argv(), start_timeout_s=options.start_timeout_s)
        server.start()
        return server

    async def _adapter(self) -> Provider:
        async with self._lock:
            if self._inner is None:
                self.server = await asyncio.to_thread(self._start)
                self._inner = self._make_adapter(self.server)
            return self._inner

    def _make_adapter(self, server: LocalServer) -> Provider:
        from toolproof.providers._openai_chat import OpenAICompatibleProvider

        assert server.base_url is not None
        settings = self.settings.model_copy(
            update={"base_url": server.base_url + "/v1", "api_key_env": None}
        )
        adapter: Provider = OpenAICompatibleProvider(self.model_id, settings, self.transport)
        return adapter

    @property
    def model_id(self) -> str:
        return BUNDLED_MODEL.name if self.bundled else Path(self.model).name

    async def generate(self, request: ProviderRequest) -> Exchange:
        adapter = await self._adapter()
        exchange = await adapter.generate(request)
        exchange.response = with_text_calls(exchange.response, [t.name for t in request.tools])
        return exchange

    async def aclose(self) -> None:
        server, self.server = self.server, None
        self._inner = None
        if server is not None:
            await asyncio.to_thread(server.stop)

    def model_version(self) -> str | None:
        return self._version


def with_text_calls(response: Response, tools: Collection[str]) -> Response:
    """The response with the calls it printed as text recovered, when it has no structured ones."""
    if response.tool_calls or not response.text:
        return response
    found = extract_text_calls(response.text, tools)
    if not found.calls:
        return response
    return response.model_copy(update={"tool_calls": found.calls, "text": found.text})


# The child process: ``python -m toolproof.providers._local --model PATH ...``


def _child_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="toolproof-llama-server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=_CTX_PER_SLOT)
    parser.add_argument("--max-tokens", type=int, default=_DEFAULT_MAX_TOKENS)
    return parser.parse_args(argv)


def _runtime() -> Any:
    return importlib.import_module(_RUNTIME)


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

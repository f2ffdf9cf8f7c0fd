"""The local provider's machinery, without a model: threads, the server process, text calls."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.providers import ModelSettings
from toolproof.providers._local import (
    LocalServer,
    ServerOptions,
    default_threads,
    with_text_calls,
)
from toolproof.types import Response, ToolCall


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it has exited all the same.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def _child(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(body))
    return [sys.executable, str(script)]


READY_THEN_WAIT = """
    import sys
    print("TOOLPROOF-LLAMA-READY http://127.0.0.1:9", flush=True)
    sys.stdin.buffer.read()
"""


def test_threads_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPROOF_LOCAL_THREADS", "1")
    assert default_threads() == 1
    monkeypatch.setenv("TOOLPROOF_LOCAL_THREADS", "two")
    with pytest.raises(UserError, match="whole number"):
        default_threads()
    monkeypatch.setenv("TOOLPROOF_LOCAL_THREADS", "0")
    with pytest.raises(UserError, match="at least 1"):
        default_threads()
    monkeypatch.delenv("TOOLPROOF_LOCAL_THREADS")
    assert 1 <= default_threads() <= 8


def test_the_server_command_carries_the_options() -> None:
    argv = ServerOptions(model_path=Path("/m.gguf"), threads=3, slots=2, ctx_per_slot=100).argv()
    assert argv[:4] == [sys.executable, "-P", "-m", "toolproof.providers._local._server"]
    joined = " ".join(argv)
    assert "--model /m.gguf" in joined
    assert "--threads 3" in joined
    assert "--ctx 200" in joined
    assert "--slots 2" in joined


def test_server_reports_its_address_and_stops_when_its_input_closes(tmp_path: Path) -> None:
    server = LocalServer(_child(tmp_path, READY_THEN_WAIT), start_timeout_s=30)
    assert server.start() == "http://127.0.0.1:9"
    pid = server.pid
    assert pid is not None and _alive(pid)
    server.stop()
    assert not _alive(pid)
    assert server.pid is None and server.base_url is None


def test_a_server_that_ignores_its_input_is_terminated(tmp_path: Path) -> None:
    stubborn = """
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("TOOLPROOF-LLAMA-READY http://127.0.0.1:9", flush=True)
        time.sleep(600)
    """
    server = LocalServer(_child(tmp_path, stubborn), start_timeout_s=30)
    server.start()
    pid = server.pid
    assert pid is not None
    started = time.perf_counter()
    server.stop(timeout_s=0.5)
    assert not _alive(pid)
    assert time.perf_counter() - started < 10


def test_a_server_that_dies_at_start_shows_its_error(tmp_path: Path) -> None:
    dies = """
        import sys
        print("error: failed to load model 'x.gguf'", file=sys.stderr)
        sys.exit(3)
    """
    server = LocalServer(_child(tmp_path, dies), start_timeout_s=30)
    with pytest.raises(UserError, match=r"exited with code 3(.|\n)*failed to load model"):
        server.start()
    assert server.pid is None


def test_a_server_that_never_gets_ready_times_out_and_is_stopped(tmp_path: Path) -> None:
    silent = """
        import sys
        sys.stdin.buffer.read()
    """
    server = LocalServer(_child(tmp_path, silent), start_timeout_s=0.5)
    with pytest.raises(UserError, match=r"did not start within 0\.5 s"):
        server.start()
    assert server.pid is None


def test_the_server_dies_with_its_parent(tmp_path: Path) -> None:
    """Kill the parent with SIGKILL: the server must exit on its own."""
    child_cmd = _child(tmp_path, READY_THEN_WAIT)
    pid_file = tmp_path / "pid"
    parent = tmp_path / "parent.py"
    parent.write_text(
        textwrap.dedent(
            f"""
            import time
            from pathlib import Path
            from toolproof.providers._local import LocalServer
            server = LocalServer({child_cmd!r}, start_timeout_s=30)
            server.start()
            Path({str(pid_file)!r}).write_text(str(server.pid))
            time.sleep(600)
            """
        )
    )
    import subprocess

    proc = subprocess.Popen([sys.executable, str(parent)])
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the parent did not start its server"
            time.sleep(0.05)
        server_pid = int(pid_file.read_text())
        assert _alive(server_pid)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while _alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(server_pid)


def test_printed_calls_are_recovered_only_without_structured_ones() -> None:
    printed = '{"name": "lookup_order", "arguments": {"order_id": "ORD-1"}}'
    out = with_text_calls(Response(text=printed, raw={"x": 1}), ["lookup_order"])
    assert [c.name for c in out.tool_calls] == ["lookup_order"]
    assert out.tool_calls[0].extracted_from_text
    assert out.text is None
    assert out.raw == {"x": 1}  # the raw payload still shows what was printed

    structured = Response(text=printed, tool_calls=[ToolCall(name="cancel_order")])
    assert with_text_calls(structured, ["lookup_order"]) is structured
    plain = Response(text="Hello!")
    assert with_text_calls(plain, ["lookup_order"]) is plain


@pytest.mark.parametrize("spec", ["local:typo", "local:qwen", "local:gpt-4.1-mini"])
def test_a_local_spec_that_names_no_model_says_what_local_accepts(spec: str) -> None:
    from toolproof.providers import ModelSettings, create_provider

    with pytest.raises(UserError) as err:
        create_provider(spec, ModelSettings(), None)  # type: ignore[arg-type]
    message = str(err.value)
    assert "does not exist" not in message
    assert "'local:' takes nothing (the bundled model)" in message
    assert "'local:qwen2.5-coder-0.5b-instruct'" in message and ".gguf" in message


def test_a_local_path_that_does_not_exist_is_named(tmp_path: Path) -> None:
    from toolproof.providers import ModelSettings, create_provider
    from toolproof.providers._local._adapter import _runtime_installed

    if not _runtime_installed():
        pytest.skip("the llama.cpp runtime is not installed")
    with pytest.raises(UserError, match="does not exist"):
        create_provider(f"local:{tmp_path / 'none.gguf'}", ModelSettings(), None)  # type: ignore[arg-type]


def test_local_defaults_are_deterministic_and_bounded() -> None:
    from toolproof.providers import ModelSettings, ProviderRequest
    from toolproof.providers._base import with_defaults
    from toolproof.providers._local import LocalProvider
    from toolproof.providers._openai_chat import OpenAICompatibleProvider
    from toolproof.types import Message

    settings = with_defaults(ModelSettings(), LocalProvider.default_settings)
    assert (settings.temperature, settings.seed, settings.max_tokens) == (0.0, 0, 256)
    assert settings.timeout_s >= 300 and settings.attempt_seconds and settings.attempt_tokens
    mine = with_defaults(
        ModelSettings.model_validate({"temperature": 0.7, "max_tokens": 64}),
        LocalProvider.default_settings,
    )
    assert (mine.temperature, mine.seed, mine.max_tokens) == (0.7, 0, 64)
    adapter = OpenAICompatibleProvider(
        "m", settings.model_copy(update={"base_url": "http://x"}), None
    )  # type: ignore[arg-type]
    payload = adapter.build_payload(
        ProviderRequest(
            model="m", messages=[Message(role="user", content="hi")], tools=[], settings=settings
        )
    )
    assert (payload["temperature"], payload["seed"], payload["max_tokens"]) == (0.0, 0, 256)


@pytest.mark.asyncio
async def test_prepare_starts_the_server_once_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from toolproof.providers._local import LocalProvider

    class FakeServer:
        base_url = "http://127.0.0.1:9"
        load_seconds = 12.4

    provider = object.__new__(LocalProvider)  # no runtime or model file needed here
    provider.model, provider.bundled, provider.transport = "", True, None
    provider.settings = ModelSettings()
    provider.server, provider._inner, provider._lock = None, None, asyncio.Lock()
    started: list[int] = []
    monkeypatch.setattr(provider, "_start", lambda: started.append(1) or FakeServer())
    notes: list[str] = []
    await provider.prepare(notes.append)
    await provider.prepare(notes.append)  # already running: nothing to say
    assert started == [1]
    assert notes[0].startswith("starting the model server and loading the model")
    assert notes[1].startswith("model loaded in 12 s; the first answer reads the prompt")
    assert len(notes) == 2

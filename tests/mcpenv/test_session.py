"""A real MCP server as an attempt's environment: fresh copy, per-call timeout, every call kept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.mcpenv import McpEnvironmentSpec, McpSession

pytest.importorskip("mcp", reason="the mcp extra is not installed")

SERVER = Path(__file__).parent / "servers" / "files_server.py"


def _spec(workdir: Path, **kwargs: float) -> McpEnvironmentSpec:
    return McpEnvironmentSpec.parse(f"stdio:{sys.executable} {SERVER}", workdir, **kwargs)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "hello.txt").write_text("hello from the suite")
    return folder


async def test_refuses_to_run_code_without_the_opt_in(workdir: Path) -> None:
    with pytest.raises(UserError, match="run real code: allow it explicitly"):
        async with McpSession(_spec(workdir)):
            pass


async def test_calls_run_in_a_private_copy_that_is_removed(workdir: Path) -> None:
    async with McpSession(_spec(workdir), allow_code=True) as env:
        read = await env.call("read_file", {"path": "hello.txt"})
        wrote = await env.call("write_file", {"path": "new.txt", "text": "abc"})
        again = await env.call("read_file", {"path": "new.txt"})
        folder = env.folder
        assert folder is not None and (folder / "work" / "new.txt").is_file()
    assert read.result is not None and read.result["content"][0]["text"] == "hello from the suite"
    assert not read.failed and not wrote.failed
    assert again.result is not None and again.result["content"][0]["text"] == "abc"
    assert not (workdir / "new.txt").exists()  # the suite's folder is untouched
    assert not folder.exists()  # the copy is gone
    assert [c.tool for c in env.calls] == ["read_file", "write_file", "read_file"]
    assert all(c.duration_ms > 0 for c in env.calls)


async def test_each_session_starts_from_the_original_folder(workdir: Path) -> None:
    async with McpSession(_spec(workdir), allow_code=True) as first:
        await first.call("write_file", {"path": "hello.txt", "text": "changed"})
    async with McpSession(_spec(workdir), allow_code=True) as second:
        read = await second.call("read_file", {"path": "hello.txt"})
    assert read.result is not None and read.result["content"][0]["text"] == "hello from the suite"


async def test_a_failing_tool_is_recorded_not_raised(workdir: Path) -> None:
    async with McpSession(_spec(workdir), allow_code=True) as env:
        boom = await env.call("explode", {})
        after = await env.call("read_file", {"path": "hello.txt"})
    assert boom.is_error and boom.failed
    assert boom.result is not None
    assert boom.result["content"][0]["text"] == "Error executing tool explode"
    assert not after.failed  # the server is still there


async def test_a_slow_call_times_out_and_is_recorded(workdir: Path) -> None:
    async with McpSession(_spec(workdir, call_timeout_s=0.5), allow_code=True) as env:
        slow = await env.call("slow", {"seconds": 5})
    assert slow.timed_out and slow.failed
    assert slow.error == "no answer within 0.5 s"
    assert 400 < slow.duration_ms < 5000


async def test_a_server_that_does_not_start_is_one_clear_error(workdir: Path) -> None:
    spec = McpEnvironmentSpec.parse(f"stdio:{sys.executable} -c 'raise SystemExit(3)'", workdir)
    with pytest.raises(UserError, match="did not start"):
        async with McpSession(spec, allow_code=True):
            pass


def test_only_stdio_servers() -> None:
    with pytest.raises(UserError, match="stdio:COMMAND"):
        McpEnvironmentSpec.parse("python server.py", Path("."))


async def test_the_server_does_not_see_the_users_api_keys(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-server")
    async with McpSession(_spec(workdir), allow_code=True) as env:
        key = await env.call("getenv", {"name": "OPENAI_API_KEY"})
        path = await env.call("getenv", {"name": "PATH"})
    assert key.answer().content == "(unset)"
    assert path.answer().content not in ("", "(unset)")


def test_what_the_model_reads_and_the_state_a_call_gives() -> None:
    from toolproof.mcpenv import McpCall

    text = {"type": "text", "text": "hi"}
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    both = McpCall("t", {}, result={"content": [text, image]})
    assert both.answer().content == 'hi\n{"data": "AAAA", "mimeType": "image/png", "type": "image"}'
    failed = McpCall("t", {}, result={"content": [text], "isError": True}, is_error=True)
    assert failed.answer().is_error and failed.state() is None
    late = McpCall("slow", {}, error="no answer within 2 s", timed_out=True)
    assert late.answer().fault == "timeout" and late.state() is None
    wrapped = McpCall("s", {}, result={"content": [], "structuredContent": {"result": [1, 2]}})
    assert wrapped.state() == [1, 2]
    assert wrapped.answer().content == '{"result": [1, 2]}'
    plain = McpCall("s", {}, result={"content": [{"type": "text", "text": '{"a": 1}'}]})
    assert plain.state() == {"a": 1}
    prose = McpCall("s", {}, result={"content": [{"type": "text", "text": "all good"}]})
    assert prose.state() == "all good"


async def test_a_server_that_dies_turns_each_later_call_into_an_error(workdir: Path) -> None:
    async with McpSession(_spec(workdir, call_timeout_s=20), allow_code=True) as env:
        died = await env.call("crash", {})
        after = await env.call("read_file", {"path": "hello.txt"})
    assert died.error is not None and "Connection closed" in died.error and not died.timed_out
    assert after.failed and not after.timed_out and after.duration_ms < 10_000
    assert after.answer().is_error

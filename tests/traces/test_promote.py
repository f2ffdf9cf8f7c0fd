"""traces promote on a pseudo-terminal: shown escaped, negative feedback first, resumable."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from toolproof.suite import load_suite_checked
from toolproof.traces import Redactor, import_traces


def _trace(n: int, text: str, tool: str | None, feedback: int) -> str:
    trace, span = f"{n:032x}", f"{n:016x}"
    out = (
        [{"type": "tool_call", "id": f"c{n}", "name": tool, "arguments": {"order_id": f"A-{n}"}}]
        if tool
        else [{"type": "text", "content": "ok"}]
    )
    attrs = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": text}]}])}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
            [{"role": "assistant", "parts": out}])}},
        {"key": "gen_ai.tool.definitions", "value": {"stringValue": json.dumps(
            [{"type": "function", "name": "lookup", "description": "Find an order.",
              "parameters": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                              "email": {"type": "string"}}}}])}},
        {"key": "feedback.score", "value": {"intValue": str(feedback)}},
    ]  # fmt: skip
    span_obj = {"traceId": trace, "spanId": span, "name": "chat", "attributes": attrs,
                "startTimeUnixNano": str(1764400000000000000 + n)}  # fmt: skip
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span_obj]}]}]})


def _session(folder: Path, args: list[str], answers: list[str]) -> str:
    """``toolproof traces promote ARGS`` on a pseudo-terminal, answering each prompt."""
    import pty
    import select
    import time

    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(folder)
        os.execvpe(
            sys.executable, [sys.executable, "-m", "toolproof", "traces", "promote", *args], env
        )
    seen = b""
    pending = list(answers)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            plain = re.sub(rb"\x1b\[[0-9;]*m", b"", seen)
            if pending and plain.rstrip().endswith(b"):"):
                os.write(fd, (pending.pop(0) + "\n").encode())
                seen += b"\n"
    else:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))


def test_review_promote_and_resume_on_a_terminal(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(
        "\n".join(
            [
                _trace(1, "Where is A-1? [red]x[/red] \x1b[31m", "lookup", 1),
                _trace(2, "Where is my order? It is late!", "lookup", -1),
                _trace(3, "Hello", None, 1),
            ]
        )
        + "\n"
    )
    folder = tmp_path / "imp"
    import_traces([src], folder, label="p", redactor=Redactor())
    golden = tmp_path / "golden"
    golden.mkdir()
    into = golden / "production-cases.jsonl"

    first = _session(
        tmp_path,
        [str(folder), "--into", str(golden), "--reviewer", "ana"],
        ["r", "c", "lookup", '{"order_id": "A-1", "email": "jan.novak@seznam.cz"}', "q"],
    )
    assert "1/3" in first and "feedback -1" in first.split("2/3")[0]  # negative first
    assert "[red]x[/red]" in first and "\\u001b[31m" in first  # shown, never interpreted
    assert "promoted 2 case(s)" in first and "1 left to review" in first
    promoted = [json.loads(x) for x in into.read_text().splitlines()]
    assert [p["tags"] for p in promoted] == [
        ["from-production", "reviewed-right"],
        ["from-production", "reviewed-corrected"],
    ]
    assert promoted[0]["expect"]["calls"][0]["args"] == {"order_id": "A-2"}
    corrected = promoted[1]["expect"]["calls"][0]["args"]
    assert corrected["email"] == "user1@example.com"  # the reviewer's text is redacted too
    assert "jan.novak" not in into.read_text() + (folder / "reviews.jsonl").read_text()
    prov = [
        json.loads(x)
        for x in (golden / "production-cases.provenance.jsonl").read_text().splitlines()
    ]
    assert [p["review"]["reviewer"] for p in prov] == ["ana", "ana"] and prov[0]["trace_id"]

    second = _session(tmp_path, [str(folder), "--into", str(golden)], ["w"])
    assert "1/1" in second and "promoted 0 case(s)" in second and "1 marked wrong" in second
    assert len((folder / "reviews.jsonl").read_text().splitlines()) == 3

    (golden / "suite.yaml").write_text(
        "suite: golden\ntools: []\ncases_from: production-cases.jsonl\n"
    )
    loaded, problems = load_suite_checked(golden)
    assert problems == [] and len(loaded.suite.cases) == 2


def test_promote_refuses_without_a_terminal(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolproof.cli._app import app

    result = CliRunner().invoke(app, ["traces", "promote", str(tmp_path), "--into", str(tmp_path)])
    assert result.exit_code != 0


def _imported(tmp_path: Path) -> Path:
    tmp_path.mkdir(exist_ok=True)
    src = tmp_path / "t.jsonl"
    src.write_text(_trace(1, "Where is A-1?", "lookup", 1) + "\n")
    folder = tmp_path / "imp"
    import_traces([src], folder, label="p", redactor=Redactor())
    return folder


def _promote(folder: Path, into: Path, reviewer: str = "ana") -> object:
    import io

    from rich.console import Console

    from toolproof.traces import promote

    return promote(
        folder,
        into,
        reviewer=reviewer,
        console=Console(file=io.StringIO()),
        redactor=Redactor(),
        ask=lambda _console, _prompt: "r",
    )


def test_into_a_missing_folder_makes_the_folder(tmp_path: Path) -> None:
    folder = _imported(tmp_path)
    golden = tmp_path / "golden"  # `--into golden/`: the shell's trailing slash is gone
    _promote(folder, golden)
    assert (golden / "production-cases.jsonl").is_file()
    assert (golden / "production-cases.provenance.jsonl").is_file()
    assert not (tmp_path / "golden.provenance.jsonl").exists()
    _promote(_imported(tmp_path / "b"), tmp_path / "cases.jsonl")  # a .jsonl is the file
    assert (tmp_path / "cases.jsonl").is_file() and (tmp_path / "cases.provenance.jsonl").is_file()


def test_into_a_users_file_or_under_one_is_refused_before_any_question(tmp_path: Path) -> None:
    import pytest

    from toolproof.errors import UserError

    folder = _imported(tmp_path)
    mine = tmp_path / "notes.txt"
    mine.write_text("keep")
    for into in (mine, mine / "golden", mine / "cases.jsonl"):
        with pytest.raises(UserError, match="--into"):
            _promote(folder, into)
    assert mine.read_text() == "keep"
    assert not (folder / "reviews.jsonl").exists()  # no review given for an unwritable case


def test_the_reviewers_name_is_redacted_in_every_file_written(tmp_path: Path) -> None:
    folder = _imported(tmp_path)
    golden = tmp_path / "golden"
    _promote(folder, golden, reviewer="jane.doe@corp.example.net")
    written = [golden / "production-cases.jsonl", golden / "production-cases.provenance.jsonl"]
    for path in [*written, folder / "reviews.jsonl"]:
        text = path.read_text()
        assert "jane.doe" not in text and "@example.com" in text, path


def test_a_folder_without_provenance_or_with_a_damaged_line_is_a_located_error(
    tmp_path: Path,
) -> None:
    import pytest

    from toolproof.errors import UserError

    folder = _imported(tmp_path)
    prov = folder / "provenance.jsonl"
    prov.write_text(prov.read_text() + '{"case_id": "x", "cut\n')
    with pytest.raises(UserError, match=r"provenance\.jsonl:2: not a provenance line"):
        _promote(folder, tmp_path / "golden")
    prov.unlink()
    with pytest.raises(UserError, match=r"no provenance\.jsonl"):
        _promote(folder, tmp_path / "golden")

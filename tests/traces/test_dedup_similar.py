"""traces import --dedup-similar: near-duplicates by sentence embeddings (the semantic extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.match import semantic_missing
from toolproof.traces import Redactor, Selection, import_traces

needs_model = pytest.mark.skipif(semantic_missing() is not None, reason=semantic_missing() or "")

#: (user's words, the tool production called or None), in trace order.
ASKED = [
    ("Where is my order?", None),
    ("Where is my order??", None),  # the same once normalised: --dedup drops it
    ("where is my order", None),  # the same once normalised
    ("Where's my order?", None),  # other words, same meaning: only embeddings drop it
    ("Please cancel my subscription.", None),
    ("Cancel my subscription please", None),  # other order, same meaning
    ("What is the weather in Prague tomorrow?", None),
    ("Can you reset my password?", None),
    ("Where is my order?", "lookup"),  # same words, other tools: never compared
]


def _traces(path: Path) -> Path:
    lines = []
    for n, (text, tool) in enumerate(ASKED, 1):
        out = (
            [{"type": "tool_call", "id": f"c{n}", "name": tool, "arguments": {}}]
            if tool
            else [{"type": "text", "content": "Let me check."}]
        )
        attrs = [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                [{"role": "system", "parts": [{"type": "text", "content": "You help."}]},
                 {"role": "user", "parts": [{"type": "text", "content": text}]}])}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                [{"role": "assistant", "parts": out}])}},
        ]  # fmt: skip
        span = {"traceId": f"{n:032x}", "spanId": f"{n:016x}", "name": "chat",
                "startTimeUnixNano": str(1764400000_000000000 + n), "attributes": attrs}  # fmt: skip
        lines.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _users(out: Path) -> list[str]:
    cases = [json.loads(x) for x in (out / "cases.jsonl").read_text().splitlines()]
    return [m["content"] for c in cases for m in c["messages"] if m["role"] == "user"]


@needs_model
def test_embeddings_drop_what_means_the_same_and_the_report_says_how(tmp_path: Path) -> None:
    src = _traces(tmp_path / "t.jsonl")
    plain = import_traces([src], tmp_path / "plain", label="t", redactor=Redactor(),
                          selection=Selection(dedup=True))  # fmt: skip
    assert plain.duplicates == 2 and plain.cases == 7
    report = import_traces(
        [src], tmp_path / "out", label="t", redactor=Redactor(),
        selection=Selection(dedup=True, similar=0.9),
    )  # fmt: skip
    data = report.as_json(Redactor())
    assert data["near_duplicates_removed"] == 4 and data["replay_cases"] == 5
    assert data["near_duplicates_by"] == {"normalised text": 2, "embeddings (cosine >= 0.9)": 2}
    # the first of each meaning is kept; the same words with other tools are another case
    assert _users(tmp_path / "out") == [
        "Where is my order?",
        "Please cancel my subscription.",
        "What is the weather in Prague tomorrow?",
        "Can you reset my password?",
        "Where is my order?",
    ]
    # decisions still count every chat span: drift sees all traffic
    assert len((tmp_path / "out" / "decisions.jsonl").read_text().splitlines()) == len(ASKED)


@needs_model
def test_cli_prints_the_count_by_method(tmp_path: Path) -> None:
    src = _traces(tmp_path / "t.jsonl")
    args = ["traces", "import", str(src), "-o", str(tmp_path / "o"), "--dedup-similar", "0.9"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    line = "near-duplicates removed: 4 (normalised text 0, embeddings (cosine >= 0.9) 4)"
    assert line in result.output
    bad = CliRunner().invoke(app, [*args[:-1], "1.5", "--force"])
    assert isinstance(bad.exception, UserError) and "(0, 1]" in str(bad.exception)


def test_without_the_semantic_extra_the_error_names_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolproof.providers._embedding._model as model

    monkeypatch.setattr(model, "semantic_missing", lambda: "install toolproof[semantic]")
    src = _traces(tmp_path / "t.jsonl")
    with pytest.raises(UserError, match=r"install toolproof\[semantic\]"):
        import_traces([src], tmp_path / "o", label="t", redactor=Redactor(),
                      selection=Selection(similar=0.9))  # fmt: skip
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())

"""``toolproof generate`` with a scripted generator: verified, deduplicated, cached, reviewed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.generate import DEFAULT_MIX, extract_json, generate_cases, parse_mix, plan_slots
from toolproof.types import SuiteTool

runner = CliRunner()

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather forecast for a city on a date.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "date": {"type": "string", "format": "date"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
    {
        "name": "delete_file",
        "description": "Delete a file.",
        "effect": "destructive",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
]
CITIES = ["Prague", "Brno", "Ostrava", "Plzeň", "Olomouc", "Liberec", "Zlín", "Kladno", "Most"]


def _words(n: int) -> str:
    """Text unlike any other n's (so only the duplicate planted on purpose is one)."""
    import hashlib

    digest = hashlib.sha256(str(n).encode()).hexdigest()
    return " ".join(digest[i : i + 5] for i in range(0, 40, 5))


def _tools() -> list[SuiteTool]:
    return [SuiteTool.model_validate(t) for t in TOOLS]


def _script(path: Path, tools: list[SuiteTool] | None = None) -> dict[str, Any]:
    """An answer per slot: good ones, plus prose, an unknown tool, a schema break, a duplicate."""
    cases: dict[str, Any] = {}
    slots = plan_slots(tools or _tools(), DEFAULT_MIX)
    for n, slot in enumerate(slots):
        if slot.kind in ("positive", "confusion"):
            tool = slot.neighbour if slot.kind == "confusion" else slot.tool
            args = (
                {"city": CITIES[n % len(CITIES)]}
                if tool == "get_weather"
                else {"path": f"/tmp/f{n}.txt"}
            )
            answer: Any = {
                "prompt": f"Request {_words(n)} about {args}",
                "call": {"name": tool, "arguments": args},
            }
        else:
            answer = {"prompt": f"A {slot.kind} request: {_words(n)}"}
        cases[slot.id] = {"text": json.dumps(answer, ensure_ascii=False)}
    positive = [s.id for s in slots if s.kind == "positive"]
    cases[positive[0]] = {"text": "Sure! Here is a nice case for you."}
    cases[positive[1]] = {
        "text": json.dumps({"prompt": "Ping", "call": {"name": "ping_host", "arguments": {}}})
    }
    cases[positive[2]] = {
        "text": "```json\n"
        + json.dumps(
            {
                "prompt": "Weather",
                "call": {"name": "get_weather", "arguments": {"unit": "kelvin", "city": "X"}},
            }
        )
        + "\n```"
    }
    # a near duplicate of the fourth positive case's request
    fourth = json.loads(cases[positive[3]]["text"])
    fifth = json.loads(cases[positive[4]]["text"])
    fifth["prompt"] = fourth["prompt"] + "!"
    cases[positive[4]] = {"text": json.dumps(fifth, ensure_ascii=False)}
    path.write_text(yaml.safe_dump({"cases": cases}, allow_unicode=True), encoding="utf-8")
    return cases


def test_plan_has_every_kind_and_an_edge_share() -> None:
    slots = plan_slots(_tools(), DEFAULT_MIX)
    kinds = {(s.tool, s.kind) for s in slots}
    assert ("delete_file", "confirm") in kinds and ("get_weather", "confirm") not in kinds
    assert ("get_weather", "clarify") in kinds and ("get_weather", "confusion") in kinds
    edges = [s for s in slots if s.edge]
    assert 0.3 <= len(edges) / len(slots) <= 0.4
    weather_edges = {s.edge for s in edges if s.tool == "get_weather"}
    assert {"lang:cs", "lang:ru", "lang:zh"} <= weather_edges
    assert len({s.id for s in slots}) == len(slots)
    fewer = plan_slots(_tools(), parse_mix(["edge=0", "positive=1"]))
    assert not any(s.edge for s in fewer)


def test_bad_mix_is_a_user_error() -> None:
    for item in ("edge=2", "positive=-1", "bogus=1", "positive=x", "positive"):
        with pytest.raises(UserError, match="--mix"):
            parse_mix([item])


def test_extract_json_reads_objects_and_refuses_prose() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Here:\n```json\n{"a": 2}\n```') == {"a": 2}
    assert extract_json('Sure, {"a": 3} is it') == {"a": 3}
    assert extract_json("no json here") is None
    assert extract_json("[1, 2]") is None


def test_generate_verifies_dedupes_and_counts(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    _script(script)
    result = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX, cache=tmp_path / "c")
    c = result.counts
    assert (c["not_json"], c["unknown_tool"], c["schema"], c["duplicate"]) == (1, 1, 1, 1)
    assert c["kept"] == c["asked"] - 4 == len(result.cases)
    reasons = dict(result.skipped)
    assert any("unknown tool 'ping_host'" in r for r in reasons.values())
    assert any("'kelvin' is not one of" in r or "kelvin" in r for r in reasons.values())
    for case in result.cases:
        assert case["generated"]["status"] == "needs-review"
        assert case["generated"]["by"] == f"scripted:{script}"
    kinds = {tuple(case["tags"][:2]) for case in result.cases}
    assert ("generated", "confirm") in kinds and ("generated", "no-call") in kinds
    confusion = next(c for c in result.cases if "confusion" in c["tags"])
    assert confusion["expect"]["forbidden"] == ["get_weather"]
    assert result.meta["seed"] == 0 and result.meta["prompts"]


def test_cli_end_to_end_with_the_cache_and_review_gate(tmp_path: Path) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {k: t[k] for k in ("name", "description", "parameters")},
                }
                for t in TOOLS
            ]
        ),
        encoding="utf-8",
    )
    script = tmp_path / "script.yaml"
    from toolproof.importers import import_tools

    _script(script, import_tools(str(tools_file)).tools)  # the tools as the command reads them
    out = tmp_path / "gen" / "cases.jsonl"
    args = [
        "generate",
        "--tools",
        str(tools_file),
        "--model",
        f"scripted:{script}",
        "-o",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "1 not JSON, 1 unknown tool, 1 breaking the schema" in first.output
    assert "1 near duplicates removed" in first.output
    lines = out.read_text(encoding="utf-8").splitlines()
    meta = json.loads((out.parent / "cases.generation.json").read_text(encoding="utf-8"))
    assert meta["model"] == f"scripted:{script}" and meta["counts"]["kept"] == len(lines)
    # the written suite validates and counts the cases still to review
    checked = runner.invoke(app, ["validate", str(out.parent)])
    assert checked.exit_code == 0, checked.output
    assert f"review: {len(lines)} generated case(s) still marked needs-review" in checked.output
    covered = runner.invoke(app, ["coverage", str(out.parent)])
    assert covered.exit_code == 0 and "delete_file" in covered.output
    # a scripted model's answers are not cached: a re-run reads the script as it is now
    script.write_text(yaml.safe_dump({"default": {"text": "prose"}}), encoding="utf-8")
    refused = runner.invoke(app, args)
    assert refused.exit_code != 0  # the cases file exists
    again = runner.invoke(app, [*args, "--force"])
    assert again.exit_code == 0, again.output
    asked = meta["counts"]["asked"]
    assert f"{asked} asked, 0 kept" in again.output and f"{asked} not JSON" in again.output
    assert "0 from the cache (a scripted or replayed model's answers are not cached)" in (
        again.output
    )
    assert not (tmp_path / "cache").exists()


def test_a_scripted_generator_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    """The script is the model: an edited script (or another script of the same name)
    must not be answered with what an earlier script said, so, as in a run, answers from
    a scripted model are neither cached nor read from the cache."""
    script = tmp_path / "script.yaml"
    _script(script)
    cache = tmp_path / "c"
    first = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX, cache=cache)
    assert first.counts["kept"] > 0 and first.model_calls == first.counts["asked"]
    script.write_text(yaml.safe_dump({"default": {"text": "prose"}}), encoding="utf-8")
    again = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX, cache=cache)
    assert again.cache_hits == 0 and again.model_calls == again.counts["asked"]
    assert again.counts["kept"] == 0 and again.counts["not_json"] == again.counts["asked"]
    assert not again.cached and first.cached is False


def test_a_generator_s_answers_come_from_the_cache_on_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that is cached is asked once per slot: a re-run with the same inputs makes
    no model call and writes the same cases."""
    from toolproof.providers._openai_chat import OpenAIChatProvider as OpenAIChat
    from toolproof.testing import Reply, StubServer

    answer = {"prompt": "What is the weather in Prague?", "call": {"name": "get_weather",
              "arguments": {"city": "Prague"}}}  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-generate-0123456789")
    cache = tmp_path / "c"
    with StubServer(default=Reply.say(json.dumps(answer))) as stub:
        monkeypatch.setattr(OpenAIChat, "default_base_url", stub.base_url("openai"))
        first = generate_cases(_tools(), "openai:gpt-gen", DEFAULT_MIX, cache=cache)
        asked = stub.request_count
        assert asked == first.counts["asked"] == first.model_calls and first.cached
        again = generate_cases(_tools(), "openai:gpt-gen", DEFAULT_MIX, cache=cache)
        assert stub.request_count == asked  # no call to the model the second time
    assert again.cache_hits == asked and again.model_calls == 0
    assert again.cases == first.cases and first.counts["kept"] > 0


def test_gate_reviewed_only_refuses_unreviewed(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    case = {
        "id": "g1",
        "prompt": "hi",
        "expect": {"kind": "text"},
        "generated": {"by": "m", "at": "2026-01-01T00:00:00Z"},
    }
    suite.write_text(
        yaml.safe_dump({"format": 1, "suite": "s", "tools": [], "cases": [case]}), encoding="utf-8"
    )
    records = tmp_path / "records.jsonl"
    record = {
        "format": "toolproof.record/1",
        "case_id": "g1",
        "target": "m",
        "attempt": 0,
        "outcome": "ok",
        "response": {"text": "hello"},
    }
    records.write_text(json.dumps(record) + "\n", encoding="utf-8")
    refused = runner.invoke(
        app, ["gate", str(records), "--suite", str(suite), "--reviewed-only", "--allow-partial"]
    )
    assert refused.exit_code == 1
    assert "1 generated case(s) still need review (g1)" in refused.output


def test_hostile_schemas_do_not_hang_or_crash(tmp_path: Path) -> None:
    cyclic = {
        "name": "cyclic",
        "parameters": {
            "type": "object",
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "required": ["root"],
        },
    }
    huge = {
        "name": "huge",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "enum": [f"v{i}" for i in range(10_000)]}},
            "required": ["code"],
        },
    }
    bare = {"name": "bare", "parameters": {"type": "object"}}
    tools = [SuiteTool.model_validate(t) for t in (cyclic, huge, bare)]
    answers = {
        s.id: {
            "text": json.dumps(
                {
                    "prompt": f"do {s.id}",
                    "call": {
                        "name": s.neighbour or s.tool,
                        "arguments": {"root": {"next": {}}}
                        if (s.neighbour or s.tool) == "cyclic"
                        else ({"code": "v9999"} if (s.neighbour or s.tool) == "huge" else {}),
                    },
                }
            )
        }
        for s in plan_slots(tools, DEFAULT_MIX)
    }
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"cases": answers}), encoding="utf-8")
    result = generate_cases(tools, f"scripted:{script}", DEFAULT_MIX)
    assert result.counts["kept"] > 0
    prompt = result.meta["prompts"][next(iter(result.meta["prompts"]))]
    assert all(len(m["content"]) < 20_000 for m in prompt)


def _generated_file(path: Path, n: int = 4) -> None:
    lines = []
    for i in range(n):
        case = {
            "id": f"g{i}",
            "prompt": f"request \u202e{i}[/red]",
            "expect": {"call": "get_weather", "args": {"city": "Prague"}},
            "generated": {"by": "m", "at": "2026-01-01T00:00:00Z", "status": "needs-review"},
        }
        lines.append(json.dumps(case, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_review_is_escaped_saved_at_once_and_resumable(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    _generated_file(cases)
    # accept the first, reject the second, edit the third's request, then stop
    first = runner.invoke(app, ["review", str(cases)], input="a\nr\ne\nBetter request\n\ns\n")
    assert first.exit_code == 0, first.output
    assert "\\u202e" in first.output and "\u202e" not in first.output  # bidi shown escaped
    assert "[/red]" in first.output  # no markup
    kept = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    assert [c["id"] for c in kept] == ["g0", "g2", "g3"]
    assert [c["generated"]["status"] for c in kept] == ["accepted", "edited", "needs-review"]
    assert kept[1]["prompt"] == "Better request"
    rejected = (tmp_path / "cases.rejected.jsonl").read_text(encoding="utf-8")
    assert '"g1"' in rejected and '"rejected"' in rejected
    assert "1 left" in first.output
    # resumed: only g3 is shown
    second = runner.invoke(app, ["review", str(cases)], input="a\n")
    assert second.exit_code == 0, second.output
    assert "1 case(s) to review" in second.output
    assert "2 accepted, 1 edited, 1 rejected, 0 left; acceptance 75%" in second.output


def test_review_refuses_a_broken_file_with_its_line(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a"}\n{not json\n', encoding="utf-8")
    result = runner.invoke(app, ["review", str(cases)])
    assert result.exit_code != 0
    assert isinstance(result.exception, UserError)
    assert f"{cases}:2" in str(result.exception)


def _good_script(path: Path, tools: list[SuiteTool]) -> None:
    """A valid answer for every slot: a call with the required arguments, or a request."""
    cases: dict[str, Any] = {}
    for n, slot in enumerate(plan_slots(tools, DEFAULT_MIX)):
        name = slot.neighbour if slot.kind == "confusion" else slot.tool
        tool = next(t for t in tools if t.name == name)
        props = tool.parameters.get("properties", {})
        args = {
            p: f"v{n}"
            for p in tool.parameters.get("required", [])
            if props.get(p, {}).get("type") == "string"
        }
        answer: dict[str, Any] = {"prompt": f"Ask {_words(n)}"}
        if slot.kind in ("positive", "confusion"):
            answer["call"] = {"name": name, "arguments": args}
        cases[slot.id] = {"text": json.dumps(answer)}
    path.write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")


@pytest.mark.slow
def test_generate_from_a_real_mcp_server(tmp_path: Path) -> None:
    import sys

    pytest.importorskip("mcp", reason="needs the mcp extra: pip install -e '.[mcp]'")

    from toolproof.importers import import_tools

    server = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "notes_server.py"
    source = f"mcp:stdio:{sys.executable} {server}"
    tools = import_tools(source, timeout_s=60).tools
    script = tmp_path / "s.yaml"
    _good_script(script, tools)
    out = tmp_path / "cases.jsonl"
    result = runner.invoke(
        app,
        [
            "generate",
            "--tools",
            source,
            "--model",
            f"scripted:{script}",
            "-o",
            str(out),
            "--timeout",
            "60",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
    )
    assert result.exit_code == 0, result.output
    written = out.read_text(encoding="utf-8").splitlines()
    assert len(written) > 5 and f"{len(written)} kept" in result.output
    checked = runner.invoke(app, ["validate", str(tmp_path)])
    assert checked.exit_code == 0, checked.output


def test_verify_model_flags_cases_the_second_model_fails(tmp_path: Path) -> None:
    from toolproof.generate import verify_with

    script = tmp_path / "s.yaml"
    _good_script(script, _tools())
    result = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX)
    first = result.cases[0]
    verifier = tmp_path / "v.yaml"
    # the second model answers the first case with the expected call, everything else with text
    call = first["expect"]
    answers = {first["id"]: {"tool_calls": [{"name": call["call"], "arguments": call["args"]}]}}
    verifier.write_text(
        yaml.safe_dump({"cases": answers, "default": {"text": "Sorry?"}}), encoding="utf-8"
    )
    counts = verify_with(result, _tools(), f"scripted:{verifier}")
    assert first["generated"]["verify_passed"] is True
    assert first["generated"]["verified_by"] == f"scripted:{verifier}"
    assert counts["passed"] + counts["failed"] == len(result.cases)
    assert counts["failed"] > 0  # positive cases answered with text fail: flagged, kept
    assert all(c["generated"]["status"] == "needs-review" for c in result.cases)


def test_edges_rotate_over_the_tools_so_every_language_appears() -> None:
    slots = plan_slots(_tools(), DEFAULT_MIX)
    langs = {s.edge for s in slots if s.edge and s.edge.startswith("lang:")}
    assert langs == {"lang:cs", "lang:ru", "lang:zh", "lang:ko"}


def test_verify_model_answers_come_from_the_run_cache_on_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second model is asked once per case; a rerun takes its answers from the
    response cache toolproof run uses, and grades them the same."""
    from toolproof.generate import verify_with
    from toolproof.providers._openai_chat import OpenAIChatProvider as OpenAIChat
    from toolproof.testing import Reply, StubServer

    script = tmp_path / "s.yaml"
    _good_script(script, _tools())
    cache = tmp_path / "responses"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-verify-0123456789")
    with StubServer(default=Reply.say("Sorry?")) as stub:
        monkeypatch.setattr(OpenAIChat, "default_base_url", stub.base_url("openai"))
        first = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX)
        counts = verify_with(first, _tools(), "openai:gpt-verify", cache=cache)
        asked = stub.request_count
        assert asked == len(first.cases) and counts["cached"] == 0
        again = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX)
        recounted = verify_with(again, _tools(), "openai:gpt-verify", cache=cache)
        assert stub.request_count == asked  # no call to the model the second time
    assert recounted["cached"] == len(again.cases)
    assert (recounted["passed"], recounted["failed"]) == (counts["passed"], counts["failed"])
    assert [c["generated"]["verify_passed"] for c in again.cases] == [
        c["generated"]["verify_passed"] for c in first.cases
    ]


def test_generate_never_overwrites_the_generation_record_unasked(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    _good_script(script, _tools())
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {"suite": "t", "tools": [t.model_dump(mode="json", exclude_defaults=True) for t in _tools()],
             "cases": []}
        ),
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "cases.jsonl"
    args = ["generate", "--tools", str(suite), "--model", f"scripted:{script}", "-o", str(out),
            "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    meta = out.with_name("cases.generation.json")
    meta.write_text('{"mine": true}\n', encoding="utf-8")  # the user's own file now
    out.unlink()
    refused = runner.invoke(app, args)  # a UserError: exit 2 from the command line
    assert isinstance(refused.exception, UserError), refused.output
    assert "cases.generation.json: exists (--force to overwrite)" in str(refused.exception)
    assert meta.read_text(encoding="utf-8") == '{"mine": true}\n' and not out.exists()
    forced = runner.invoke(app, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert "mine" not in meta.read_text(encoding="utf-8")


def test_review_refuses_an_edit_the_suite_beside_the_file_would_refuse(tmp_path: Path) -> None:
    """An edited expectation naming a tool the suite does not define, or arguments its
    schema refuses, is not saved (``validate`` would refuse the suite); a good edit is."""
    cases = tmp_path / "cases.jsonl"
    _generated_file(cases, 2)
    tools = [t.model_dump(mode="json", exclude_defaults=True) for t in _tools()]
    (tmp_path / "suite.yaml").write_text(
        yaml.safe_dump({"format": 1, "suite": "s", "tools": tools, "cases_from": "cases.jsonl"}),
        encoding="utf-8",
    )
    unknown = json.dumps({"call": "nope", "args": {}})
    bad_args = json.dumps({"call": "get_weather", "args": {"city": 7}})
    good = json.dumps({"call": "get_weather", "args": {"city": "Brno"}})
    given = f"e\n\n{unknown}\ne\n\n{bad_args}\ne\n\n{good}\ns\n"
    result = runner.invoke(app, ["review", str(cases)], input=given)
    assert result.exit_code == 0, result.output
    # (the terminal's width folds the lines, anywhere: compared without whitespace)
    said = "".join(result.output.split())
    assert "notsaved:" in said and "unknowntool'nope'" in said, result.output
    assert "violatestheschemaofget_weather.city" in said, result.output
    kept = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    assert kept[0]["expect"] == json.loads(good) and kept[0]["generated"]["status"] == "edited"
    assert kept[1]["generated"]["status"] == "needs-review"
    checked = runner.invoke(app, ["validate", str(tmp_path)])
    assert checked.exit_code == 0, checked.output


def test_an_output_that_cannot_be_written_is_an_error_before_any_model_call(
    tmp_path: Path,
) -> None:
    """-o naming a folder, or a file under a file, is a UserError naming it, before the
    generator is asked anything (it was a traceback after every model call)."""
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"default": {"text": "prose"}}), encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": t["name"], "parameters": t["parameters"]}
                                 for t in TOOLS]), encoding="utf-8")  # fmt: skip
    folder = tmp_path / "folder"
    folder.mkdir()
    a_file = tmp_path / "a_file"
    a_file.write_text("x", encoding="utf-8")
    for out, said in ((folder, "is a folder"), (a_file / "cases.jsonl", "not a folder")):
        args = ["generate", "--tools", str(tools), "--model", f"scripted:{script}",
                "-o", str(out), "--force"]  # fmt: skip
        refused = runner.invoke(app, args)
        assert isinstance(refused.exception, UserError), refused.output
        assert said in str(refused.exception) and "generated 1/" not in refused.output


def test_extract_json_reads_the_first_object_in_prose_with_braces_after_it() -> None:
    """The first balanced ``{...}`` that is an object is read, whatever braces the prose
    holds after it (text to the last ``}`` was read, so these were counted as not JSON)."""
    assert extract_json('Here: {"prompt": "a"} Hope that helps {smile}') == {"prompt": "a"}
    assert extract_json('Sure {not json} then {"prompt": "b"}') == {"prompt": "b"}
    assert extract_json('{"prompt": "c"}\n{"prompt": "second"}') == {"prompt": "c"}
    # an object cut short is not JSON: the object inside it is not read as the answer
    cut = '{"prompt": "e", "call": {"name": "x", "arguments": {"a": 1}}'
    assert extract_json(cut) is None and extract_json('{"prompt": "f {\\"x\\": 1}') is None
    assert extract_json('{"call": {"name": "x"}, "prompt": "d"} }') == {
        "call": {"name": "x"},
        "prompt": "d",
    }
    import time

    started = time.perf_counter()
    for hostile in ("{" * 200_000, '{"a": ' * 40_000, "{}" * 100_000):
        extract_json(hostile)
    assert time.perf_counter() - started < 5


def test_a_verify_rerun_answered_from_the_cache_does_not_prepare_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Preparing a model can be costly (the bundled one starts a server and loads 491 MB):
    a rerun whose every answer comes from the cache does not prepare it."""
    from toolproof.generate import verify_with
    from toolproof.providers._openai_chat import OpenAIChatProvider as OpenAIChat
    from toolproof.testing import Reply, StubServer

    script = tmp_path / "s.yaml"
    _good_script(script, _tools())
    prepared: list[str] = []

    async def prepare(self: Any, note: Any) -> None:
        prepared.append(self.model)

    monkeypatch.setattr(OpenAIChat, "prepare", prepare)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-verify-0123456789")
    cache = tmp_path / "responses"
    with StubServer(default=Reply.say("Sorry?")) as stub:
        monkeypatch.setattr(OpenAIChat, "default_base_url", stub.base_url("openai"))
        first = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX)
        verify_with(first, _tools(), "openai:gpt-verify", cache=cache)
        assert prepared == ["gpt-verify"]
        again = generate_cases(_tools(), f"scripted:{script}", DEFAULT_MIX)
        counts = verify_with(again, _tools(), "openai:gpt-verify", cache=cache)
    assert counts["cached"] == len(again.cases) and prepared == ["gpt-verify"]


def test_generate_says_which_tools_the_import_left_out_and_why(tmp_path: Path) -> None:
    """A tool the import cannot carry is named with the field at fault (as by `tools
    import`), not dropped without a word from the cases and the suite written."""
    tools = tmp_path / "tools.json"
    good = {"name": "ok", "description": "d", "parameters": {"type": "object"}}
    bad = {"name": "bad", "description": "d",
           "parameters": {"type": "object", "properties": {"x": {"type": "strin"}}}}  # fmt: skip
    tools.write_text(json.dumps([good, bad]), encoding="utf-8")
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"default": {"text": "prose"}}), encoding="utf-8")
    out = tmp_path / "gen" / "cases.jsonl"
    args = ["generate", "--tools", str(tools), "--model", f"scripted:{script}", "-o", str(out)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "error: bad: not imported" in done.output
    assert "(at parameters.properties.x.type)" in done.output
    # with no tool left, the reasons come before the refusal
    tools.write_text(json.dumps([bad]), encoding="utf-8")
    refused = runner.invoke(app, [*args[:-2], "-o", str(tmp_path / "none" / "cases.jsonl")])
    assert refused.exit_code != 0 and "error: bad: not imported" in refused.output


def test_a_confusion_case_calling_the_tool_itself_is_counted_invalid_not_unknown() -> None:
    """The tool exists: an answer to a confusion slot that calls it (not the neighbouring
    tool) is not a valid confusion case, and is not counted as naming an unknown tool."""
    from toolproof.generate._generate import _Skip, case_from_answer

    tools = {t.name: t for t in _tools()}
    slot = next(s for s in plan_slots(_tools(), DEFAULT_MIX) if s.kind == "confusion")
    own = tools[slot.tool].parameters.get("required", [])
    answer = {"prompt": "p", "call": {"name": slot.tool, "arguments": {k: "x" for k in own}}}
    with pytest.raises(_Skip) as caught:
        case_from_answer(slot, answer, tools, {"by": "m", "at": "t", "status": "needs-review"})
    assert caught.value.count == "invalid_case"
    assert "must call the neighbouring tool" in caught.value.reason

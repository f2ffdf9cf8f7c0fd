"""Provider tool formats: golden files, detection, and what cannot be carried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolproof.errors import SuiteError, UserError
from toolproof.importers import Level, import_tools, read_definitions, tools_file
from toolproof.suite import load_suite_checked

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"
SOURCES = sorted(p.name for p in DATA.iterdir())


@pytest.mark.parametrize("name", SOURCES)
def test_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    result = import_tools(name)
    expected = (GOLDEN / f"{Path(name).stem}.yaml").read_text(encoding="utf-8")
    assert tools_file(result) == expected


@pytest.mark.parametrize("name", SOURCES)
def test_golden_file_is_a_valid_tools_file(name: str, tmp_path: Path) -> None:
    golden = GOLDEN / f"{Path(name).stem}.yaml"
    (tmp_path / "tools.yaml").write_text(golden.read_text(encoding="utf-8"))
    (tmp_path / "suite.yaml").write_text("suite: s\ntools: tools.yaml\ncases: []\n")
    loaded, errors = load_suite_checked(tmp_path)
    assert errors == []
    assert loaded.suite.tools


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("openai_chat.json", "openai-chat"),
        ("openai_responses.json", "openai-responses"),
        ("anthropic.yaml", "anthropic"),
        ("gemini.json", "gemini"),
        ("gemini_json_schema.json", "gemini"),
        ("mcp_tools_list.json", "mcp"),
    ],
)
def test_detects_the_format(name: str, fmt: str) -> None:
    assert import_tools(str(DATA / name)).format == fmt
    assert import_tools(str(DATA / name), fmt=fmt).format == fmt


def test_forced_format_that_does_not_fit_is_an_error_with_a_line() -> None:
    with pytest.raises(SuiteError) as err:
        import_tools(str(DATA / "anthropic.yaml"), fmt="openai-chat")
    assert err.value.line == 2
    assert "not a openai-chat tool definition" in str(err.value)


def test_gemini_subset_becomes_json_schema() -> None:
    result = import_tools(str(DATA / "gemini.json"))
    weather, event, calendars = result.tools
    assert list(weather.parameters["properties"]) == ["location", "unit"]  # propertyOrdering
    assert weather.parameters["properties"]["unit"] == {
        "type": ["string", "null"],
        "enum": ["celsius", "fahrenheit", None],
    }
    assert weather.parameters["properties"]["location"]["examples"] == ["Paris, France"]
    props = event.parameters["properties"]
    assert props["title"] == {"type": "string", "minLength": 1}  # "1" was a string
    assert props["attendees"]["maxItems"] == 50
    assert props["location"]["anyOf"][-1] == {"type": "null"}
    assert calendars.parameters == {"type": "object", "properties": {}}


def test_gemini_both_parameter_kinds_is_an_error() -> None:
    data = {"functionDeclarations": [{"name": "x", "parameters": {}, "parametersJsonSchema": {}}]}
    with pytest.raises(Exception, match="not both"):
        read_definitions(data, "x.json")


def test_gemini_unknown_type_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text(
        "functionDeclarations:\n  - name: f\n    parameters:\n      type: OBJECT\n"
        "      properties:\n        a: {type: TEXT}\n"
    )
    with pytest.raises(SuiteError) as err:
        import_tools(str(path))
    assert err.value.line == 6
    assert "unknown type 'TEXT'" in str(err.value)


def test_responses_without_strict_is_strict() -> None:
    data = [{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}]
    result = read_definitions(data, "x.json")
    assert result.tools[0].strict is True
    assert any("treats an omitted strict as strict" in n.message for n in result.notes)


def test_fields_that_cannot_be_carried_are_reported_by_name() -> None:
    data = [
        {
            "name": "f",
            "input_schema": {"type": "object", "properties": {}},
            "cache_control": {"type": "ephemeral"},
            "input_examples": [{}],
        },
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
    ]
    result = read_definitions(data, "x.json")
    assert [t.name for t in result.tools] == ["f"]
    messages = [(n.tool, n.message) for n in result.notes if n.level is Level.warning]
    assert (
        "f",
        "field(s) cache_control, input_examples not carried: a toolproof tool has no "
        "place for them",
    ) in messages
    assert any(tool == "web_search" and "skipped" in m for tool, m in messages)


def test_openai_built_in_tools_are_skipped_and_reported() -> None:
    data = {"tools": [{"type": "web_search"}, {"type": "function", "name": "f"}]}
    result = read_definitions(data, "x.json")
    assert [t.name for t in result.tools] == ["f"]
    assert any("built-in tool of type 'web_search'" in n.message for n in result.notes)


def test_invalid_name_is_renamed_and_reported() -> None:
    data = [
        {"type": "function", "function": {"name": "1st tool", "parameters": {"type": "object"}}}
    ]
    result = read_definitions(data, "x.json")
    assert result.tools[0].name == "_1st_tool"
    assert any("renamed to '_1st_tool'" in n.message for n in result.notes)


def test_mcp_annotations_map_to_effect_and_risk() -> None:
    tools = {t.name: t for t in import_tools(str(DATA / "mcp_tools_list.json")).tools}
    assert (tools["read_file"].effect, tools["read_file"].risk) == ("read", "low")
    # destructive, closed world: high; idempotent lowers it to medium
    assert (tools["delete_file"].effect, tools["delete_file"].risk) == ("destructive", "medium")
    # not destructive, open world by default: high
    assert (tools["send_mail"].effect, tools["send_mail"].risk) == ("write", "high")
    # no annotations: the cautious defaults
    assert (tools["fs.mkdir"].effect, tools["fs.mkdir"].risk) == ("destructive", "critical")


def test_names_providers_refuse_are_reported() -> None:
    notes = import_tools(str(DATA / "mcp_tools_list.json")).notes
    refused = [n.message for n in notes if n.tool == "fs.mkdir"]
    assert any("refused by openai" in m for m in refused)
    assert any("refused by anthropic" in m for m in refused)
    assert not any("refused by gemini" in m for m in refused)


def test_a_tool_failing_the_suite_checks_is_left_out_and_named(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            [
                {"name": "ok", "input_schema": {"type": "object", "properties": {}}},
                {"name": "bad", "input_schema": {"type": "object", "properties": 3}},
            ]
        )
    )
    result = import_tools(str(path))
    assert [t.name for t in result.tools] == ["ok"]
    (error,) = [n for n in result.notes if n.level is Level.error]
    assert error.tool == "bad" and "invalid JSON Schema" in error.message


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('[\n {"name": "a",\n  "input_schema": {]\n]')
    with pytest.raises(SuiteError) as err:
        import_tools(str(path))
    assert err.value.line == 3


def test_missing_file() -> None:
    with pytest.raises(SuiteError, match="file not found"):
        import_tools("no/such/file.json")


def test_unknown_format() -> None:
    with pytest.raises(UserError, match="unknown format"):
        import_tools(str(DATA / "anthropic.yaml"), fmt="cohere")

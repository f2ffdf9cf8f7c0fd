"""Loader and checker errors: one line, naming file, line, column and field."""

from pathlib import Path

import pytest

from toolproof.errors import SuiteError, SuiteProblems
from toolproof.suite import load_suite, load_suite_checked, suite_json_schema

BASE = """\
suite: demo
now: 2026-09-19T10:00:00
timezone: Europe/Prague
tools:
  - name: lookup_order
    parameters:
      type: object
      properties:
        order_id: {type: string, pattern: "^ORD-[0-9]{6}$"}
      required: [order_id]
      additionalProperties: false
cases:
  - id: a
    prompt: Where is ORD-104821?
    expect:
      call: lookup_order
      args: {order_id: ORD-104821}
"""


def first_problem(tmp_path: Path, text: str) -> str:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        _, errors = load_suite_checked(tmp_path)
    except SuiteProblems as exc:
        return str(exc.errors[0]).replace(str(tmp_path) + "/", "")
    except SuiteError as exc:
        return str(exc).replace(str(tmp_path) + "/", "")
    assert errors, "expected a problem"
    return str(errors[0]).replace(str(tmp_path) + "/", "")


def test_the_base_suite_loads(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(BASE)
    suite = load_suite(tmp_path)
    assert suite.name == "demo" and len(suite.cases) == 1
    assert suite.now is not None and suite.now.year == 2026


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "    expect:",
            "    expect: [",
            "suite.yaml:17:11: invalid YAML: expected ',' or ']', but got ':'",
        ),
        (
            "    prompt:",
            "    promt:",
            "suite.yaml:14:5: cases[0].promt: unknown key 'promt'; did you mean 'prompt'?",
        ),
        (
            "suite: demo",
            "suit: demo",
            "suite.yaml:1:1: suit: unknown key 'suit'; did you mean 'suite'?",
        ),
        (
            "      call: lookup_order",
            "      call: 5",
            "suite.yaml:16:7: cases[0].expect.call: Input should be a valid string, got 5",
        ),
        (
            "type: object",
            "type: objekt",
            "suite.yaml:7:7: tools[0].parameters.type: "
            "unknown JSON Schema type 'objekt'; did you mean 'object'?",
        ),
        (
            "      call: lookup_order",
            "      call: lookup_ordr",
            "suite.yaml:16:7: cases[0].expect.call: unknown tool 'lookup_ordr' (known: lookup_order)",
        ),
        (
            "{order_id: ORD-104821}",
            "{order_id: 104821}",
            "suite.yaml:17:14: cases[0].expect.args.order_id: expected value 104821 violates the "
            "schema of lookup_order.order_id: 104821 is not of type \"string\"",
        ),
        (
            "{order_id: ORD-104821}",
            "{order_id: ORD-1}",
            "suite.yaml:17:14: cases[0].expect.args.order_id: expected value 'ORD-1' violates the "
            "schema of lookup_order.order_id: \"ORD-1\" does not match \"^ORD-[0-9]{6}$\"",
        ),
        (
            "{order_id: ORD-104821}",
            "{order: ORD-104821}",
            "suite.yaml:17:14: cases[0].expect.args.order: 'order' is not a parameter of "
            "lookup_order (parameters: order_id)",
        ),
        (
            "{order_id: ORD-104821}",
            '{order_id: {regex: "("}}',
            "suite.yaml:17:14: cases[0].expect.args.order_id: invalid regex: "
            "/(/: missing ): (",
        ),
        (
            "{order_id: ORD-104821}",
            "{order_id: {soft: x, treshold: 0.5}}",
            "suite.yaml:17:14: cases[0].expect.args.order_id: unknown option 'treshold' for matcher "
            "'soft' (options: threshold); to match a literal object use {exact: {...}}",
        ),
        (
            "timezone: Europe/Prague",
            "timezone: Mars/Olympus",
            "suite.yaml:3:1: timezone: unknown time zone 'Mars/Olympus'",
        ),
        (
            "timezone: Europe/Prague",
            "timezone: UTC\ntimezone: UTC",
            "suite.yaml:4:1: duplicate key 'timezone'",
        ),
        (
            "    prompt: Where is ORD-104821?\n",
            "",
            "suite.yaml:13:5: cases[0]: give exactly one of 'prompt' and 'messages'",
        ),
    ],
)
def test_errors_name_file_line_column_and_field(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in BASE
    assert first_problem(tmp_path, BASE.replace(old, new, 1)) == message


def test_duplicate_case_id_points_at_the_duplicate(tmp_path: Path) -> None:
    text = BASE + "  - id: a\n    prompt: hi\n    expect: {kind: text}\n"
    assert first_problem(tmp_path, text) == "suite.yaml:18:5: cases[1].id: duplicate case id 'a'"


def test_relative_dates_need_now(tmp_path: Path) -> None:
    text = BASE.replace("now: 2026-09-19T10:00:00\n", "").replace(
        "{order_id: ORD-104821}", "{order_id: {date: tomorrow}}"
    )
    assert first_problem(tmp_path, text) == (
        "suite.yaml:16:14: cases[0].expect.args.order_id: 'tomorrow' is relative, so the suite needs 'now'"
    )


def test_jsonl_case_files(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.jsonl").write_text(
        '{"id": "j1", "prompt": "hi", "expect": {"kind": "text"}}\n'
        '{"id": "j2", "prompt": "hi", "expect": {"kind": "txt"}}\n'
    )
    problem = first_problem(tmp_path, BASE + "cases_from: [cases/*.jsonl]\n")
    assert problem == (
        "cases/x.jsonl:2:41: expect.kind: Input should be 'call', 'none', 'text', 'clarify', 'confirm' "
        "or 'refuse', got 'txt'"
    )


def test_jsonl_line_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.jsonl").write_text('{"id": "j1", "prompt": "hi"\n')
    problem = first_problem(tmp_path, BASE + "cases_from: cases/*.jsonl\n")
    assert problem == "cases/x.jsonl:1:28: not valid JSON: Expecting ',' delimiter"


def test_cases_from_must_match(tmp_path: Path) -> None:
    problem = first_problem(tmp_path, BASE + "cases_from: [nothing/*.jsonl]\n")
    assert problem == "suite.yaml:18:14: cases_from[0]: no file matches 'nothing/*.jsonl'"


def test_tools_from_a_file(tmp_path: Path) -> None:
    tools = BASE.split("tools:\n")[1].split("cases:\n")[0]
    (tmp_path / "tools.yaml").write_text(
        "\n".join(line[2:] for line in tools.splitlines()).replace("type: object", "type: objekt")
    )
    text = BASE.replace(BASE.split("cases:\n")[0].split("tools:\n")[1], "").replace(
        "tools:\n", "tools: tools.yaml\n"
    )
    assert first_problem(tmp_path, text).startswith(
        "tools.yaml:3:5: [0].parameters.type: unknown JSON Schema type 'objekt'"
    )


def test_yaml_keeps_country_codes_and_dates_as_text(tmp_path: Path) -> None:
    text = BASE.replace("Where is ORD-104821?", "NO").replace(
        "- id: a", "- id: a\n    tags: [NO, 2026-01-01]"
    )
    (tmp_path / "suite.yaml").write_text(text)
    case = load_suite(tmp_path).cases[0]
    assert case.prompt == "NO" and case.tags == ["NO", "2026-01-01"]


def test_published_schema_describes_the_format() -> None:
    schema = suite_json_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert {"suite", "tools", "cases", "cases_from", "now", "timezone"} <= set(schema["properties"])
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema)


def _tools_file_problems(tmp_path: Path, name: str, text: str) -> list[str]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    suite = BASE.replace(BASE.split("cases:\n")[0].split("tools:\n")[1], "").replace(
        "tools:\n", f"tools: {name}\n"
    )
    (tmp_path / "suite.yaml").write_text(suite, encoding="utf-8")
    try:
        _, errors = load_suite_checked(tmp_path)
    except SuiteProblems as exc:
        errors = exc.errors
    return [str(e).replace(str(tmp_path) + "/", "") for e in errors]


_BAD_TOOLS = [
    {"name": "lookup_order", "parameters": {"type": "objekt"}},
    {"name": "other", "paramters": {}, "risk": "huge"},
    {"name": "third", "parameters": {"type": "object", "properties": {"a": {"minimum": "x"}}}},
]


@pytest.mark.parametrize("wrapped", [False, True])
@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_tools_file_is_located_as_the_yaml_reader_located_it(
    tmp_path: Path, wrapped: bool, indent: int | None
) -> None:
    import json

    data: object = {"tools": _BAD_TOOLS} if wrapped else _BAD_TOOLS
    text = json.dumps(data, indent=indent)
    from_json = _tools_file_problems(tmp_path, "tools.json", text)
    from_yaml = _tools_file_problems(tmp_path, "tools.yaml", text)
    assert from_json == [p.replace("tools.yaml", "tools.json") for p in from_yaml]
    assert len(from_json) == 4, from_json
    if indent == 2 and not wrapped:
        assert from_json[0] == (
            "tools.json:5:7: [0].parameters.type: unknown JSON Schema type 'objekt'; "
            "did you mean 'object'?"
        )


def test_a_json_tools_file_the_json_reader_refuses_is_read_as_before(tmp_path: Path) -> None:
    """Duplicate keys, NaN, broken JSON, YAML: the YAML reader says what is wrong, as it did."""
    for text, first in [
        ('[{"name": "a", "name": "b", "parameters": {}}]', "1:16: [0]: duplicate key 'name'"),
        ('[{"name": "a",\n  "parameters": {]}]', "2:18: invalid YAML: expected the node"),
        ('[{"name": "a", "parameters": {"maximum": NaN}}]', "1:31: [0].parameters.maximum"),
        ("- name: a\n  risk: huge\n", "2:3: [0].risk: Input should be"),
    ]:
        from_json = _tools_file_problems(tmp_path, "tools.json", text)
        from_yaml = _tools_file_problems(tmp_path, "tools.yaml", text)
        assert from_json == [p.replace("tools.yaml", "tools.json") for p in from_yaml]
        assert from_json[0].startswith(f"tools.json:{first}"), from_json
    # YAML in a file named .json still loads as it always did
    assert _tools_file_problems(tmp_path, "tools.json", "- name: lookup_order\n") == []


def test_a_json_tools_file_indented_with_tabs_loads(tmp_path: Path) -> None:
    text = '[\n\t{\n\t\t"name": "lookup_order",\n\t\t"description": "Find \\ud83d\\udce6"\n\t}\n]'
    assert _tools_file_problems(tmp_path, "tools.json", text) == []
    (tmp_path / "suite.yaml").write_text(
        BASE.replace(BASE.split("cases:\n")[0].split("tools:\n")[1], "").replace(
            "tools:\n", "tools: tools.json\n"
        )
    )
    assert load_suite(tmp_path).tools[0].description == "Find \U0001f4e6"

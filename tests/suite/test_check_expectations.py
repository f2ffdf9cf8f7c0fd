"""validate checks the literals inside matchers, and names a misspelt matcher."""

import json
from pathlib import Path

from toolproof.suite import load_suite_checked

SUITE = """\
suite: weather
tools:
  - name: get_weather
    parameters:
      type: object
      properties:
        city: {type: string}
        unit: {type: string, enum: [celsius, fahrenheit]}
        filter: {type: object}
      required: [city]
    match:
      city: normalized
cases:
  - id: a
    prompt: Weather in Paris?
    expect:
      call: get_weather
      args:
        city: Paris
        unit: {one_of: [null, kelvin, celsius]}
  - id: b
    prompt: Weather in Oslo?
    expect:
      call: get_weather
      args:
        city: Oslo
        unit: {optional: kelvin}
        filter: {regx: "^a"}
"""


def _problems(tmp_path: Path, text: str = SUITE) -> list[str]:
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    _, errors = load_suite_checked(tmp_path)
    return [str(e).replace(str(tmp_path) + "/", "") for e in errors]


def test_literals_inside_matcher_options_are_checked_against_the_schema(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    one_of = [p for p in problems if "cases[0]" in p]
    assert any(
        "cases[0].expect.args.unit.one_of[0]: option None violates the schema of "
        "get_weather.unit" in p
        for p in one_of
    ), problems
    assert any(
        "cases[0].expect.args.unit.one_of[1]: option 'kelvin' violates" in p
        and "is not one of" in p
        for p in one_of
    ), problems
    assert not any("one_of[2]" in p for p in problems)  # celsius is allowed
    assert any(
        "cases[1].expect.args.unit.optional: option 'kelvin' violates" in p for p in problems
    )


def test_misspelt_matcher_names_get_did_you_mean(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    assert any(
        "cases[1].expect.args.filter: unknown matcher 'regx' (did you mean 'regex'?)" in p
        for p in problems
    ), problems
    problems = _problems(tmp_path, SUITE.replace("city: normalized", "city: normalised"))
    assert any(
        "tools[0].match.city: unknown matcher 'normalised' (did you mean 'normalized'?)" in p
        for p in problems
    ), problems


def _one_tool_suite(schema: str, value: str) -> str:
    return f"""\
suite: same-name
tools:
  - name: lookup
    parameters: {schema}
cases:
  - id: a
    prompt: Look it up.
    expect:
      call: lookup
      args: {{code: {value}}}
"""


def test_schema_checks_are_cached_by_content_not_by_tool_name(tmp_path: Path) -> None:
    """The same tool name with different schemas: each schema is checked as written."""
    strings = "{type: object, properties: {code: {type: string}}}"
    integers = "{type: object, properties: {code: {type: integer}}}"
    broken = "{type: object, properties: {code: {type: integer, minimum: low}}}"
    for first, second in [(strings, integers), (integers, strings)]:
        for schema in (first, second):
            problems = _problems(tmp_path, _one_tool_suite(schema, "'7'"))
            if schema == strings:
                assert problems == []
            else:
                assert problems == [
                    "suite.yaml:10:14: cases[0].expect.args.code: expected value '7' violates "
                    'the schema of lookup.code: "7" is not of type "integer"'
                ]
    # the meta-schema check too: a valid schema first, then a broken one of the same name
    assert _problems(tmp_path, _one_tool_suite(integers, "7")) == []
    problems = _problems(tmp_path, _one_tool_suite(broken, "7"))
    assert problems[0] == (
        "suite.yaml:4:67: tools[0].parameters.properties.code.minimum: "
        "invalid JSON Schema: 'low' is not of type 'number'"
    )
    assert _problems(tmp_path, _one_tool_suite(integers, "7")) == []


def test_values_repeated_across_cases_are_reported_at_each_case(tmp_path: Path) -> None:
    """Each distinct value is checked once, but every case that holds it is told."""
    tools = (
        '[{"name": "count_items", "match": {"label": "normalized"}, "parameters": {"type": '
        '"object", "properties": {"n": {"type": "integer", "minimum": 1}, "label": '
        '{"type": "string"}}, "additionalProperties": false}}]'
    )
    values = ["0", "true", "1.0", "-0.0", "0.0", '{"regx": "a"}', '{"one_of": [0, 2]}', "2"]
    lines = [
        json.dumps({"id": f"c{i}", "prompt": "Count.", "expect": {"call": "count_items"}})[:-2]
        + f', "args": {{"n": {value}, "label": {{"soft": "x", "threshold": 2}}}}}}}}'
        for i, value in enumerate(values * 2)
    ]
    (tmp_path / "tools.json").write_text(tools, encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = "suite: s\ntools: tools.json\ncases_from: [cases.jsonl]\n"
    problems = _problems(tmp_path, suite)
    by_line: dict[int, list[str]] = {}
    for problem in problems:
        by_line.setdefault(int(problem.split(":")[1]), []).append(problem.split(": ", 1)[1])
    assert sorted(by_line) == list(range(1, 2 * len(values) + 1))  # every case, twice over
    for line in range(1, len(values) + 1):
        assert by_line[line] == by_line[line + len(values)]
    first = [by_line[line][0] for line in range(1, len(values) + 1)]
    assert first[:5] == [
        "expect.args.n: expected value 0 violates the schema of count_items.n: "
        "0 is less than the minimum of 1",
        'expect.args.n: expected value True violates the schema of count_items.n: true is not of type "integer"',
        "expect.args.label: 'threshold' must be a number in (0, 1]",
        "expect.args.n: expected value -0.0 violates the schema of count_items.n: "
        "-0.0 is less than the minimum of 1",
        "expect.args.n: expected value 0.0 violates the schema of count_items.n: "
        "0.0 is less than the minimum of 1",
    ]
    assert "unknown matcher 'regx'" in first[5]
    assert first[6].startswith("expect.args.n.one_of[0]: option 0 violates")

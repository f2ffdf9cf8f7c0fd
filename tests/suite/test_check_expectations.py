"""validate checks the literals inside matchers, and names a misspelt matcher."""

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
    assert any("cases[1].expect.args.unit.optional: option 'kelvin' violates" in p for p in problems)


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

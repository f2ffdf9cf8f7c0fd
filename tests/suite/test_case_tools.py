"""Tool definitions on a case: the same tool name with another schema, checked and graded."""

from pathlib import Path

import pytest

from toolproof.errors import SuiteProblems
from toolproof.grade import Scorer
from toolproof.run._manifest import tools_fingerprint
from toolproof.suite import load_suite, load_suite_checked
from toolproof.types import FailureClass, Response, ToolCall

SUITE = """\
suite: evolving
tools:
  - name: get_weather
    description: Weather for a city.
    parameters:
      type: object
      properties:
        city: {type: string}
      required: [city]
      additionalProperties: false
  - name: lookup_order
    parameters:
      type: object
      properties:
        order_id: {type: string}
      required: [order_id]
cases:
  - id: v1
    prompt: Weather in Brno?
    expect:
      call: get_weather
      args: {city: Brno}
  - id: v2
    prompt: Weather in Brno, in Fahrenheit?
    tools:
      - lookup_order
      - name: get_weather
        description: Weather for a city, in the unit asked for.
        parameters:
          type: object
          properties:
            city: {type: string}
            unit: {type: string, enum: [celsius, fahrenheit]}
          required: [city, unit]
          additionalProperties: false
    expect:
      call: get_weather
      args: {city: Brno, unit: fahrenheit}
"""


def _suite(tmp_path: Path, text: str = SUITE) -> Path:
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _answer(**args: object) -> Response:
    return Response(tool_calls=[ToolCall(name="get_weather", arguments=args)])


def test_each_case_offers_its_own_definition(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    v1, v2 = suite.cases
    (weather_v1,) = [t for t in suite.tools_for(v1) if t.name == "get_weather"]
    offered_v2 = suite.tools_for(v2)
    assert [t.name for t in offered_v2] == ["lookup_order", "get_weather"]
    assert "unit" not in weather_v1.parameters["properties"]
    assert offered_v2[1].parameters["required"] == ["city", "unit"]
    assert offered_v2[1].description == "Weather for a city, in the unit asked for."


def test_each_case_is_graded_against_the_schema_it_sent(tmp_path: Path) -> None:
    scorer = Scorer(load_suite(_suite(tmp_path)))
    # the same arguments: valid for the suite's schema, invalid for the case's own
    assert scorer.grade_response("v1", _answer(city="Brno")).passed
    v2 = scorer.grade_response("v2", _answer(city="Brno"))
    assert v2.failure is FailureClass.schema_mismatch
    assert any("unit" in c.message for c in v2.checks)
    # and the other way round: 'unit' is unknown to the suite's schema
    v1 = scorer.grade_response("v1", _answer(city="Brno", unit="fahrenheit"))
    assert v1.failure is FailureClass.schema_mismatch
    assert scorer.grade_response("v2", _answer(city="Brno", unit="fahrenheit")).passed


def test_equal_schemas_share_one_validator_whatever_the_name(tmp_path: Path) -> None:
    scorer = Scorer(load_suite(_suite(tmp_path)))
    v1, v2 = scorer.cases["v1"], scorer.cases["v2"]
    assert scorer._validator(v1, "get_weather") is not scorer._validator(v2, "get_weather")
    assert scorer._validator(v2, "lookup_order") is scorer._validator(v1, "lookup_order")


def test_case_definitions_change_the_tools_fingerprint(tmp_path: Path) -> None:
    with_own = load_suite(_suite(tmp_path))
    plain = with_own.model_copy(
        update={"cases": [c.model_copy(update={"tools": None}) for c in with_own.cases]}
    )
    assert tools_fingerprint(with_own) != tools_fingerprint(plain)
    assert with_own.fingerprint() != plain.fingerprint()


def test_case_definitions_are_checked_like_suite_tools(tmp_path: Path) -> None:
    bad = SUITE.replace("unit: {type: string, enum: [celsius, fahrenheit]}", "unit: {type: int}")
    _, errors = load_suite_checked(_suite(tmp_path, bad))
    text = [str(e).replace(str(tmp_path) + "/", "") for e in errors]
    assert any(
        t.startswith("suite.yaml:33:") and "cases[1].tools[1].parameters.properties.unit.type" in t
        and "did you mean 'integer'" in t
        for t in text
    ), text


def test_expected_values_are_checked_against_the_case_definition(tmp_path: Path) -> None:
    bad = SUITE.replace("args: {city: Brno, unit: fahrenheit}", "args: {city: Brno, unit: kelvin}")
    _, errors = load_suite_checked(_suite(tmp_path, bad))
    text = [str(e).replace(str(tmp_path) + "/", "") for e in errors]
    assert any(
        "cases[1].expect.args.unit" in t and "violates the schema of get_weather.unit" in t
        for t in text
    ), text


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        ("      - lookup_order\n", "      - lookup_ordr\n", "cases[1].tools[0]", "unknown tool"),
        ("      - lookup_order\n", "      - get_weather\n", "cases[1].tools[1].name", "twice"),
        (
            "        description: Weather for a city, in the unit asked for.\n",
            "        descripton: Weather.\n",
            "cases[1].tools[1].descripton",
            "unknown key",
        ),
    ],
)
def test_case_tool_lists_give_located_errors(
    tmp_path: Path, old: str, new: str, where: str, message: str
) -> None:
    text = SUITE.replace(old, new)
    try:
        _, errors = load_suite_checked(_suite(tmp_path, text))
    except SuiteProblems as exc:
        errors = exc.errors
    found = [str(e).replace(str(tmp_path) + "/", "") for e in errors]
    assert any(where in f and message in f and f.startswith("suite.yaml:") for f in found), found


def test_a_name_list_still_picks_a_subset(tmp_path: Path) -> None:
    text = SUITE.replace(
        "    expect:\n      call: get_weather\n      args: {city: Brno}\n",
        "    tools: [get_weather]\n    expect:\n      call: get_weather\n      args: {city: Brno}\n",
    )
    suite = load_suite(_suite(tmp_path, text))
    assert [t.name for t in suite.tools_for(suite.cases[0])] == ["get_weather"]
    assert suite.cases[0].tools == ["get_weather"]

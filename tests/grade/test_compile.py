"""How an expected call is written in reports: no stray comma when only extra arguments are allowed."""

from __future__ import annotations

from typing import Any

import pytest

from toolproof.grade import Scorer
from toolproof.grade._compile import compile_case
from toolproof.match import context
from toolproof.types import Case, Response, Suite, SuiteTool, ToolCall

PET = SuiteTool(
    name="createPet",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
    },
)


def _suite(expect: dict[str, Any]) -> Suite:
    case = Case.model_validate({"id": "c", "prompt": "Add Rex.", "expect": expect})
    return Suite(name="s", tools=[PET], cases=[case])


@pytest.mark.parametrize(
    ("expect", "shown"),
    [
        ({"call": "createPet", "extra_args": True}, "createPet(...)"),
        ({"call": "createPet"}, "createPet()"),
        ({"call": "createPet", "args": {"name": "Rex"}}, 'createPet(name="Rex")'),
        (
            {"call": "createPet", "args": {"name": "Rex"}, "extra_args": True},
            'createPet(name="Rex", ...)',
        ),
    ],
)
def test_expected_calls_are_written_without_a_stray_comma(
    expect: dict[str, Any], shown: str
) -> None:
    suite = _suite(expect)
    compiled = compile_case(suite.cases[0], suite, {"createPet": PET}, context(suite))
    assert compiled.single is not None and compiled.single.describe() == shown


def test_the_report_diff_of_a_template_case_has_no_stray_comma() -> None:
    suite = _suite({"call": "createPet", "extra_args": True})
    wrong = Response(tool_calls=[ToolCall(name="deletePet", arguments={})])
    scorer = Scorer(suite)
    diff = scorer.diff(scorer.grade_response("c", wrong))
    assert diff == "expected: createPet(...)\nactual:   deletePet()"

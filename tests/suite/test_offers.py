"""A scripted user's ``offer``: the tools it names are the case's, each located when not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from tests.cli.cli_support import toolproof
from toolproof.errors import SuiteError, SuiteProblems
from toolproof.suite import load_suite_checked

SUITE = """\
format: 1
suite: later
tools:
  - name: lookup
    parameters: {type: object, properties: {file: {type: string}}}
  - name: sort
    parameters: {type: object, properties: {file: {type: string}}}
  - name: delete
    parameters: {type: object, properties: {file: {type: string}}}
mocks:
  lookup: {default: {result: ok}}
  sort: {default: {result: ok}}
cases:
  - id: late
    tools: [lookup, sort]
    user:
      script:
        - "Look up report.txt."
        - {offer: [sort], say: "More tools. What about now?"}
        - {when: {contains: sorted}, offer: [sort], say: "Thanks. ###STOP###"}
"""


def _errors(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    try:
        _, errors = load_suite_checked(tmp_path)
    except SuiteProblems as exc:
        errors = exc.errors
    except SuiteError as exc:
        errors = [exc]
    return [str(e).replace(str(tmp_path) + "/", "") for e in errors]


def test_offers_of_the_cases_tools_validate(tmp_path: Path) -> None:
    assert _errors(tmp_path, SUITE) == []
    # a case without 'tools' has every suite tool: any of them may be held back
    assert _errors(tmp_path, SUITE.replace("    tools: [lookup, sort]\n", "")) == []


@pytest.mark.parametrize(
    ("new", "found"),
    [
        (
            "{offer: [sortt], say: hi}",
            "suite.yaml:19:20: cases[0].user.script[1].offer[0]: unknown tool 'sortt' (did "
            "you mean 'sort'?): the suite defines no such tool",
        ),
        (
            "{offer: [delete], say: hi}",
            "suite.yaml:19:20: cases[0].user.script[1].offer[0]: tool 'delete' is not one of "
            "the case's tools: list it in the case's 'tools' too (a tool offered later is held "
            "back until then)",
        ),
        (
            "{offer: [sort, sort], say: hi}",
            "suite.yaml:19:26: cases[0].user.script[1].offer[1]: tool 'sort' is offered twice "
            "in this entry",
        ),
        (
            "{offer: [], say: hi}",
            "suite.yaml:19:12: cases[0].user.script[1].offer: ",
        ),
        (
            "{offer: sort, say: hi}",
            "suite.yaml:19:12: cases[0].user.script[1].offer: Input should be a valid list, "
            "got 'sort'",
        ),
        (
            "{offer: [1], say: hi}",
            "suite.yaml:19:20: cases[0].user.script[1].offer[0]: Input should be a valid "
            "string, got 1",
        ),
        (
            "{offer: [null], say: hi}",
            "suite.yaml:19:20: cases[0].user.script[1].offer[0]: Input should be a valid "
            "string, got None",
        ),
        (
            "{offer: [[sort]], say: hi}",
            "suite.yaml:19:20: cases[0].user.script[1].offer[0]: Input should be a valid "
            "string, got ['sort']",
        ),
        (
            "{when: {contains: x}, offer: [], say: hi}",
            "suite.yaml:19:33: cases[0].user.script[1].offer: List should have at least 1 item",
        ),
        (
            "{call: {tool: 1}, say: hi}",
            "suite.yaml:19:19: cases[0].user.script[1].call.tool: Input should be a valid "
            "string, got 1",
        ),
    ],
)
def test_an_offer_the_case_cannot_make_is_a_located_error(
    tmp_path: Path, new: str, found: str
) -> None:
    text = SUITE.replace('{offer: [sort], say: "More tools. What about now?"}', new)
    errors = _errors(tmp_path, text)
    # one line: not the plain entry's, the rule's or the entry's other alternatives too
    assert len(errors) == 1 and errors[0].startswith(found), errors


def test_a_name_given_many_times_gives_three_lines_and_a_count(tmp_path: Path) -> None:
    data = yaml.safe_load(SUITE)
    data["cases"][0]["user"]["script"][1]["offer"] = ["sort"] * 5_000
    errors = _errors(tmp_path, yaml.safe_dump(data, sort_keys=False))
    assert [e.split(": ", 1)[1] for e in errors] == [
        "cases[0].user.script[1].offer[1]: tool 'sort' is offered twice in this entry",
        "cases[0].user.script[1].offer[2]: tool 'sort' is offered twice in this entry",
        "cases[0].user.script[1].offer[3]: tool 'sort' is offered twice in this entry",
        "cases[0].user.script[1].offer[4]: tool 'sort' is offered twice in this entry, and "
        "4995 more names here are given again",
    ]


def test_validate_refuses_an_unknown_offer_with_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        SUITE.replace("offer: [sort], say", "offer: [shred], say"), encoding="utf-8"
    )
    result = toolproof("validate", str(tmp_path))
    assert result.returncode == 2
    assert (
        f"{tmp_path}/suite.yaml:19:20: cases[0].user.script[1].offer[0]: unknown tool "
        "'shred': the suite defines no such tool"
    ) in result.stderr + result.stdout


def test_a_huge_offer_list_is_refused_quickly_with_a_few_lines(tmp_path: Path) -> None:
    data = yaml.safe_load(SUITE)
    data["cases"][0]["user"]["script"][1]["offer"] = [f"t{i}" for i in range(100_000)]
    text = yaml.safe_dump(data, sort_keys=False)
    started = time.perf_counter()
    errors = _errors(tmp_path, text)
    elapsed = time.perf_counter() - started
    assert [e.split(": ", 1)[1] for e in errors] == [
        "cases[0].user.script[1].offer[0]: unknown tool 't0': the suite defines no such tool",
        "cases[0].user.script[1].offer[1]: unknown tool 't1': the suite defines no such tool",
        "cases[0].user.script[1].offer[2]: unknown tool 't2': the suite defines no such tool",
        "cases[0].user.script[1].offer[3]: unknown tool 't3', and 99996 more names here the "
        "suite does not define",
    ]
    assert elapsed < 60  # a bound against a hang, not a speed figure

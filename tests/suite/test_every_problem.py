"""`validate` lists every problem in one pass: structural and semantic together.

The user's steps: a suite with a misspelt `promt` and `tgs`, and, in a case that
parsed, an expectation naming an unknown tool. Before, validate reported the two
structural errors and stopped; the unknown tool came only after they were fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_support import toolproof
from toolproof.errors import SuiteProblems
from toolproof.suite import load_suite

SUITE = """\
suite: first
tools:
  - name: lookup_order
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
cases:
  - id: a
    promt: "Where is ORD-1?"
    expect: {call: lookup_order, args: {order_id: ORD-1}}
  - id: b
    prompt: "Where is ORD-2?"
    tgs: [smoke]
    expect: {call: lookup_order, args: {order_id: ORD-2}}
  - id: c
    prompt: "Find orders of Jana"
    expect: {call: search_orders, args: {customer: Jana}}
"""


def test_validate_prints_structural_and_semantic_problems_together(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    done = toolproof("validate", "suite.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: suite.yaml:7:5: cases[0].promt: unknown key 'promt'; did you mean 'prompt'?",
        "error: suite.yaml:11:5: cases[1].tgs: unknown key 'tgs'; did you mean 'tags'?",
        "error: suite.yaml:15:14: cases[2].expect.call: unknown tool 'search_orders' "
        "(known: lookup_order)",
        "3 problems in suite.yaml",
    ]


def test_a_tool_that_did_not_parse_does_not_make_its_cases_unknown(tmp_path: Path) -> None:
    broken = SUITE.replace("  - name: lookup_order\n", "  - nme: lookup_order\n")
    (tmp_path / "suite.yaml").write_text(broken, encoding="utf-8")
    with pytest.raises(SuiteProblems) as caught:
        load_suite(tmp_path / "suite.yaml")
    messages = [e.detail for e in caught.value.errors]
    assert not any("unknown tool" in m for m in messages), messages
    assert any("nme" in m for m in messages)

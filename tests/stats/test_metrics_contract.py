"""Every figure agrees with the verdicts: answers that pass a suite score perfectly.

For any suite (one-step and multi-step cases, every kind and order, with and
without a trajectory) and answers built to meet each case's contract, every
attempt passes and the decision precision, recall and F1, the tool macro-F1,
tool selection and argument accuracy are all 1, with a diagonal confusion
matrix (docs/metrics-multistep.md says what a multi-step case expects).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.cli_support import ROOT, toolproof
from toolproof.evaluate import evaluate
from toolproof.types import Message, Record, Response, Suite, ToolCall

TOOLS = ["t0", "t1", "t2"]
ORDERS = ["strict", "unordered", "subset", "superset"]
REPLIES = {
    "text": "Done.",
    "none": "",
    "clarify": "Which order do you mean?",
    "confirm": "Shall I go ahead?",
    "refuse": "I can't help with that.",
}


def _suite(cases: list[dict[str, Any]]) -> Suite:
    tool = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    return Suite.model_validate(
        {"name": "p", "tools": [{"name": t, "parameters": tool} for t in TOOLS], "cases": cases}
    )


def _call(n: int, tool: str, x: int) -> ToolCall:
    return ToolCall(id=f"c{n}", name=tool, arguments={"x": x}, raw_arguments=json.dumps({"x": x}))


expected_calls = st.lists(
    st.tuples(st.sampled_from(TOOLS), st.integers(0, 9)), min_size=1, max_size=3, unique=True
)
extra_calls = st.lists(st.tuples(st.sampled_from(TOOLS), st.integers(10, 19)), max_size=2)
some_calls = st.lists(st.tuples(st.sampled_from(TOOLS), st.integers(10, 19)), min_size=1, max_size=2)


@st.composite
def _made(draw: st.DrawFn, expected: list[tuple[str, int]], order: str) -> list[tuple[str, int]]:
    """Calls that meet ``expected`` under ``order`` (kept in order but for unordered)."""
    calls = list(expected)
    if order == "subset":
        keep = draw(st.lists(st.booleans(), min_size=len(calls), max_size=len(calls)))
        calls = [c for c, k in zip(calls, keep, strict=True) if k] or calls[:1]
    if order == "unordered":
        calls = draw(st.permutations(calls))
    if order == "superset":
        for extra in draw(extra_calls):
            calls.insert(draw(st.integers(0, len(calls))), extra)
    return calls


@st.composite
def one_step(draw: st.DrawFn, case_id: str) -> tuple[dict[str, Any], list[tuple[str, int]], str]:
    """A one-step case, the calls of an answer that passes it, and the answer's text."""
    shape = draw(st.sampled_from(["calls", "any", *REPLIES]))
    if shape == "calls":
        expected, order = draw(expected_calls), draw(st.sampled_from(ORDERS))
        spec = [{"tool": t, "args": {"x": x}} for t, x in expected]
        case = {"id": case_id, "prompt": "p", "expect": {"calls": spec, "order": order}}
        return case, draw(_made(expected, order)), ""
    if shape == "any":
        case = {"id": case_id, "prompt": "p", "expect": {"kind": "call", "count": {"min": 1}}}
        return case, draw(some_calls), ""
    return {"id": case_id, "prompt": "p", "expect": {"kind": shape}}, [], REPLIES[shape]


@st.composite
def multi_step(
    draw: st.DrawFn, case_id: str
) -> tuple[dict[str, Any], list[tuple[str, int]], str]:
    """A multi-step case, the calls of a conversation that passes it, and its last reply."""
    kind = draw(st.sampled_from([None, "call", "text", "confirm", "refuse", "clarify", "none"]))
    case: dict[str, Any] = {"id": case_id, "prompt": "p", "max_steps": 8}
    reply = REPLIES.get(kind or "text", "Done.") or "Done."
    if kind in ("clarify", "none"):  # no call allowed
        case["expect"] = {"kind": kind}
        return case, [], reply
    if draw(st.booleans()):  # a trajectory bounds the calls
        expected, order = draw(expected_calls), draw(st.sampled_from(ORDERS))
        steps = [{"tool": t, "args": {"x": x}} for t, x in expected]
        case["trajectory"] = {"mode": order, "steps": steps}
        if kind is not None and kind != "call":
            case["expect"] = {"kind": kind}
        return case, draw(_made(expected, order)), reply
    if kind in (None, "call"):
        case["expect"] = {"kind": "call", "count": {"min": 1}}
        return case, draw(some_calls), reply
    case["expect"] = {"kind": kind}  # calls allowed, none required
    return case, draw(extra_calls), reply


def _record(case: dict[str, Any], calls: list[tuple[str, int]], text: str) -> Record:
    made = [_call(n, t, x) for n, (t, x) in enumerate(calls)]
    if "max_steps" not in case:
        return Record(case_id=case["id"], target="m", response=Response(text=text, tool_calls=made))
    transcript = [Message(role="user", content="p")]
    for c in made:  # one call a step, each answered
        transcript.append(Message(role="assistant", content=None, tool_calls=[c]))
        transcript.append(Message(role="tool", content='{"ok": true}', tool_call_id=c.id))
    transcript.append(Message(role="assistant", content=text))
    return Record(
        case_id=case["id"], target="m", response=Response(text=text), transcript=transcript
    )


@st.composite
def suites(draw: st.DrawFn) -> tuple[Suite, list[Record]]:
    n = draw(st.integers(1, 8))
    drawn = [draw(st.one_of(one_step(f"c{i}"), multi_step(f"c{i}"))) for i in range(n)]
    return _suite([c for c, _, _ in drawn]), [_record(c, calls, t) for c, calls, t in drawn]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(suites())
def test_answers_that_pass_score_perfectly(drawn: tuple[Suite, list[Record]]) -> None:
    suite, records = drawn
    ev = evaluate(suite, records)
    failed = [(v.case_id, [c.message for c in v.checks]) for v in ev.targets["m"].verdicts]
    assert all(v.passed for v in ev.targets["m"].verdicts), failed
    s = ev.summaries["m"]
    assert s.strict_pass.k == s.strict_pass.n == len(records)
    assert s.selection.k == s.selection.n
    assert s.arguments.k == s.arguments.n
    assert s.no_call_accuracy.k == s.no_call_accuracy.n
    matrix = s.confusion.matrix
    off = [
        (s.confusion.labels[i], s.confusion.labels[j], c)
        for i, row in enumerate(matrix)
        for j, c in enumerate(row)
        if i != j and c
    ]
    assert off == []
    if s.selection.n:  # some attempt expects a call
        assert (s.decision.precision, s.decision.recall, s.decision.f1) == (1.0, 1.0, 1.0)
    if matrix:
        assert s.macro_f1 == 1.0


def test_the_support_examples_perfect_run_has_perfect_figures(tmp_path: Path) -> None:
    """The user's steps: `toolproof run examples/support --model scripted:… --allow-code`
    passes every case, and its decision figures and macro-F1 say so too."""
    support = ROOT / "examples" / "support"
    args = ["run", str(support), "--model", f"scripted:{support / 'script.yaml'}"]
    done = toolproof(*args, "--allow-code", "-o", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "all 80 scored attempts passed" in done.stdout
    (figures,) = json.loads((tmp_path / "run" / "summary.json").read_text())["targets"].values()
    assert figures["decision"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert figures["macro_f1"] == 1.0
    matrix = figures["confusion"]["matrix"]
    assert all(c == 0 for i, row in enumerate(matrix) for j, c in enumerate(row) if i != j)

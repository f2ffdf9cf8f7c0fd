import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.gate import builders as b
from toolproof.gate import GateResult, run_gate
from toolproof.report import gate_json, render_junit, render_markdown
from toolproof.report._escape import md_code_block, md_text

SNAPSHOTS = Path(__file__).parent / "snapshots"
LENIENT = {"default": {"strict_pass": 0.5, "arguments": 0.5, "selection": 0.5}}


def _result() -> GateResult:
    """Baseline all good; the new run has a flaky case, a steady failure, a new critical one."""
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old", repeats=3)
    answers = {("l01", 1): b.wrong_args("l01")}
    answers |= {("l02", a): b.wrong_args("l02") for a in range(3)}
    answers |= {("cancel", a): b.reply("Cancelled.") for a in range(3)}
    return run_gate(b.run(s, "new", repeats=3, answers=answers), base)


def test_junit_parses_back_with_one_testcase_per_case() -> None:
    root = ET.fromstring(render_junit(_result()))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert len(cases) == len(b.LOW) + 2 + 1  # every case, plus the gate itself
    assert suite.get("tests") == str(len(cases))
    assert suite.get("failures") == "4"  # l01 (flaky), l02, cancel, the gate
    assert cases["l00"].find("failure") is None
    flaky = cases["l01"].find("failure")
    assert flaky is not None and flaky.get("message", "").startswith("flaky: passed 2/3")
    props = {p.get("name"): p.get("value") for p in cases["l01"].iter("property")}
    assert props["flaky"] == "true" and props["passes"] == "2/3" and props["risk"] == "low"
    steady = cases["l02"].find("failure")
    assert steady is not None and steady.get("type") == "wrong_arguments"
    assert 'expected "ORD-000002", got "ORD-999999"' in (steady.text or "")
    gate = cases["(release gate)"].find("failure")
    assert gate is not None and "new critical failure: cancel" in (gate.text or "")


def test_junit_survives_hostile_target_names() -> None:
    s = b.suite()
    hostile = 'm"<x>&\x01'
    text = render_junit(run_gate(b.run(s, hostile)))
    root = ET.fromstring(text)
    assert root.find("testsuite") is not None


def test_markdown_snapshot() -> None:
    expected = (SNAPSHOTS / "gate.md").read_text("utf-8")
    assert render_markdown(_result()) == expected


def test_markdown_escapes_model_output_and_names() -> None:
    s = b.suite(thresholds=LENIENT)
    evil = "<img src=x onerror=alert(1)> | **bold** [link](http://x) @team"
    answer = b.reply(None, b.call("lookup_order", '{"order_id": "```</details><script>"}'))
    text = render_markdown(run_gate(b.run(s, evil, answers={("l00", 0): answer})))
    outside, fence = [], ""
    for line in text.splitlines():
        if fence and line == fence:
            fence = ""
        elif not fence and line.startswith("```"):
            fence = line.rstrip("abcdefghijklmnopqrstuvwxyz")
        elif not fence:
            outside.append(line)
    assert not any("<img" in line or "<script" in line for line in outside)
    assert '"```</details><script>"' in text  # kept verbatim, inside the code block
    assert "&lt;img src=x onerror=alert(1)&gt; \\| \\*\\*bold\\*\\* \\[link\\]" in text
    assert "@team" not in text
    # the model's backticks cannot close the code block: the fence is longer
    assert "\n````\n" in text


def test_md_helpers() -> None:
    assert md_text("a|b\nc") == "a\\|b c"
    assert md_text("<b>&") == "&lt;b&gt;&amp;"
    assert md_code_block("x ``` y") == "````\nx ``` y\n````"


def test_gate_json_has_format_and_decision() -> None:
    data = json.loads(json.dumps(gate_json(_result())))
    assert data["format"] == "toolproof.gate/1"
    assert data["exit_code"] == 1 and data["passed"] is False
    t = data["targets"][0]
    assert t["summary"]["stability"]["flaky"] == ["l01"]
    assert t["comparison"]["new_critical_failures"] == ["cancel"]


def test_markdown_names_pass_at_1_once_with_one_attempt_per_case() -> None:
    """k = 1: pass@1, pass@k and pass^k are one figure; the summary printed
    `pass@1 25.0% · pass@1 25.0%`."""
    s = b.suite(thresholds=LENIENT)
    text = render_markdown(run_gate(b.run(s, "m", answers={("l01", 0): b.wrong_args("l01")})))
    (line,) = [line for line in text.splitlines() if line.startswith("pass@")]
    assert line.count("pass@1") == 1 and "pass^1" not in line, line
    assert line.startswith("pass@1 ") and "flaky 0" in line

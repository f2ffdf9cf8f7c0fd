"""JUnit XML: one testcase per case and target, plus one for the gate itself.

A case fails when any of its attempts failed; the failure message is the
first failing attempt's reasons and its body the expected-vs-actual diff.
Flaky cases (mixed outcomes) are failures too, named as flaky in the message
and marked with a ``flaky`` property, so CI dashboards show them. A failure a
judge decided (a judge-decided argument) says so in its message, with the
judge's model and calibration, and carries a ``judge`` property; advisory
judge-derived findings go to the gate testcase's ``system-out``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from toolproof.gate import GateResult, TargetGate
from toolproof.report._escape import xml_text
from toolproof.report._judged import JUDGE_MARK, JUDGE_WORDS, status_text
from toolproof.stats import CaseStability, FailureItem
from toolproof.types import ARGUMENT_RUBRIC


def _property(parent: ET.Element, name: str, value: str) -> None:
    props = parent.find("properties")
    if props is None:
        props = ET.SubElement(parent, "properties")
    ET.SubElement(props, "property", name=name, value=xml_text(value))


def _case(
    suite_el: ET.Element,
    classname: str,
    case: CaseStability,
    fails: list[FailureItem],
    judged: str = "",
) -> bool:
    """One case's testcase; ``judged`` (the judge's words) marks a failure a judge decided."""
    el = ET.SubElement(suite_el, "testcase", classname=classname, name=xml_text(case.case_id))
    _property(el, "risk", case.risk.value)
    _property(el, "passes", f"{case.passes}/{case.attempts}")
    if case.tags:
        _property(el, "tags", ",".join(case.tags))
    if not fails:
        return False
    _property(el, "flaky", "true" if case.flaky else "false")
    first = fails[0]
    kind = "flaky" if case.flaky else "failed"
    message = f"{kind}: passed {case.passes}/{case.attempts}; " + "; ".join(first.reasons)
    if judged:
        message = f"{JUDGE_MARK} {JUDGE_WORDS} ({judged}): {message}"
        _property(el, "judge", judged)
    body = []
    for item in fails:
        body += [f"attempt {item.attempt}: {item.failure.value}", *item.reasons, item.diff, ""]
    failure = ET.SubElement(el, "failure", message=xml_text(message), type=first.failure.value)
    failure.text = xml_text("\n".join(body).strip())
    return True


def _target(root: ET.Element, suite: str, t: TargetGate) -> None:
    s = t.summary
    name = f"{suite} · {t.target}"
    el = ET.SubElement(root, "testsuite", name=xml_text(name))
    _property(el, "target", t.target)
    _property(el, "gate", "passed" if t.passed else "failed")
    _property(el, "cached", f"{s.cached}/{s.attempts}")
    by_case: dict[str, list[FailureItem]] = {}
    for item in s.failures:
        by_case.setdefault(item.case_id, []).append(item)
    classname = xml_text(f"toolproof.{suite}.{t.target}")
    cases = s.stability.per_case if s.stability else []
    judge = "; ".join(status_text(j) for j in t.judges if j.field.startswith(ARGUMENT_RUBRIC))
    judged = set(t.judge_decided_failures)
    failed = sum(
        _case(
            el,
            classname,
            c,
            by_case.get(c.case_id, []),
            (judge or "a judge-decided argument") if c.case_id in judged else "",
        )
        for c in cases
    )
    gate = ET.SubElement(el, "testcase", classname=classname, name="(release gate)")
    blocking = [f.message for f in t.findings if f.blocking]
    if blocking:
        failed += 1
        f = ET.SubElement(gate, "failure", message=xml_text(blocking[0]), type="gate")
        f.text = xml_text("\n".join(blocking))
    advisory = [f.message for f in t.findings if f.rule == "advisory"]
    if advisory:  # judge-derived, not blocking: shown, with why
        out = ET.SubElement(gate, "system-out")
        out.text = xml_text("\n".join(advisory))
    el.set("tests", str(len(cases) + 1))
    el.set("failures", str(failed))
    el.set("errors", "0")
    el.set("skipped", "0")


def render_junit(result: GateResult) -> str:
    """The gate result as JUnit XML text."""
    root = ET.Element("testsuites", name=xml_text(f"toolproof {result.suite}"))
    for t in result.targets:
        _target(root, result.suite, t)
    root.set("tests", str(sum(int(s.get("tests", "0")) for s in root)))
    root.set("failures", str(sum(int(s.get("failures", "0")) for s in root)))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

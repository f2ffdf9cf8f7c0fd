"""What differs between two runs is said once, naming the part that changed.

A run made with `--tools FILE` differs from one made with the suite's tools in
its tools alone; `compare` warned "suite fingerprint differs", "tool schemas
differs" and "tools from differs" for it, as if the suite had changed too.
"""

from __future__ import annotations

from typing import Any

from tests.gate import builders as b
from toolproof.evaluate import Evaluation, evaluate
from toolproof.gate import fingerprint_differences, fingerprint_warnings
from toolproof.types import Suite


def _tools_run(s: Suite, source: str = "tools.yaml") -> Evaluation:
    """A run of ``s`` whose tools were replaced (one description edited), as `run --tools`."""
    tools = [t.model_copy() for t in s.tools]
    tools[0] = tools[0].model_copy(update={"description": "Edited."})
    replaced = s.with_tools(tools, source)
    m = b.manifest(replaced, "t").model_copy(update={"tools_source": source})
    return evaluate(replaced, b.records(replaced, "t"), source="t.jsonl", manifest=m)


def test_a_tools_run_warns_once_that_the_tools_differ() -> None:
    s = b.suite()
    warnings = fingerprint_warnings(b.run(s), _tools_run(s))
    assert len(warnings) == 1, warnings
    (line,) = warnings
    assert line.startswith("tools from differs: the suite (baseline) vs --tools tools.yaml; ")
    assert "tool schemas" in line and "suite fingerprint" not in line


def test_a_suite_changed_besides_its_tools_is_named_too() -> None:
    s = b.suite()
    changed = s.model_copy(update={"description": "another suite"})
    warnings = fingerprint_warnings(b.run(s), _tools_run(changed))
    assert [w.split(" differs")[0] for w in warnings] == ["suite fingerprint", "tools from"]


def test_differences_of_stored_fingerprints_say_when_the_rest_is_not_known() -> None:
    fa: dict[str, Any] = {"suite fingerprint": "a", "tool schemas": "x", "tools from": "the suite"}
    fb: dict[str, Any] = {"suite fingerprint": "b", "tool schemas": "y", "tools from": "--tools t"}
    lines = fingerprint_differences(fa, fb, ("A", "B"), rest_same=None)
    assert lines[0] == (
        "suite fingerprint differs: a (A) vs b (B) (its tools differ; whether the rest of "
        "the suite does is not known)"
    )
    assert lines[1] == "tools from differs: the suite (A) vs --tools t (B); tool schemas x vs y"
    assert fingerprint_differences(fa, fb, ("A", "B"), rest_same=True) == lines[1:]
    same_source = {**fb, "tools from": "the suite"}
    assert fingerprint_differences(fa, same_source, ("A", "B"), rest_same=True) == [
        "tool schemas differs: x (A) vs y (B)"
    ]


def test_a_run_graded_with_another_suite_than_it_was_made_with_is_said() -> None:
    """`gate RUN --suite EDITED`: the records are graded against a suite whose contract
    changed since the run; the gate says so, with both fingerprints."""
    from toolproof.gate import run_gate

    s = b.suite()
    made = b.manifest(s)
    assert not [w for w in run_gate(b.run(s)).warnings if "made with" in w]
    edited = s.model_copy(update={"description": "edited after the run"})
    run = evaluate(edited, b.records(edited), source="m.jsonl", manifest=made)
    (line,) = [w for w in run_gate(run).warnings if "made with" in w]
    assert line.startswith("the suite differs from the one this run was made with")
    assert made.suite_fingerprint in line and edited.fingerprint() in line

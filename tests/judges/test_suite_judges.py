"""Suites opt cases into judges; rubrics, fields and thresholds are checked at load, with places."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.judges import case_rubrics, rubric_named
from toolproof.suite import load_suite

HEAD = """suite: s
tools:
  - name: lookup_order
    parameters: {type: object, properties: {order_id: {type: string}}}
"""


def load(tmp_path: Path, text: str) -> object:
    (tmp_path / "suite.yaml").write_text(HEAD + text, encoding="utf-8")
    return load_suite(tmp_path / "suite.yaml")


def error(tmp_path: Path, text: str) -> str:
    with pytest.raises(SuiteError) as info:
        load(tmp_path, text)
    return str(info.value)


def test_cases_opt_in_and_custom_rubrics_load(tmp_path: Path) -> None:
    suite = load(
        tmp_path,
        """judge:
  default: [trajectory, tone]
  rubrics:
    tone:
      instructions: Is the reply polite?
      fields:
        polite: {type: bool}
        severity: {type: int, min: 0, max: 3}
        kind: {type: enum, values: [greeting, answer]}
  thresholds: {tone.polite: {min: 0.9}, trajectory.dangerous_calls: {max: 0}}
cases:
  - {id: a, prompt: hi, expect: {kind: text}, judge: true}
  - {id: b, prompt: hi, expect: {kind: text}, judge: [selection]}
  - {id: c, prompt: hi, expect: {kind: text}}
""",
    )
    from toolproof.types import Suite

    assert isinstance(suite, Suite)
    assert [case_rubrics(suite, c) for c in suite.cases] == [
        ["trajectory", "tone"],
        ["selection"],
        [],
    ]
    assert rubric_named(suite, "tone").fields["severity"].max == 3


def test_judges_do_not_change_the_suite_fingerprint(tmp_path: Path) -> None:
    from toolproof.types import Suite

    plain = load(tmp_path, "cases:\n  - {id: a, prompt: hi, expect: {kind: text}}\n")
    judged = load(
        tmp_path,
        "judge: {default: [reply]}\ncases:\n  - {id: a, prompt: hi, expect: {kind: text}, judge: true}\n",
    )
    assert isinstance(plain, Suite) and isinstance(judged, Suite)
    assert plain.fingerprint() == judged.fingerprint()


def test_an_unknown_rubric_in_a_case_is_located(tmp_path: Path) -> None:
    msg = error(
        tmp_path, "cases:\n  - {id: a, prompt: hi, expect: {kind: text}, judge: [trajectroy]}\n"
    )
    assert msg.startswith(str(tmp_path / "suite.yaml") + ":6:")
    assert "cases[0].judge[0]: unknown rubric 'trajectroy'" in msg


def test_judge_true_needs_a_default(tmp_path: Path) -> None:
    msg = error(tmp_path, "cases:\n  - {id: a, prompt: hi, expect: {kind: text}, judge: true}\n")
    assert "cases[0].judge: 'judge: true' needs the suite's judge.default rubrics" in msg


@pytest.mark.parametrize(
    ("block", "where", "text"),
    [
        (
            "rubrics: {t: {instructions: x, fields: {k: {type: enum}}}}",
            "judge.rubrics.t.fields.k",
            "an enum field needs a non-empty 'values' list",
        ),
        (
            "rubrics: {t: {instructions: x, fields: {n: {type: int, min: 3, max: 1}}}}",
            "judge.rubrics.t.fields.n",
            "'max' (1) is below 'min' (3)",
        ),
        (
            "rubrics: {t: {instructions: x, fields: {reasoning: {type: bool}}}}",
            "judge.rubrics.t",
            "'reasoning' is always asked for",
        ),
        (
            "rubrics: {selection: {instructions: x, fields: {a: {type: bool}}}}",
            "judge",
            "rubric 'selection' is built in",
        ),
        (
            "thresholds: {selection.nope: {min: 0.5}}",
            "judge.thresholds.selection.nope",
            "not a RUBRIC.FIELD of a known rubric",
        ),
        (
            "thresholds: {trajectory.reached_goal: {max: 1}}",
            "judge.thresholds.trajectory.reached_goal",
            "'max' needs an int field",
        ),
        (
            "thresholds: {trajectory.reached_goal: {min: 0.5, max: 1}}",
            "judge.thresholds",
            "give exactly one of 'min'",
        ),
    ],
)
def test_bad_judge_settings_are_one_located_error(
    tmp_path: Path, block: str, where: str, text: str
) -> None:
    msg = error(
        tmp_path, f"judge: {{{block}}}\ncases:\n  - {{id: a, prompt: hi, expect: {{kind: text}}}}\n"
    )
    assert str(tmp_path / "suite.yaml") + ":5:" in msg
    assert where in msg and text in msg


def test_the_example_suite_has_judge_scored_cases() -> None:
    suite = load_suite("examples/support")
    judged = [c.id for c in suite.cases if case_rubrics(suite, c)]
    assert "judge-jana-processing" in judged and len(judged) >= 5

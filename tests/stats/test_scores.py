"""Decision and confusion scores: scikit-learn's definitions, without its single-label warning."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.stats._summary import confusion_scores, decision_scores

sklearn_metrics = pytest.importorskip("sklearn.metrics")

PAIRS = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=30)
LABELLED = st.lists(
    st.tuples(st.sampled_from("abc") | st.just("(none)"), st.sampled_from("abcd")),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(PAIRS)
def test_decision_scores_match_scikit_learn(pairs: list[tuple[bool, bool]]) -> None:
    truth, pred = [t for t, _ in pairs], [p for _, p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sklearn_metrics.precision_recall_fscore_support(
            truth, pred, labels=[False, True], average="binary", pos_label=True, zero_division=0
        )
    assert all(
        math.isclose(a, float(b))
        for a, b in zip(decision_scores(truth, pred), ref[:3], strict=True)
    )


@settings(max_examples=200, deadline=None)
@given(LABELLED)
def test_confusion_scores_match_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    truth, pred = [t for t, _ in pairs], [p for _, p in pairs]
    labels, matrix, macro = confusion_scores(truth, pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_matrix = sklearn_metrics.confusion_matrix(truth, pred, labels=labels).tolist()
        ref_macro = sklearn_metrics.f1_score(
            truth, pred, labels=labels, average="macro", zero_division=0
        )
    assert matrix == ref_matrix and math.isclose(macro, float(ref_macro))


def test_a_single_label_suite_scores_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert confusion_scores(["a", "a"], ["a", "a"]) == (["a"], [[2]], 1.0)
        assert decision_scores([True, True], [True, True]) == (1.0, 1.0, 1.0)


def test_score_on_a_small_suite_prints_no_warning(tmp_path: Path) -> None:
    from tests.run.conftest import right_answer, write_suite
    from toolproof.types import Record

    suite = write_suite(tmp_path / "suite")
    records = tmp_path / "r.jsonl"
    lines = [
        Record(
            case_id=f"case-{i}", target="m", response=right_answer(f"case-{i}")
        ).model_dump_json()
        for i in range(6)
    ]
    records.write_text("\n".join(lines) + "\n")
    out = subprocess.run(
        [sys.executable, "-W", "default", "-m", "toolproof", "score", str(suite), str(records)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr and "single label" not in out.stderr

"""Decision and confusion scores: by hand, against scikit-learn, and without a single-label warning."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from toolproof.stats._summary import confusion_scores, decision_scores


def test_decision_scores_by_hand() -> None:
    # truth: call expected; pred: a call was made. tp=2, fp=1, fn=1, tn=1
    truth = [True, True, True, False, False]
    pred = [True, True, False, True, False]
    p, r, f = decision_scores(truth, pred)
    assert (p, r) == pytest.approx((2 / 3, 2 / 3))
    assert f == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))


def test_confusion_scores_by_hand() -> None:
    truth = ["lookup", "lookup", "search", "(none)"]
    pred = ["lookup", "search", "search", "lookup"]
    labels, matrix, macro = confusion_scores(truth, pred)
    assert labels == ["lookup", "search", "(none)"]  # "(none)" last
    assert matrix == [[1, 1, 0], [0, 1, 0], [1, 0, 0]]
    # F1 per label: lookup 2*1/(2+1+1)=0.5, search 2*1/(2+1+0)=2/3, (none) 0
    assert macro == pytest.approx((0.5 + 2 / 3 + 0) / 3)


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


def test_scores_are_scikit_learns_to_the_last_bit() -> None:
    import random

    from sklearn.metrics import confusion_matrix, f1_score, precision_recall_fscore_support

    rng = random.Random(7)
    names = ["a", "b", "c", "d", "(none)"]
    for size in (1, 2, 5, 40, 333):
        truth = [rng.choice(names[: rng.randint(1, 5)]) for _ in range(size)]
        pred = [rng.choice(names) for _ in range(size)]
        labels, matrix, macro = confusion_scores(truth, pred)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert matrix == confusion_matrix(truth, pred, labels=labels).tolist()
            assert macro == float(
                f1_score(truth, pred, labels=labels, average="macro", zero_division=0)
            )
            t = [x != "(none)" for x in truth]
            p = [x != "(none)" for x in pred]
            want = precision_recall_fscore_support(
                t, p, labels=[False, True], average="binary", pos_label=True, zero_division=0
            )[:3]
        assert decision_scores(t, p) == tuple(float(x) for x in want)

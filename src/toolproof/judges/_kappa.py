"""Agreement between a judge and human labels: Cohen's κ, its bootstrap interval, confusion."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import numpy as np

Weights = Literal["linear", "quadratic"] | None


class Agreement(BaseModel):
    """How well a judge's values for one field agree with the labels."""

    model_config = ConfigDict(extra="forbid")

    field: str
    n: int
    kappa: float | None
    weights: str | None
    low: float | None
    high: float | None
    agreement: float | None
    labels: list[str]
    confusion: list[list[int]]
    """Rows: human label; columns: judge value; in the order of ``labels``."""


def kappa(human: Sequence[object], judge: Sequence[object], weights: Weights = None) -> float:
    """Cohen's κ (scikit-learn). 1.0 when both raters use one and the same value throughout.

    Weighted κ weighs a disagreement by the distance between the integer
    values themselves (every integer between the smallest and the largest
    value is a category), not by their rank among the values seen.
    """
    if len(human) != len(judge) or not human:
        raise ValueError("kappa needs two equally long, non-empty sequences")
    h, j, labels = _encode(human, judge, weights)
    return _kappa_codes(h, j, labels, weights)


def _encode(
    human: Sequence[object], judge: Sequence[object], weights: Weights
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    import numpy as np

    if weights is not None:
        ints = [int(x) for x in (*human, *judge)]  # type: ignore[call-overload]
        lo, hi = min(ints), max(ints)
        return (
            np.array([int(x) - lo for x in human]),  # type: ignore[call-overload]
            np.array([int(x) - lo for x in judge]),  # type: ignore[call-overload]
            list(range(hi - lo + 1)),
        )
    codes = _codes(human, judge)
    return (
        np.array([codes[x] for x in human]),
        np.array([codes[x] for x in judge]),
        list(range(len(codes))),
    )


def _kappa_codes(h: np.ndarray, j: np.ndarray, labels: list[int], weights: Weights) -> float:
    from sklearn.metrics import cohen_kappa_score

    if len(set(h.tolist()) | set(j.tolist())) == 1:
        return 1.0  # perfect agreement on a single category: κ's formula is 0/0
    return float(cohen_kappa_score(h, j, labels=labels, weights=weights))


def _codes(*seqs: Sequence[object]) -> dict[object, int]:
    ordered = sorted({x for s in seqs for x in s}, key=_order_key)
    return {x: i for i, x in enumerate(ordered)}


def _order_key(x: object) -> tuple[int, float, str]:
    if isinstance(x, bool):
        return (0, float(x), "")
    if isinstance(x, int | float):
        return (1, float(x), "")
    return (2, 0.0, str(x))


def _fast_kappa(h: np.ndarray, j: np.ndarray, k: int, weights: Weights) -> float:
    """κ from the confusion matrix, in numpy: the same formula as scikit-learn's, for resampling.

    (A test checks it against :func:`sklearn.metrics.cohen_kappa_score`.)
    """
    import numpy as np

    if len(set(h.tolist()) | set(j.tolist())) == 1:
        return 1.0
    confusion = np.bincount(h * k + j, minlength=k * k).reshape(k, k).astype(float)
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    grid = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    if weights is None:
        w = (grid > 0).astype(float)
    elif weights == "linear":
        w = grid
    else:
        w = grid**2
    denominator = float((w * expected).sum())
    if denominator == 0:
        return 0.0
    return 1.0 - float((w * confusion).sum()) / denominator


def bootstrap_interval(
    human: Sequence[object],
    judge: Sequence[object],
    weights: Weights = None,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of κ over items (pairs resampled together, scipy)."""
    import numpy as np
    from scipy.stats import bootstrap

    n = len(human)
    if n < 2:
        return None, None
    h, j, labels = _encode(human, judge, weights)

    def stat(idx: np.ndarray) -> float:
        pick = idx.astype(int)
        return _fast_kappa(h[pick], j[pick], len(labels), weights)

    res = bootstrap(
        (np.arange(n),),
        stat,
        vectorized=False,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def agreement(
    field: str,
    human: Sequence[object],
    judge: Sequence[object],
    weights: Weights = None,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> Agreement:
    """κ (weighted for counts), bootstrap interval, raw agreement, n and confusion matrix."""
    from sklearn.metrics import confusion_matrix

    n = len(human)
    if n == 0:
        return Agreement(
            field=field,
            n=0,
            kappa=None,
            weights=weights,
            low=None,
            high=None,
            agreement=None,
            labels=[],
            confusion=[],
        )
    codes = _codes(human, judge)
    labels = sorted(codes, key=codes.__getitem__)
    matrix = confusion_matrix(
        [codes[x] for x in human], [codes[x] for x in judge], labels=list(range(len(labels)))
    )
    low, high = bootstrap_interval(human, judge, weights, resamples=resamples, seed=seed)
    return Agreement(
        field=field,
        n=n,
        kappa=kappa(human, judge, weights),
        weights=weights,
        low=low,
        high=high,
        agreement=sum(1 for a, b in zip(human, judge, strict=True) if a == b) / n,
        labels=[_show(x) for x in labels],
        confusion=matrix.tolist(),
    )


def _show(x: object) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    return str(x)

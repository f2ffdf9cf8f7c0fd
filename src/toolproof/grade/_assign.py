"""Optimal pairing of expected calls with actual calls (never greedy)."""

from __future__ import annotations

from itertools import permutations

Pairs = list[tuple[int, int]]


def assign(cost: list[list[int]]) -> Pairs:
    """Minimum-cost pairing of rows (expected) with columns (actual).

    Pairs min(rows, cols) items. Small problems are solved exactly by
    enumeration (faster than building arrays); larger ones by the Hungarian
    method from scipy.
    """
    rows = len(cost)
    cols = len(cost[0]) if rows else 0
    if rows == 0 or cols == 0:
        return []
    if rows == 1:
        row = cost[0]
        return [(0, min(range(cols), key=row.__getitem__))]
    if cols == 1:
        return [(min(range(rows), key=lambda r: cost[r][0]), 0)]
    if max(rows, cols) <= 6:
        return _brute(cost, rows, cols)
    return _hungarian(cost)


def _brute(cost: list[list[int]], rows: int, cols: int) -> Pairs:
    best: Pairs = []
    best_cost = None
    if rows <= cols:
        for perm in permutations(range(cols), rows):
            total = sum(cost[r][c] for r, c in enumerate(perm))
            if best_cost is None or total < best_cost:
                best_cost, best = total, list(enumerate(perm))
    else:
        for perm in permutations(range(rows), cols):
            total = sum(cost[r][c] for c, r in enumerate(perm))
            if best_cost is None or total < best_cost:
                best_cost, best = total, [(r, c) for c, r in enumerate(perm)]
    return sorted(best)


def _hungarian(cost: list[list[int]]) -> Pairs:
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]

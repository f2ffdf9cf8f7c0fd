"""Optimal pairing (``grade._assign``): the pairing enumeration finds, however it is reached."""

import random
from itertools import permutations

from toolproof.grade._assign import assign


def _enumerated(cost: list[list[int]]) -> list[tuple[int, int]]:
    """The first pairing of least cost, in ``permutations`` order, written out plainly."""
    rows, cols = len(cost), len(cost[0])
    best: list[tuple[int, int]] = []
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


def test_small_pairings_are_the_enumerated_ones_ties_included() -> None:
    # costs as grading makes them (0 right, 1 wrong values, 100 another tool), ties often
    rng = random.Random(5)
    unique = 0
    for _ in range(20_000):
        rows, cols = rng.randint(2, 5), rng.randint(2, 5)
        values = rng.choice([[0, 1, 100], [0, 100], [0, 1], [0, 1, 2, 3, 100]])
        cost = [[rng.choice(values) for _ in range(cols)] for _ in range(rows)]
        got = assign(cost)
        assert got == _enumerated(cost), cost
        unique += len({c for _, c in got}) == len(got)
    assert unique == 20_000


def test_one_least_cost_per_row_in_distinct_places() -> None:
    assert assign([[0, 100, 100], [100, 100, 0]]) == [(0, 0), (1, 2)]
    assert assign([[100, 0], [0, 100], [100, 100]]) == [(0, 1), (1, 0)]
    # a tie: the first in enumeration order
    assert assign([[0, 0], [100, 100]]) == [(0, 0), (1, 1)]

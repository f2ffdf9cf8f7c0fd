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
    if rows == cols == 2:  # the two pairings, in ``permutations`` order (as ``_brute``)
        (a, b), (c, d) = cost
        return [(0, 0), (1, 1)] if a + d <= b + c else [(0, 1), (1, 0)]
    if max(rows, cols) <= 6:
        return _unique(cost, rows, cols) or _brute(cost, rows, cols)
    return _hungarian(cost)


def _unique(cost: list[list[int]], rows: int, cols: int) -> Pairs:
    """The pairing when each row (each column, when there are more rows) has its least cost
    in one place only and no two share that place: then it is the only optimal pairing, the
    one enumeration finds. Else empty."""
    out: Pairs = []
    taken: set[int] = set()
    if rows <= cols:
        for r, row in enumerate(cost):
            least = min(row)
            c = row.index(least)
            if c in taken or least in row[c + 1 :]:
                return []
            taken.add(c)
            out.append((r, c))
        return out
    for c, column in enumerate(zip(*cost, strict=True)):
        least = min(column)
        r = column.index(least)
        if r in taken or least in column[r + 1 :]:
            return []
        taken.add(r)
        out.append((r, c))
    out.sort()
    return out


def _brute(cost: list[list[int]], rows: int, cols: int) -> Pairs:
    """The first optimal pairing, enumerating in ``permutations`` order."""
    best: tuple[int, ...] = ()
    best_cost = None
    if rows <= cols:
        for perm in permutations(range(cols), rows):
            total = sum(map(list.__getitem__, cost, perm))
            if best_cost is None or total < best_cost:
                best_cost, best = total, perm
        return list(enumerate(best))
    columns = list(zip(*cost, strict=True))
    for perm in permutations(range(rows), cols):
        total = sum(map(tuple.__getitem__, columns, perm))
        if best_cost is None or total < best_cost:
            best_cost, best = total, perm
    return sorted((r, c) for c, r in enumerate(best))


def _hungarian(cost: list[list[int]]) -> Pairs:
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]

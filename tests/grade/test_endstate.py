"""End-state comparison: partial and full, with a readable diff."""

from __future__ import annotations

from toolproof.grade._endstate import compare_states, render_state_diff

ACTUAL = {
    "orders": {
        "ORD-1": {"status": "cancelled", "total": 100},
        "ORD-2": {"status": "open", "total": 50},
    },
    "refunds": {"RF-1": {"order_id": "ORD-1", "cents": 750}},
}


def test_partial_compares_only_listed_fields() -> None:
    expected = {"orders": {"ORD-1": {"status": "cancelled"}}}
    assert compare_states(expected, ACTUAL, partial=True) == []


def test_partial_reports_table_row_field_expected_and_actual() -> None:
    expected = {"orders": {"ORD-2": {"status": "cancelled"}}}
    diffs = compare_states(expected, ACTUAL, partial=True)
    assert len(diffs) == 1
    assert diffs[0].path == ("orders", "ORD-2", "status")
    assert diffs[0].render() == 'orders / ORD-2 / status: expected "cancelled", actual "open"'


def test_missing_rows_are_reported() -> None:
    diffs = compare_states({"orders": {"ORD-9": {"status": "open"}}}, ACTUAL, partial=True)
    assert diffs[0].render() == "orders / ORD-9: expected {'status': 'open'}, missing"


def test_full_comparison_reports_unexpected_rows() -> None:
    expected = {
        "orders": ACTUAL["orders"],
        "refunds": {},
    }
    diffs = compare_states(expected, ACTUAL, partial=False)
    assert [d.render() for d in diffs] == [
        "refunds / RF-1: not expected, found {'order_id': 'ORD-1', 'cents': 750}"
    ]


def test_full_comparison_of_equal_states_is_empty() -> None:
    assert compare_states(ACTUAL, {**ACTUAL}, partial=False) == []


def test_values_never_compare_across_types() -> None:
    diffs = compare_states(
        {"t": {"r": {"cents": 750}}}, {"t": {"r": {"cents": "750"}}}, partial=True
    )
    assert len(diffs) == 1


def test_render_limits_long_diffs() -> None:
    expected = {"t": {str(i): i for i in range(30)}}
    actual = {"t": {str(i): -i - 1 for i in range(30)}}
    text = render_state_diff(compare_states(expected, actual, partial=True), limit=5)
    assert text.count("\n") == 5
    assert text.endswith("... and 25 more differences")

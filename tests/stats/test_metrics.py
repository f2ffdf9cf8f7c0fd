"""The one metric table agrees with the thresholds a suite can set, the gate and the reports."""

from toolproof.gate._measured import LABELS
from toolproof.stats import METRICS, RATE_NAMES
from toolproof.types import Thresholds


def test_every_threshold_field_bounds_exactly_one_metric() -> None:
    fields = [m.threshold for m in METRICS if m.threshold is not None]
    assert sorted(fields) == sorted(Thresholds.model_fields)


def test_labels_and_rates_come_from_the_table() -> None:
    assert {m.name: m.label for m in METRICS} == LABELS
    assert tuple(m.name for m in METRICS if m.applies is not None) == RATE_NAMES
    assert len({m.name for m in METRICS}) == len(METRICS)

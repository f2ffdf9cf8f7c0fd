from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.run import Pricing
from toolproof.types import Usage


def test_a_known_model_costs_its_list_price() -> None:
    pricing = Pricing.default()
    cost = pricing.cost("openai:gpt-4.1-mini", Usage(input_tokens=1_000_000, output_tokens=0))
    assert cost == pytest.approx(pricing.prices["gpt-4.1-mini"].input)


def test_a_dated_snapshot_finds_its_model() -> None:
    pricing = Pricing.default()
    assert pricing.price("openai:x", "gpt-4.1-mini-2025-04-14") == pricing.prices["gpt-4.1-mini"]


def test_an_unknown_model_or_usage_costs_none() -> None:
    pricing = Pricing.default()
    assert pricing.cost("acme:mystery", Usage(input_tokens=10, output_tokens=10)) is None
    assert pricing.cost("openai:gpt-4.1-mini", None) is None
    assert pricing.cost("openai:gpt-4.1-mini", Usage()) is None


def test_a_pricing_file_overrides_and_extends(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  acme:mystery: {input: 1.0, output: 2.0}\n")
    pricing = Pricing.default().with_file(path)
    cost = pricing.cost("acme:mystery", Usage(input_tokens=1000, output_tokens=500))
    assert cost == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6)


def test_a_bad_pricing_entry_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  x: {input: 1.0}\n")
    with pytest.raises(SuiteError, match="output"):
        Pricing.default().with_file(path)


def test_a_local_model_costs_nothing_unless_the_table_prices_it(tmp_path: Path) -> None:
    pricing = Pricing.default()
    used = Usage(input_tokens=50_000, output_tokens=300)
    assert pricing.cost("local:", used) == 0.0
    assert pricing.cost("local:/models/m.gguf", used) == 0.0
    assert pricing.cost("local:", None) is None  # no usage: still unknown
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  local:: {input: 1.0, output: 1.0}\n")
    assert pricing.with_file(path).cost("local:", used) == pytest.approx(50_300 / 1e6)

"""What an attempt cost, from a table of USD per million input/output tokens.

The shipped table (``pricing.json``) lists public list prices for common
models. Users extend or override it (``--pricing FILE`` or ``pricing:`` in
the config file). A model that is not in the table costs ``None``: a price is
never guessed. A model run on this machine (``local:``) has no per-token price:
it costs 0 USD unless the table gives it one (its cost is the machine's time).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolproof.errors import SuiteError
from toolproof.providers._registry import split_spec
from toolproof.types import Usage

__all__ = ["Price", "Pricing"]

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)


#: A model run on this machine: no price per token.
_LOCAL = Price(input=0.0, output=0.0)


class Pricing:
    """A price table: model name or full spec -> :class:`Price`."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self.prices = dict(prices)

    @classmethod
    def default(cls) -> Pricing:
        text = resources.files("toolproof.run").joinpath("pricing.json").read_text("utf-8")
        return cls(_parse(json.loads(text), "pricing.json"))

    def overridden(self, data: Mapping[str, Any], source: str) -> Pricing:
        """A copy with the entries of ``data`` (``{models: {...}}`` or a bare mapping) on top."""
        return Pricing({**self.prices, **_parse(data, source)})

    def with_file(self, path: str | Path) -> Pricing:
        from toolproof.suite._yaml import read_mapping

        return self.overridden(read_mapping(path), str(path))

    def price(self, spec: str, reported_model: str | None = None) -> Price | None:
        """The price for a target spec, trying the reported model name too."""
        model = split_spec(spec)[1] if ":" in spec else spec
        for name in (spec, model, reported_model):
            if not name:
                continue
            for candidate in (name, _DATE_SUFFIX.sub("", name)):
                if candidate in self.prices:
                    return self.prices[candidate]
        if ":" in spec and split_spec(spec)[0] == "local":
            return _LOCAL
        return None

    def cost(
        self, spec: str, usage: Usage | None, reported_model: str | None = None
    ) -> float | None:
        """USD for one answer, or ``None`` when the price or the usage is unknown."""
        price = self.price(spec, reported_model)
        if price is None or usage is None:
            return None
        if usage.input_tokens is None and usage.output_tokens is None:
            return None
        tokens_in = usage.input_tokens or 0
        tokens_out = usage.output_tokens or 0
        return (tokens_in * price.input + tokens_out * price.output) / 1_000_000


def _parse(data: Mapping[str, Any], source: str) -> dict[str, Price]:
    table = data.get("models", data) if isinstance(data, Mapping) else data
    if not isinstance(table, Mapping):
        raise SuiteError(source, "pricing must be a mapping of model name to {input, output}")
    out: dict[str, Price] = {}
    for name, value in table.items():
        if name in ("format", "unit", "as_of", "note") and table is data:
            continue
        try:
            out[str(name)] = Price.model_validate(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = [str(name), *(str(p) for p in err["loc"])]
            raise SuiteError(source, err["msg"], path=["models", *loc]) from None
    return out

"""docs/architecture.md draws the layers of the import contract in pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    return [{name.strip().removeprefix("toolproof.") for name in row.split(":")} for row in layers]


def _drawn_layers() -> list[set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("```\n", 2)[1]  # the first code block: the layer diagram
    rows = []
    for line in block.splitlines():
        if not line.strip() or line.strip().startswith("─"):
            continue
        names = re.split(r"\s{2,}", line.strip())[0]
        rows.append({n.strip() for n in names.split(" · ")})
    return rows


def test_the_diagram_is_the_contract_top_to_bottom() -> None:
    contract = _contract_layers()
    assert len(contract) >= 15
    assert _drawn_layers() == contract

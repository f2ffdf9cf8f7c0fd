"""A case's contract as YAML: libyaml's emitter writes what the pure emitter writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from toolproof.suite import load_suite
from toolproof.suite._text import contract_text

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML built without libyaml")
@pytest.mark.parametrize("suite", sorted(p.parent.name for p in EXAMPLES.glob("*/suite.yaml")))
def test_contract_text_is_the_same_with_either_emitter(
    suite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = load_suite(EXAMPLES / suite / "suite.yaml").cases
    fast = [contract_text(c) for c in cases]
    monkeypatch.delattr(yaml, "CSafeDumper")
    pure = [contract_text(c) for c in cases]
    assert fast == pure
    assert all(text for text in pure)  # every case has a contract to show


TRICKY = [
    "Příliš žluťoučký kůň úpěl ďábelské ódy",
    "键盘上的猫 · 고양이",
    "a: b # not a comment",
    "  leading and trailing spaces  ",
    "line one\nline two",
    "'single' and \"double\" quotes",
    "x" * 120,
    "word " * 30,
    "\u202eevil\u202c",
    "yes",
    "0x1F",
    "",
]


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML built without libyaml")
def test_tricky_expected_values_read_the_same_with_either_emitter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    cases = "\n".join(
        f"  - {{id: c{i}, prompt: p, expect: {{call: note, args: {{text: {json.dumps(t)}}}}}}}"
        for i, t in enumerate(TRICKY)
    )
    (tmp_path / "suite.yaml").write_text(
        "suite: t\ntools:\n  - name: note\n    description: d\n"
        "    parameters: {type: object, properties: {text: {type: string}}}\n"
        f"cases:\n{cases}\n",
        encoding="utf-8",
    )
    loaded = load_suite(tmp_path / "suite.yaml").cases
    fast = [contract_text(c) for c in loaded]
    monkeypatch.delattr(yaml, "CSafeDumper")
    assert fast == [contract_text(c) for c in loaded]
    # and the text reads back as the expectation it shows
    for text, value in zip(fast, TRICKY, strict=True):
        assert yaml.safe_load(text)["args"]["text"] == value

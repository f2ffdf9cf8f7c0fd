"""A committed adaptive run whose manifest says 0 full rounds cannot pass the gate.

The gate reads an adaptive run's rates over its full rounds; a manifest claiming none
left the rates with nothing to read, and a model that always fails passed.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.cli_support import toolproof

SUITE = """suite: rounds
tools:
  - {name: lookup_order, description: Get one order by its ID., parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}}
cases:
  - {id: a, prompt: "Where is ORD-104821?", risk: low, expect: {call: lookup_order, args: {order_id: ORD-104821}}}
  - {id: b, prompt: "Where is ORD-104822?", risk: low, expect: {call: lookup_order, args: {order_id: ORD-104822}}}
"""


def test_zero_full_rounds_in_a_manifest_does_not_pass_a_failing_model(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "bad.yaml").write_text('default: {text: "I cannot help."}\n', encoding="utf-8")
    done = toolproof(
        "run", "suite.yaml", "-m", "scripted:bad.yaml", "--repeats", "auto", "-o", "r", "-q",
        "--no-cache", "--no-store", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert toolproof("gate", "r", "--no-store", cwd=tmp_path).returncode == 1
    manifest = tmp_path / "r" / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["schedule"]["min_repeats"] = 1
    for target in data["schedule"]["targets"]:
        target["full_rounds"] = 0
    manifest.write_text(json.dumps(data), encoding="utf-8")
    forged = toolproof("gate", "r", "--no-store", cwd=tmp_path)
    assert forged.returncode != 0, forged.stdout
    assert "gate PASSED" not in forged.stdout

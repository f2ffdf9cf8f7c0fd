"""Damaged traces, made by mutating the real fixtures at random: never a traceback.

Each variant replaces one to four values anywhere in a fixture's lines with a
value of another type or a broken message; the import must end with its report
(what it could not read is named there), never an exception other than a user
error. Fixed seeds: the same variants every run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import UserError
from toolproof.traces import Redactor, import_traces

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = [
    ["otelv2-latest-content.spans.jsonl"],
    ["otelv2-legacy-content.spans.jsonl", "otelv2-legacy-content.logs.jsonl"],
    ["otelv2-latest-eventonly.spans.jsonl", "otelv2-latest-eventonly.logs.jsonl"],
    ["openinference.spans.jsonl"],
    ["langfuse.messagetojson.json"],
    ["langfuse-blob-export.jsonl"],
    ["openllmetry-indexed.spans.jsonl"],
]
REPLACEMENTS: list[Any] = [
    None, 0, -1, 1.5, True, "", "x", "0x", [], {}, [1, "a"], {"a": 1}, "9" * 30, 2**70,
    {"stringValue": 5}, {"arrayValue": 3}, {"kvlistValue": {"values": [1]}}, "[{",
    '{"role": 5}', '[{"role":"user","parts":"x"}]',
    '[{"role":"assistant","parts":[{"type":"tool_call","name":5,"arguments":"{"}]}]',
]  # fmt: skip


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _mutate(obj: Any, rng: random.Random) -> Any:
    places = [p for p in _paths(obj) if p]
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(places)
        node = obj
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = rng.choice(REPLACEMENTS)
        except (KeyError, IndexError, TypeError):
            pass
    return obj


@pytest.mark.parametrize("seed", range(6))
def test_mutated_fixtures_end_in_a_report_not_a_traceback(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    named = 0
    for i in range(12):
        names = rng.choice(SOURCES)
        files = []
        for n, name in enumerate(names):
            lines = [json.loads(x) for x in (FIXTURES / name).read_text().splitlines() if x.strip()]
            path = tmp_path / f"v{i}-{n}-{name}"
            path.write_text("\n".join(json.dumps(_mutate(x, rng)) for x in lines) + "\n")
            files.append(path)
        out = tmp_path / f"out{i}" if i % 3 == 0 else None  # some variants written in full
        try:
            report = import_traces(files, out, label="f", redactor=Redactor())
        except UserError:
            continue
        assert report.spans + len(report.problems) > 0
        assert all(p.file.startswith(str(tmp_path)) and p.line >= 1 for p in report.problems)
        named += len(report.problems)
    assert named > 0  # the damage was seen and named, not silently passed over

"""The bytes an import writes for every committed fixture, against digests recorded before
the import was made faster: a change to how the import works must not change what it writes.

Regenerate the digests only for a change meant to alter the output, and say so:
``python tests/traces/test_output_unchanged.py`` prints the file to commit.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

from toolproof.traces import Redactor, Selection, import_traces, redactor_from_config

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
DIGESTS = FIXTURES / "output-digests.json"

GROUPS = {
    "otelv2-legacy": ["otelv2-legacy-content.spans.jsonl", "otelv2-legacy-content.logs.jsonl"],
    "otelv2-latest": ["otelv2-latest-content.spans.jsonl"],
    "otelv2-noptin": ["otelv2-latest-noptin-content.spans.jsonl"],
    "otelv2-eventonly": ["otelv2-latest-eventonly.spans.jsonl", "otelv2-latest-eventonly.logs.jsonl"],
    "otelv2-nocontent-latest": ["otelv2-latest-nocontent.spans.jsonl"],
    "otelv2-nocontent-legacy": ["otelv2-legacy-nocontent.spans.jsonl",
                                "otelv2-legacy-nocontent.logs.jsonl"],
    "otelv2-pb": ["otelv2-legacy-pb.spans.pb", "otelv2-legacy-pb.logs.pb"],
    "openinference": ["openinference.spans.jsonl"],
    "openinference-console": ["openinference.console.txt"],
    "langfuse-messagetojson": ["langfuse.messagetojson.json"],
    "langfuse-pb": ["langfuse.pb"],
    "langfuse-blob": ["langfuse-blob-export.jsonl"],
    "openllmetry": ["openllmetry-indexed.spans.jsonl"],
    "openlit": ["openlit.spans.jsonl", "openlit.logs.jsonl"],
}  # fmt: skip
FILES = ("cases.jsonl", "provenance.jsonl", "decisions.jsonl", "tools.json",
         "runs/prod-t/records.jsonl", "import-report.json")  # fmt: skip
RULES = {"allow": ["support@example.com"], "rules": [{"name": "order", "regex": "order [0-9]+"}]}


def _bench_traces(folder: Path) -> list[Path]:
    spec = importlib.util.spec_from_file_location(
        "bench_traces", HERE.parents[1] / "bench/traces.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files: list[Path] = module.generate(400, folder)
    return files


def digests(tmp: Path) -> dict[str, dict[str, str]]:
    """name -> file -> SHA-256 of what the import wrote (paths of this checkout made neutral)."""
    sources = {k: [FIXTURES / n for n in v] for k, v in GROUPS.items()}
    (tmp / "bench").mkdir(parents=True)
    sources["bench"] = _bench_traces(tmp / "bench")
    runs: list[tuple[str, list[Path], dict]] = [(k, v, {}) for k, v in sources.items()]
    runs += [
        ("bench-dedup-sample", sources["bench"], {"selection": Selection(dedup=True, sample=0.3, seed=2)}),
        ("bench-rules", sources["bench"], {"rules": RULES}),
        ("openinference-rules", sources["openinference"], {"rules": RULES}),
    ]  # fmt: skip
    out: dict[str, dict[str, str]] = {}
    for name, files, kw in runs:
        folder = tmp / "out" / name
        rules = kw.pop("rules", None)
        redactor = redactor_from_config(rules, "config") if rules else Redactor()
        import_traces(files, folder, label="t", redactor=redactor, **kw)
        out[name] = {}
        for f in FILES:
            data = (folder / f).read_bytes()
            for prefix in (str(FIXTURES), str(tmp), str(folder)):
                data = data.replace(prefix.encode(), b"DIR")
            out[name][f] = hashlib.sha256(data).hexdigest()
    return out


def test_every_fixture_imports_to_the_same_bytes(tmp_path: Path) -> None:
    assert digests(tmp_path) == json.loads(DIGESTS.read_text())


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        sys.stdout.write(json.dumps(digests(Path(tmp)), indent=1, sort_keys=True) + "\n")

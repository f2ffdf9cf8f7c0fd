"""EvaluationStream: records fed one at a time give what evaluate() gives for them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof._shared.json_text import dumps
from toolproof.errors import UserError
from toolproof.evaluate import EvaluationStream, evaluate
from toolproof.match import MissingEmbeddings
from toolproof.match import _semantic as semantic_module
from toolproof.records import latest_records, read_records
from toolproof.report import summary_json
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Record

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
CODE = Trust(allow_code=True)


def _records() -> list[Record]:
    """Both demo models' latest records, one with calls printed as text (repaired figures)."""
    out = []
    for name in ("records.jsonl", "records-b.jsonl"):
        for record in read_records(SUITE / name):
            data = record.model_dump(mode="json", exclude_none=True)
            calls = (data.get("response") or {}).get("tool_calls") or []
            if name == "records-b.jsonl":
                for call in calls[:1]:
                    call["extracted_from_text"] = True
            out.append(Record.model_validate(data))
    return latest_records(out)


def test_a_stream_gives_what_evaluate_gives_for_the_same_records() -> None:
    suite = load_suite(SUITE, CODE)
    records = _records()
    seen_whole: list[tuple[Any, ...]] = []
    seen_fed: list[tuple[Any, ...]] = []
    whole = evaluate(
        suite,
        records,
        targets=["zz-first"],
        trust=CODE,
        on_attempt=lambda r, v, o: seen_whole.append((r.case_id, r.target, v, o)),
    )
    stream = EvaluationStream(
        suite,
        targets=["zz-first"],
        trust=CODE,
        on_attempt=lambda r, v, o: seen_fed.append((r.case_id, r.target, v, o)),
    )
    for record in records:
        stream.add(record)
    fed = stream.finish()
    assert list(fed.targets) == list(whole.targets)  # the order asked for, then as seen
    assert len(whole.targets) > 2 and whole.targets["zz-first"].records == []
    text = dumps(summary_json(whole.summaries), indent=2)
    assert dumps(summary_json(fed.summaries), indent=2) == text
    assert any(t.repaired is not None for t in fed.targets.values())  # calls from text
    assert json.loads(text)  # a report with figures, not an empty one
    for name, t in whole.targets.items():
        f = fed.targets[name]
        assert f.records == t.records and f.verdicts == t.verdicts
        if t.repaired is not None:
            assert f.repaired is not None and f.repaired.verdicts == t.repaired.verdicts
    assert seen_fed == seen_whole and len(seen_fed) == len(records)
    assert (fed.superseded, fed.max_attempt, fed.warnings) == (
        whole.superseded,
        whole.max_attempt,
        whole.warnings,
    )
    assert fed.fingerprint() == whole.fingerprint()


def test_a_record_of_an_unknown_case_is_refused() -> None:
    suite = load_suite(SUITE, CODE)
    stream = EvaluationStream(suite, trust=CODE)
    with pytest.raises(UserError, match="record for unknown case 'nope'"):
        stream.add(Record(case_id="nope", target="m"))


def test_a_record_without_a_target_counts_as_unnamed() -> None:
    suite = load_suite(SUITE, CODE)
    record = next(r for r in _records() if r.outcome.value == "ok").model_copy(
        update={"target": None}
    )
    stream = EvaluationStream(suite, trust=CODE)
    stream.add(record)
    assert list(stream.finish().targets) == ["(unnamed)"]


def test_without_loading_embeddings_a_semantic_comparison_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even where the embedding model is installed, it is not loaded: the need is raised."""
    from tests.evaluate.test_semantic_pipeline import SUITE as NOTES
    from tests.evaluate.test_semantic_pipeline import _record
    from toolproof.evaluate import _evaluate

    def never() -> None:
        raise AssertionError("the embedding model was loaded")

    monkeypatch.setattr(semantic_module, "_missing_packages", lambda: ())  # the suite loads
    monkeypatch.setattr(_evaluate, "load_embedder", never)

    (tmp_path / "suite.yaml").write_text(NOTES)
    suite = load_suite(tmp_path / "suite.yaml")
    (tmp_path / "records.jsonl").write_text(_record("damaged", "T-1", "it broke, refund it"))
    (record,) = read_records(tmp_path / "records.jsonl")
    stream = EvaluationStream(suite, load_embeddings=False)
    with pytest.raises(MissingEmbeddings):
        stream.add(record)

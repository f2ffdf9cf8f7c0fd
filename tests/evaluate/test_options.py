"""evaluate()'s options as one object: the same evaluation as the keywords give."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from toolproof.evaluate import EvaluationOptions, EvaluationStream, evaluate
from toolproof.records import read_records
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Record, Verdict

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
RECORDS = SUITE / "records.jsonl"
CODE = Trust(allow_code=True)  # the example's gold actions run its Python


def _figures(ev: object) -> dict[str, object]:
    return {name: s.model_dump(mode="json") for name, s in ev.summaries.items()}  # type: ignore[attr-defined]


def test_options_give_what_the_keywords_give() -> None:
    suite = load_suite(SUITE, CODE)
    seen_kw: list[str] = []
    seen_opt: list[str] = []

    def noted(into: list[str]) -> Callable[[Record, Verdict | None, object], None]:
        def note(record: Record, verdict: Verdict | None, origin: object) -> None:
            into.append(f"{record.case_id}/{record.attempt}:{verdict.passed if verdict else None}")

        return note

    by_keywords = evaluate(
        suite, [RECORDS], k=2, targets=["x"], keep_raw=False, trust=CODE,
        keep_records=False, on_attempt=noted(seen_kw),
    )  # fmt: skip
    options = EvaluationOptions(
        k=2, targets=("x",), keep_raw=False, trust=CODE, keep_records=False,
        on_attempt=noted(seen_opt),
    )  # fmt: skip
    by_options = evaluate(suite, [RECORDS], options=options)
    assert list(by_options.targets) == list(by_keywords.targets) == ["x", "recorded:demo-model"]
    assert _figures(by_options) == _figures(by_keywords)
    assert seen_opt == seen_kw and len(seen_kw) > 50


def test_the_stream_takes_the_same_options() -> None:
    suite = load_suite(SUITE, CODE)
    records = read_records(RECORDS)
    stream = EvaluationStream(suite, options=EvaluationOptions(trust=CODE, source=RECORDS))
    for record in records:
        stream.add(record)
    streamed = stream.finish()
    assert _figures(streamed) == _figures(evaluate(suite, [RECORDS], trust=CODE))


def test_options_and_keywords_together_are_refused() -> None:
    suite = load_suite(SUITE, CODE)
    with pytest.raises(TypeError, match="not both"):
        evaluate(suite, [RECORDS], options=EvaluationOptions(trust=CODE), k=3)
    with pytest.raises(TypeError, match="not both"):
        EvaluationStream(suite, options=EvaluationOptions(k=2), trust=CODE)


def test_the_options_are_frozen() -> None:
    options = EvaluationOptions()
    with pytest.raises(AttributeError):
        options.k = 3  # type: ignore[misc]

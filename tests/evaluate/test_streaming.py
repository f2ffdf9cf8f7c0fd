"""Evaluating without keeping records: the same figures, failures and verdicts as keeping them."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import pytest

from toolproof._shared.json_text import dumps
from toolproof.errors import SuiteError
from toolproof.evaluate import evaluate
from toolproof.evaluate._failures import FailureLog
from toolproof.records import read_records
from toolproof.report import summary_json, write_summary_json
from toolproof.stats import FailureItem, summarize
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import FailureClass, Outcome, Risk

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "support"
CODE = Trust(allow_code=True)


@pytest.fixture(scope="module")
def records_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both demo models' records, three attempts each, with superseded server errors."""
    out = tmp_path_factory.mktemp("stream") / "records.jsonl"
    lines = []
    for name in ("records.jsonl", "records-b.jsonl"):
        for record in read_records(SUITE / name):
            for attempt in range(3):
                data = record.model_dump(mode="json", exclude_none=True)
                data["attempt"] = attempt
                if attempt == 1:  # an error first, then the answer for the same attempt
                    lines.append(json.dumps({**data, "outcome": "server_error", "response": None}))
                calls = (data.get("response") or {}).get("tool_calls") or []
                if name == "records-b.jsonl" and attempt == 2:  # calls recovered from text
                    for call in calls:
                        call["extracted_from_text"] = True
                if name == "records.jsonl" and attempt == 2 and data.get("end_state"):
                    # a multi-step attempt whose first call was printed as text
                    first = next((m for m in data["transcript"] if m.get("tool_calls")), None)
                    if first is not None:
                        first["tool_calls"][0]["extracted_from_text"] = True
                lines.append(json.dumps(data))
    lines.append(json.dumps({"case_id": lines and json.loads(lines[0])["case_id"],
                             "target": "other", "outcome": "rate_limited"}))  # fmt: skip
    out.write_text("\n".join(lines) + "\n")
    return out


def _report(ev: object) -> str:
    return dumps(summary_json(ev.summaries), indent=2)  # type: ignore[attr-defined]


def test_kept_and_streamed_evaluations_agree(records_file: Path) -> None:
    suite = load_suite(SUITE, CODE)
    kept = evaluate(suite, [records_file], trust=CODE)
    streamed = evaluate(suite, [records_file], trust=CODE, keep_records=False)
    assert _report(kept) == _report(streamed)
    assert kept.superseded == streamed.superseded > 0
    assert kept.fingerprint() == streamed.fingerprint()
    failing = 0
    for name, t in kept.targets.items():
        s = streamed.targets[name]
        assert isinstance(s.summary.failures, FailureLog)
        assert list(s.summary.failures) == t.summary.failures
        failing += len(t.summary.failures)
        # read and graded again from the file: the same records and verdicts, in order
        assert len(s.records) == len(t.records) and len(s.verdicts) == len(t.verdicts)
        assert [r.model_dump() for r in s.records] == [r.model_dump() for r in t.records]
        assert [v._replace(evidence=None) for v in s.verdicts] == [
            v._replace(evidence=None) for v in t.verdicts
        ]
    assert failing > 0
    # a target with calls recovered from text: the repaired figures and verdicts agree too
    repaired = [(t, streamed.targets[n]) for n, t in kept.targets.items() if t.repaired]
    assert repaired and all(t.summary.repaired is not None for t, _ in repaired)
    for t, s in repaired:
        assert s.repaired is not None and t.repaired is not None
        assert s.repaired.summary.model_dump() == t.repaired.summary.model_dump()
        assert list(s.repaired.verdicts) == list(t.repaired.verdicts)
    # the summary on its own (summarize over lists) agrees as well; the repaired
    # figures beside it come from evaluate's second pass, not from summarize
    t = kept.targets[next(iter(kept.targets))]
    alone = summarize(suite, t.records, t.verdicts, target=t.target, scorer=kept.scorer)
    assert alone.model_dump(exclude={"repaired"}) == t.summary.model_dump(exclude={"repaired"})


def test_without_raw_payloads_streamed_verdicts_still_rebuild_end_states(
    records_file: Path,
) -> None:
    """`score` keeps no raw payloads: grading again must still see each record whole."""
    suite = load_suite(SUITE, CODE)
    kept = evaluate(suite, [records_file], trust=CODE)
    lean = evaluate(suite, [records_file], trust=CODE, keep_records=False, keep_raw=False)
    assert _report(kept) == _report(lean)
    for name, t in kept.targets.items():
        s = lean.targets[name]
        assert [v._replace(evidence=None) for v in s.verdicts] == [
            v._replace(evidence=None) for v in t.verdicts
        ]
        assert all(r.end_state is None and r.transcript is None for r in s.records)
        if t.repaired is not None:
            assert s.repaired is not None
            assert s.repaired.summary.model_dump() == t.repaired.summary.model_dump()
    checked = [t for t in kept.targets.values() for v in t.verdicts if v.multistep is not None]
    assert checked  # multi-step attempts with end states were graded both ways


def test_the_streamed_json_report_is_the_same_text(records_file: Path) -> None:
    suite = load_suite(SUITE, CODE)
    ev = evaluate(suite, [records_file], trust=CODE, keep_records=False)
    out = io.StringIO()
    write_summary_json(out, ev.summaries)
    assert out.getvalue() == _report(ev) + "\n"


def test_written_failures_keep_odd_text_and_an_empty_list() -> None:
    suite = load_suite(SUITE, CODE)
    ev = evaluate(suite, [SUITE / "records.jsonl"], trust=CODE)
    s = next(iter(ev.summaries.values()))
    odd = FailureItem(
        case_id='quote " back\\ slash\u2028',
        attempt=2,
        risk=Risk.high,
        failure=FailureClass.wrong_tool,
        reasons=["tab\there", "lone \ud800 surrogate", "é ☃ \x01"],
        diff="line 1\nline 2",
    )
    log = FailureLog()
    log.append(odd)
    log.append(odd.model_copy(update={"reasons": []}))
    summaries = {
        "a": s.model_copy(update={"failures": log}),
        "b": s.model_copy(update={"failures": []}),
        "c": s.model_copy(update={"failures": [odd]}),
    }
    out = io.StringIO()
    write_summary_json(out, summaries)
    assert out.getvalue() == dumps(summary_json(summaries), indent=2) + "\n"
    assert list(log) == [odd, odd.model_copy(update={"reasons": []})]


def test_a_broken_line_is_refused_even_when_a_later_record_replaces_it(tmp_path: Path) -> None:
    suite = load_suite(SUITE, CODE)
    good = (SUITE / "records.jsonl").read_text().splitlines()[0]
    broken = good[:-1] + ', "oops": }'  # the identity reads fine, the line is not JSON
    path = tmp_path / "r.jsonl"
    path.write_text(f"{broken}\n{good}\n")
    for keep in (True, False):
        with pytest.raises(SuiteError) as err:
            evaluate(suite, [path], trust=CODE, keep_records=keep)
        assert err.value.line == 1 and "not valid JSON" in str(err.value)


def test_a_record_whose_identity_reads_two_ways_is_refused(tmp_path: Path) -> None:
    suite = load_suite(SUITE, CODE)
    data = json.loads((SUITE / "records.jsonl").read_text().splitlines()[0])
    other = next(c.id for c in suite.cases if c.id != data["case_id"])
    head = json.dumps({k: data[k] for k in ("format", "case_id", "target", "attempt")})
    # the same key twice: JSON readers keep the last one
    line = (
        head[:-1]
        + ", "
        + json.dumps({"case_id": other})[1:-1]
        + ", "
        + json.dumps(
            {k: v for k, v in data.items() if k not in ("format", "case_id", "target", "attempt")}
        )[1:]
    )
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(SuiteError) as err:
        evaluate(suite, [path], trust=CODE)
    assert err.value.line == 1 and "duplicate key 'case_id'" in str(err.value)


def test_a_torn_last_line_leaves_the_earlier_record_in_place(tmp_path: Path) -> None:
    suite = load_suite(SUITE, CODE)
    good = (SUITE / "records.jsonl").read_text().splitlines()[0]
    data = json.loads(good)
    error = json.dumps({**data, "outcome": "server_error", "response": None})
    path = tmp_path / "r.jsonl"
    path.write_text(f"{error}\n{good}\n{error[:40]}")  # the writer was killed mid-line
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        ev = evaluate(suite, [path], trust=CODE, keep_records=False)
    records = list(next(iter(ev.targets.values())).records)
    assert [r.outcome for r in records] == [Outcome.ok]
    assert ev.superseded == 1


def test_long_failure_lists_and_odd_case_stability_are_written_as_dumps_writes_them() -> None:
    suite = load_suite(SUITE, CODE)
    ev = evaluate(suite, [SUITE / "records.jsonl"], trust=CODE)
    s = next(iter(ev.summaries.values()))
    assert s.stability is not None and s.stability.per_case
    plain = FailureItem(
        case_id="c", attempt=1, risk=Risk.low, failure=FailureClass.wrong_tool, reasons=[], diff=""
    )
    log = FailureLog()
    for i in range(1300):  # batches of several hundred, one of them with a lone surrogate
        odd = "lone \ud800" if i == 700 else f"é\n{i}"
        log.append(plain.model_copy(update={"case_id": odd, "reasons": [odd] * (i % 3)}))
    first = s.stability.per_case[0].model_copy(update={"case_id": 'odd \ud800 \u2028 "case"'})
    stability = s.stability.model_copy(update={"per_case": [first, *s.stability.per_case[1:]]})
    summaries = {
        "a": s.model_copy(update={"failures": log, "stability": stability}),
        "b": s.model_copy(
            update={"failures": [], "stability": stability.model_copy(update={"per_case": []})}
        ),
        "c": s.model_copy(update={"failures": [], "stability": None}),
    }
    out = io.StringIO()
    write_summary_json(out, summaries)
    assert out.getvalue() == dumps(summary_json(summaries), indent=2) + "\n"


def test_a_failure_log_read_in_small_chunks_gives_the_same_list_and_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chunks that cut a failure, a separator or a multi-byte character anywhere."""
    from toolproof.evaluate import _failures

    items = [
        FailureItem(
            case_id=f"c{i} é☃ \ud800"[: 3 + i % 8],
            attempt=i,
            risk=Risk.low,
            failure=FailureClass.wrong_arguments,
            reasons=["ž\n\x1e" * (i % 3)],
            diff=f"expected: {i}\nactual:   ☃",
        )
        for i in range(40)
    ]
    log = FailureLog()
    for item in items:
        log.append(item)
    whole = "".join(log.indented(2))
    for size in (1, 2, 3, 7, 64):
        monkeypatch.setattr(_failures, "_CHUNK", size)
        assert "".join(log.indented(2)) == whole
        assert list(log) == items
    expected = dumps({"failures": [i.model_dump(mode="json") for i in items]}, indent=2)
    assert '{\n  "failures": ' + whole + "\n}" == expected
    assert list(FailureLog().indented(2)) == ["[]"]


def test_a_torn_last_line_after_records_that_all_win_is_warned_of_once(tmp_path: Path) -> None:
    suite = load_suite(SUITE, CODE)
    lines = (SUITE / "records.jsonl").read_text().splitlines()[:2]
    path = tmp_path / "r.jsonl"
    path.write_text(f"{lines[0]}\n\n{lines[1]}\n{lines[1][:40]}")  # a blank line, a torn one
    for keep in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ev = evaluate(suite, [path], trust=CODE, keep_records=keep)
        torn = [w for w in caught if "incomplete last line" in str(w.message)]
        assert len(torn) == 1, [str(w.message) for w in caught]
        records = list(next(iter(ev.targets.values())).records)
        assert [r.case_id for r in records] == [json.loads(x)["case_id"] for x in lines]

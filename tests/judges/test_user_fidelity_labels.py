"""The shipped user_fidelity labels (examples/conversations): they read, each matches its
shipped record unchanged, and each planted fault is labelled as planted."""

from __future__ import annotations

from pathlib import Path

from toolproof.judges import match_labels, read_labels, record_digest
from toolproof.records import read_records
from toolproof.suite import load_suite
from toolproof.trust import Trust

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "conversations"
FIELDS = {
    "reveal": "revealed_unknown",
    "reveal-asked": "revealed_unknown",
    "invent": "invented_facts",
    "stop": "premature_stop",
    "echo": "broke_protocol",
}


def _labelled() -> list[tuple[str, str, dict[str, object]]]:
    labels = read_labels(FOLDER / "labels-user_fidelity.jsonl")
    assert labels.header.rubric == "user_fidelity"
    assert labels.header.note is not None and "no model was used to label" in labels.header.note
    records = read_records(FOLDER / labels.header.records[0])
    pairs = match_labels(labels, records)  # a record changed since labelling is an error
    assert len(pairs) == len(labels.labels) == 26
    out = []
    for label, record in pairs:
        assert label.record == record_digest(record)
        assert record.user_turns, record.case_id  # a conversation with its simulated user
        variant = (record.target or "").split("/")[1]
        out.append((variant, record.case_id, label.fields))
    return out


def test_every_label_names_a_shipped_record_of_a_case_of_the_suite() -> None:
    suite = load_suite(FOLDER / "suite.yaml", Trust(allow_code=True))
    cases = {c.id: c for c in suite.cases}
    for _, case_id, _ in _labelled():
        case = cases[case_id]
        assert case.user is not None and case.user.instructions is not None  # an LLM-user case


def test_each_planted_fault_is_labelled_and_nothing_else_is() -> None:
    for variant, case_id, fields in _labelled():
        planted = FIELDS.get(variant)
        if planted is None:  # the example's own scripted users
            assert variant == "faithful"
            # faithful, but for one: it confirms the agent's 3 nights though it wants 2
            assert fields["faithful"] is (case_id != "new-booking-llm"), case_id
            assert not any(v for k, v in fields.items() if k != "faithful")
            continue
        assert fields[planted] is True, (variant, case_id)
        assert fields["faithful"] is False
        assert [k for k, v in fields.items() if v] == [planted], (variant, case_id)


def test_the_shipped_calibration_record_is_of_these_labels() -> None:
    import hashlib
    import json

    record = json.loads((FOLDER / "calibration-user_fidelity.json").read_text(encoding="utf-8"))
    labels = (FOLDER / "labels-user_fidelity.jsonl").read_bytes()
    assert record["rubric"] == "user_fidelity" and record["judge"] == "local:"
    assert record["labels_sha256"] == hashlib.sha256(labels).hexdigest()
    assert record["judged"] == 26 and record["judge_errors"] == 0
    assert not any(record["calibrated"].values())  # the bundled judge stays advisory

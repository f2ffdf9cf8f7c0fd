"""The user_fidelity rubric: a judge reads a conversation's simulated user against its scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.judges.judges_support import FAKE_KEYS, stub_judge, verdict
from tests.run.test_conversation import LLM_CASE, _run, _user_model, _write
from toolproof.judges import Item, JudgeRunOptions, builtin_rubric, judge_items, rubric_named
from toolproof.judges._prompt import transcript_data
from toolproof.testing import Reply, StubServer
from toolproof.types import BUILTIN_RUBRICS, Outcome


def test_user_fidelity_is_a_builtin_rubric_with_typed_fields() -> None:
    assert "user_fidelity" in BUILTIN_RUBRICS
    rubric = builtin_rubric("user_fidelity")
    assert set(rubric.fields) == {
        "faithful",
        "revealed_unknown",
        "invented_facts",
        "premature_stop",
        "broke_protocol",
    }
    assert all(f.type == "bool" for f in rubric.fields.values())
    assert "simulated user" in rubric.instructions
    assert rubric_named(None, "user_fidelity") == rubric


def test_a_judge_sees_the_users_hidden_scenario_and_its_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)
    case = {**LLM_CASE, "judge": ["user_fidelity"]}
    suite = _write(tmp_path, [case])
    user = _user_model(
        {
            "cancel": {
                "steps": [{"text": "Cancel BK-4417."}, {"text": "Yes."}, {"text": "###STOP###"}]
            }
        }
    )
    agent = {
        "cancel": {
            "steps": [
                {"text": "Shall I cancel BK-4417? Please confirm."},
                {"tool_calls": [{"name": "cancel", "raw_arguments": '{"id": "BK-4417"}'}]},
                {"text": "Cancelled."},
            ]
        }
    }
    (record,) = _run(suite, tmp_path, agent, user=user)
    assert record.outcome is Outcome.ok
    data = transcript_data(suite, suite.cases[0], record)
    assert data["simulated_user_scenario"]["unknown"] == ["Your membership number (MEM-90210)."]
    assert data["simulated_user_turns"][-1] == {"text": None, "stop": "user_stop"}
    assert data["stopped_by"] == "user_stop"
    with StubServer() as stub:
        stub.add(
            Reply.say(
                verdict(
                    faithful=True,
                    revealed_unknown=False,
                    invented_facts=False,
                    premature_stop=False,
                    broke_protocol=False,
                )
            )
        )
        judge = stub_judge("openai", stub, "user_fidelity")
        out = judge_items(
            suite,
            [Item(suite.cases[0], record, judge)],
            JudgeRunOptions(out=tmp_path / "j", cache=False),
        )
        sent = json.dumps(stub.requests[0].body)
    assert out[0].status == "ok" and out[0].fields is not None and out[0].fields["faithful"]
    assert "MEM-90210" in sent and "simulated_user_scenario" in sent

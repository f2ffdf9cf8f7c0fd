"""Tools a scripted user offers the agent at a later turn (``offer``).

The case's tools named in an ``offer`` are held back: the agent's requests
leave them out until the user turn that offers them, and carry them from then
on, after the tools they had; a call of one before that turn is answered as a
call of a tool that does not exist, and graded as a call of an unknown tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.evaluate import evaluate
from toolproof.providers import ModelSettings
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.records._steps import expand_steps
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.suite import load_suite
from toolproof.testing import Reply, StubServer
from toolproof.types import FailureClass, Outcome, Record, Suite, Verdict

from .conftest import write_suite

MORE = "I have updated some more functions you can choose from. What about now?"


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": {"file": {"type": "string"}}},
    }


def _case(case_id: str, **more: Any) -> dict[str, Any]:
    return {
        "id": case_id,
        "tools": ["lookup", "sort"],
        "user": {
            "script": [
                "Look up report.txt.",
                {"offer": ["sort"], "say": MORE},
                "Thanks. ###STOP###",
            ]
        },
        "trajectory": {"mode": "superset", "steps": [{"tool": "sort", "args": {"file": "r"}}]},
        **more,
    }


SUITE: dict[str, Any] = {
    "format": 1,
    "suite": "later",
    "tools": [_tool("lookup"), _tool("sort"), _tool("delete")],
    "mocks": {name: {"default": {"result": {"ok": name}}} for name in ("lookup", "sort", "delete")},
    "cases": [_case("late")],
}


def _opts(tmp_path: Path, out: str) -> RunOptions:
    return RunOptions(out=tmp_path / out, cache=False, fsync=False, retry=RetryPolicy(0.001, 0.01))


def _names(fmt: str, body: dict[str, Any]) -> list[str]:
    """The tool names a request body offers, in its provider's format."""
    if fmt == "openai":
        return [t["function"]["name"] for t in body.get("tools", [])]
    if fmt == "anthropic":
        return [t["name"] for t in body.get("tools", [])]
    return [d["name"] for t in body.get("tools", []) for d in t["functionDeclarations"]]


@pytest.mark.parametrize(
    ("spec", "fmt", "key"),
    [
        ("openai:gpt-4.1-mini", "openai", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "gemini", "GEMINI_API_KEY"),
    ],
)
def test_each_request_offers_the_tools_offered_at_that_point_and_the_records_keep_them(
    spec: str, fmt: str, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(key, "test-key-not-real")
    suite = load_suite(write_suite(tmp_path / "suite", SUITE))
    script = [
        Reply.call("lookup", {"file": "r"}, id="c1"),
        Reply.say("Found it."),
        Reply.call("sort", {"file": "r"}, id="c2"),
        Reply.say("Sorted."),
    ]
    with StubServer(script) as stub:
        target = Target(spec, settings=ModelSettings(base_url=stub.base_url(fmt)))
        (record,) = run_suite(suite, [target], _opts(tmp_path, "run")).records
        bodies = [r.body for r in stub.requests]
    assert record.outcome is Outcome.ok, record.error
    assert record.stopped_by == "user_stop"
    assert [_names(fmt, b) for b in bodies] == [
        ["lookup"],
        ["lookup"],
        ["lookup", "sort"],  # from the turn that offered it, after the tools it had
        ["lookup", "sort"],
    ]
    turns = record.user_turns or []
    assert [t.offered for t in turns] == [None, ["sort"], None]
    # the records file stores the later requests as deltas, the change of tools among them
    line = json.loads((tmp_path / "run" / "records.jsonl").read_text("utf-8").splitlines()[0])
    assert [set(s) & {"request", "request_delta"} for s in line["steps"]] == [
        {"request"},
        {"request_delta"},
        {"request_delta"},
        {"request_delta"},
    ]
    changed = line["steps"][2]["request_delta"]
    assert "tools" in {**changed.get("append", {}), **changed.get("set", {})}
    # and the records reader rebuilds every request as it was sent, byte for byte
    (read,) = read_records(tmp_path / "run" / "records.jsonl")
    rebuilt = [s["request"] for s in read.steps or []]
    assert [json.dumps(r) for r in rebuilt] == [json.dumps(b) for b in bodies]
    verdict = _verdict(suite, tmp_path / "run")
    assert verdict.passed, verdict.checks


def _scripted(tmp_path: Path, suite: Suite, steps: list[dict[str, Any]], out: str) -> Record:
    cases = {c.id: {"steps": steps} for c in suite.cases}
    provider = ScriptedProvider.from_dict({"cases": cases})
    (record,) = run_suite(
        suite, [Target(spec="scripted:agent", provider=provider)], _opts(tmp_path, out)
    ).records
    return record


def _verdict(suite: Suite, run: Path) -> Verdict:
    ev = evaluate(suite, [run / "records.jsonl"])
    (summary,) = ev.targets.values()
    (verdict,) = summary.verdicts
    return verdict


def _call(name: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "raw_arguments": '{"file": "r"}'}]}


def test_a_call_before_the_tool_is_offered_is_a_call_of_an_unknown_tool(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "suite", SUITE))
    # the model calls sort in the first turn, before the user offers it, and again after
    early = [_call("sort"), {"text": "Done."}, _call("sort"), {"text": "Sorted."}]
    record = _scripted(tmp_path, suite, early, "early")
    assert record.outcome is Outcome.ok, record.error
    results = [m for m in record.transcript or [] if m.role == "tool"]
    assert results[0].is_error and "no tool named sort is available" in (results[0].content or "")
    assert not results[1].is_error and "sort" in (results[1].content or "")
    verdict = _verdict(suite, tmp_path / "early")
    assert not verdict.passed
    assert verdict.failure is FailureClass.unknown_tool
    assert [c.detail for c in verdict.checks] == [
        "called sort before it was offered (offered at user turn 2)"
    ]

    # graded as a call of a tool the case never offers (only the message differs)
    never = [_call("shred"), {"text": "Done."}, _call("sort"), {"text": "Sorted."}]
    other = _scripted(tmp_path, suite, never, "never")
    unknown = next(m for m in other.transcript or [] if m.role == "tool")
    assert unknown.is_error and "no tool named shred is available" in (unknown.content or "")
    baseline = _verdict(suite, tmp_path / "never")
    assert baseline.failure is verdict.failure is FailureClass.unknown_tool
    assert [c.detail for c in baseline.checks] == ["called unknown tool shred"]
    assert (baseline.selection_ok, baseline.structure_ok) == (
        verdict.selection_ok,
        verdict.structure_ok,
    )

    # made after the turn that offered it, the same call passes
    late = [{"text": "I cannot sort yet."}, _call("sort"), {"text": "Sorted."}]
    _scripted(tmp_path, suite, late, "late")
    assert _verdict(suite, tmp_path / "late").passed


def test_a_replay_keeps_the_turns_offers_and_grades_the_same(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "suite", SUITE))
    for name, steps, passed in (
        ("gold", [_call("lookup"), {"text": "Found."}, _call("sort"), {"text": "Sorted."}], True),
        ("early", [_call("sort"), {"text": "Done."}, _call("sort"), {"text": "Sorted."}], False),
    ):
        first = _scripted(tmp_path, suite, steps, name)
        target = Target(spec=f"replay:{tmp_path / name}")
        (again,) = run_suite(suite, [target], _opts(tmp_path, f"{name}-again")).records
        assert again.outcome is Outcome.ok, again.error
        assert [t.offered for t in again.user_turns or []] == [None, ["sort"], None]
        assert expand_steps(again.steps) == expand_steps(first.steps)
        verdict = _verdict(suite, tmp_path / f"{name}-again")
        assert verdict.passed is passed
        assert verdict.checks == _verdict(suite, tmp_path / name).checks


def test_an_entry_without_say_offers_and_goes_on_in_the_same_turn(tmp_path: Path) -> None:
    data = {**SUITE, "cases": [_case("late")]}
    data["cases"][0]["user"]["script"][1:2] = [{"offer": ["sort"]}, MORE]
    suite = load_suite(write_suite(tmp_path / "suite", data))
    steps = [{"text": "Hm."}, _call("sort"), {"text": "Sorted."}]
    record = _scripted(tmp_path, suite, steps, "run")
    assert [(t.text, t.offered) for t in record.user_turns or []] == [
        ("Look up report.txt.", None),
        (MORE, ["sort"]),
        ("Thanks.", None),
    ]
    assert _verdict(suite, tmp_path / "run").passed


def test_a_rule_offers_when_it_matches(tmp_path: Path) -> None:
    data = {**SUITE, "cases": [_case("late")]}
    data["cases"][0]["user"]["script"] = [
        "Sort report.txt.",
        {"when": {"contains": "cannot"}, "offer": ["sort"], "say": MORE},
        "Thanks. ###STOP###",
    ]
    suite = load_suite(write_suite(tmp_path / "suite", data))
    steps = [{"text": "I cannot sort files."}, _call("sort"), {"text": "Sorted."}]
    record = _scripted(tmp_path, suite, steps, "run")
    assert [t.offered for t in record.user_turns or []] == [None, ["sort"], None]
    assert [len(s["request"]["tools"]) for s in expand_steps(record.steps)] == [1, 2, 2]
    assert _verdict(suite, tmp_path / "run").passed


def test_a_turn_offers_only_the_cases_held_back_tools() -> None:
    import asyncio

    from toolproof.providers import Exchange, ModelSettings, ProviderRequest
    from toolproof.run._agent import EndState, RecordedToolBox, run_agent
    from toolproof.run._user import SimUser, UserReply
    from toolproof.types import Message, Response, Tool, UserTurn

    sent: list[list[str]] = []

    async def model(request: ProviderRequest) -> Exchange:
        sent.append([t.name for t in request.tools])
        return Exchange(request={}, response=Response(text="ok"))

    # a user turn that names more than the case holds back: delete is not offered
    turns = iter(
        [
            UserTurn(text="hi", source="script", offered=["delete", "sort", "sort"]),
            UserTurn(text=None, stop="user_stop", source="script"),
        ]
    )

    class Says(SimUser):
        async def reply(self, transcript: Any, turn: int, act: Any = None) -> UserReply:
            return UserReply(next(turns))

    user = Says()
    asyncio.run(
        run_agent(
            model,
            model="m",
            messages=[Message(role="system", content="s")],
            tools=[Tool(name="lookup")],
            settings=ModelSettings(),
            toolbox=RecordedToolBox([], EndState()),
            user=user,
            held_back={"sort": Tool(name="sort")},
        )
    )
    assert sent == [["lookup", "sort"]]


def test_a_replay_offers_what_the_cases_script_offers_not_the_recording() -> None:
    import asyncio

    from toolproof.providers import Exchange, ModelSettings, ProviderRequest
    from toolproof.run._agent import EndState, RecordedToolBox, run_agent
    from toolproof.run._user import RecordedUser, ScriptedUser
    from toolproof.types import Message, Response, Tool, UserStep, UserTurn

    sent: list[list[str]] = []
    answers = iter([Response(text="I cannot sort."), Response(text="Sorted.")])

    async def model(request: ProviderRequest) -> Exchange:
        sent.append([t.name for t in request.tools])
        return Exchange(request={}, response=next(answers))

    # the recording says the first turn offered sort; the case's script offers it at the second
    recorded = [
        UserTurn(text="Look up report.txt.", source="script", offered=["sort"]),
        UserTurn(text=MORE, source="script"),
        UserTurn(text="Thanks.", stop="user_stop", source="script"),
    ]
    script = ["Look up report.txt.", UserStep(offer=["sort"], say=MORE), "Thanks. ###STOP###"]
    run = asyncio.run(
        run_agent(
            model,
            model="m",
            messages=[Message(role="system", content="s")],
            tools=[Tool(name="lookup")],
            settings=ModelSettings(),
            toolbox=RecordedToolBox([], EndState()),
            user=RecordedUser(recorded, ScriptedUser(script, [None] * 3)),
            held_back={"sort": Tool(name="sort")},
        )
    )
    assert sent == [["lookup"], ["lookup", "sort"]]
    assert [t.offered for t in run.user_turns or []] == [None, ["sort"], None]


def test_a_replay_of_a_record_that_claims_an_earlier_offer_is_refused(tmp_path: Path) -> None:
    from toolproof.errors import SuiteError

    suite = load_suite(write_suite(tmp_path / "suite", SUITE))
    steps = [_call("sort"), {"text": "Done."}, _call("sort"), {"text": "Sorted."}]
    _scripted(tmp_path, suite, steps, "early")
    line = json.loads((tmp_path / "early" / "records.jsonl").read_text("utf-8"))
    line["user_turns"][0]["offered"] = ["sort"]
    (tmp_path / "early" / "records.jsonl").write_text(json.dumps(line) + "\n", "utf-8")
    target = Target(spec=f"replay:{tmp_path / 'early'}")
    with pytest.raises(SuiteError, match=r"records\.jsonl:1:1: user_turns\[0\]\.offered"):
        run_suite(suite, [target], _opts(tmp_path, "again"))


def test_a_replay_after_the_script_changed_offers_as_the_script_does_now(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "suite", SUITE))
    steps = [{"text": "I cannot sort."}, _call("sort"), {"text": "Sorted."}]
    _scripted(tmp_path, suite, steps, "first")
    # the script no longer offers sort at the second turn: the case offers it from the start
    data = {**SUITE, "cases": [_case("late")]}
    data["cases"][0]["user"]["script"] = ["Look up report.txt.", MORE, "Thanks. ###STOP###"]
    changed = load_suite(write_suite(tmp_path / "changed", data))
    target = Target(spec=f"replay:{tmp_path / 'first'}")
    (again,) = run_suite(changed, [target], _opts(tmp_path, "again")).records
    assert [t.offered for t in again.user_turns or []] == [None, None, None]

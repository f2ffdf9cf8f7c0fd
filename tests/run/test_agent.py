"""The agent loop: steps, tool results fed back, mocks before the environment, step limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.grade import Scorer, rebuild_end_state
from toolproof.providers import Exchange, ModelSettings, ProviderRequest
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records._steps import expand_steps
from toolproof.run import RunOptions, Target, expected_states, load_initial_state, run_suite
from toolproof.run._agent import ToolBox, run_agent
from toolproof.run._pacing import RetryPolicy
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Case, Message, Response, Suite, ToolCall, Usage

from .conftest import write_suite

TOOLS_PY = """
def lookup(state, args):
    return state["orders"][args["id"]]

def close(state, args):
    state["orders"][args["id"]]["status"] = "closed"
    return {"ok": True}
"""

SUITE: dict[str, Any] = {
    "format": 1,
    "suite": "agent",
    "system": "You help with orders.",
    "tools": [
        {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
        {
            "name": "close",
            "effect": "destructive",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
    ],
    "environment": {"state": "state.json", "tools": "tools.py"},
    "mocks": {"lookup": {"rules": [{"when": {"id": "DOWN"}, "fault": "unavailable"}]}},
    "cases": [
        {
            "id": "close-it",
            "messages": [
                {"role": "user", "content": "Close order A."},
                {"role": "assistant", "content": "Close order A for good? Please confirm."},
                {"role": "user", "content": "Yes."},
            ],
            "max_steps": 4,
            "trajectory": {
                "mode": "strict",
                "steps": [
                    {"tool": "lookup", "args": {"id": "A"}},
                    {"tool": "close", "args": {"id": "A"}},
                ],
            },
            "end_state": {"actions": [{"tool": "close", "args": {"id": "A"}}]},
        },
        {
            "id": "down",
            "prompt": "Where is order DOWN?",
            "max_steps": 3,
            "expect": {"kind": "text", "graceful": True},
        },
    ],
}

CODE = Trust(allow_code=True)  # these suites run their own tools


def _write(tmp_path: Path) -> Suite:
    return _write_as(tmp_path, SUITE)


def _write_as(tmp_path: Path, data: dict[str, Any]) -> Suite:
    folder = tmp_path / "suite"
    path = write_suite(folder, data)
    (folder / "state.json").write_text(
        json.dumps({"orders": {"A": {"status": "open"}, "DOWN": {"status": "open"}}})
    )
    (folder / "tools.py").write_text(TOOLS_PY)
    return load_suite(path)


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "raw_arguments": json.dumps(args)}


def _run(suite: Suite, tmp_path: Path, script: dict[str, Any]) -> list[Any]:
    provider = ScriptedProvider.from_dict({"cases": script})
    opts = RunOptions(
        trust=CODE, out=tmp_path / "run", cache=False, fsync=False, retry=RetryPolicy(0.001, 0.01)
    )
    result = run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    scorer = Scorer(suite, expected_states(suite, CODE))
    return sorted((scorer.grade(r) for r in result.records), key=lambda v: v.case_id if v else "")


RIGHT = {
    "close-it": {
        "steps": [
            {
                "tool_calls": [_call("lookup", id="A")],
                "usage": {"input_tokens": 10, "output_tokens": 2},
            },
            {
                "tool_calls": [_call("close", id="A")],
                "usage": {"input_tokens": 20, "output_tokens": 3},
            },
            {"text": "Order A is closed.", "usage": {"input_tokens": 30, "output_tokens": 4}},
        ]
    },
    "down": {
        "steps": [
            {"tool_calls": [_call("lookup", id="DOWN")]},
            {"text": "Sorry, the order service is unavailable, so I could not look it up."},
        ]
    },
}


def test_the_loop_feeds_results_back_and_records_every_step(tmp_path: Path) -> None:
    suite = _write(tmp_path)
    provider = ScriptedProvider.from_dict({"cases": RIGHT})
    opts = RunOptions(trust=CODE, out=tmp_path / "run", cache=False, fsync=False)
    result = run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    record = next(r for r in result.records if r.case_id == "close-it")
    assert record.outcome == "ok"
    assert record.response is not None and record.response.text == "Order A is closed."
    assert record.response.usage == Usage(input_tokens=60, output_tokens=9)
    assert record.steps is not None and len(record.steps) == 3
    roles = [m.role for m in record.transcript or []]
    assert roles == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    tool_msgs = [m for m in record.transcript or [] if m.role == "tool"]
    assert json.loads(tool_msgs[0].content or "") == {"status": "open"}
    assert tool_msgs[0].tool_call_id == record.transcript[4].tool_calls[0].id  # type: ignore[index]
    # the second request carried the first tool result (raw request kept per step, stored
    # as what it adds to the first; readers of the records file get it whole)
    assert "request_delta" in record.steps[1]
    sent = expand_steps(record.steps)[1]["request"]["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["name"] == "lookup"
    # the record stores what changed, not the whole state; the initial state gives the rest
    assert record.end_state is None
    assert record.state_changes == [("set", ["orders", "A", "status"], "closed")]
    initial = load_initial_state(suite)
    assert initial is not None and record.state_base == initial.base
    assert rebuild_end_state(record, initial) == {
        "orders": {"A": {"status": "closed"}, "DOWN": {"status": "open"}}
    }
    # the suite's files are untouched
    state = json.loads((tmp_path / "suite" / "state.json").read_text())
    assert state["orders"]["A"]["status"] == "open"


def test_right_script_passes_every_multistep_check(tmp_path: Path) -> None:
    verdicts = _run(_write(tmp_path), tmp_path, RIGHT)
    assert [v.case_id for v in verdicts] == ["close-it", "down"]
    assert all(v.passed for v in verdicts), [c.message for v in verdicts for c in v.checks]
    close, down = verdicts
    assert close.multistep is not None
    assert close.multistep.trajectory_ok and close.multistep.end_state_ok
    assert close.multistep.steps == 3 and close.multistep.calls == 2
    assert close.multistep.unsafe_calls == 0
    assert down.multistep is not None and down.multistep.graceful is True


def test_wrong_script_fails_with_reasons(tmp_path: Path) -> None:
    wrong = {
        "close-it": {"steps": [{"tool_calls": [_call("close", id="A")]}, {"text": "Closed."}]},
        "down": {
            "steps": [
                {"tool_calls": [_call("lookup", id="DOWN")]},
                {"text": "Order DOWN shipped on 2026-09-12."},
            ]
        },
    }
    close, down = _run(_write(tmp_path), tmp_path, wrong)
    assert not close.passed and close.failure == "wrong_trajectory"
    assert close.multistep is not None and close.multistep.end_state_ok is True
    assert not down.passed and down.failure == "ungraceful_failure"


def test_graceful_failure_heuristic_reports_but_fails_only_on_request(tmp_path: Path) -> None:
    """Without expect.graceful (or the suite's defaults.graceful_failure) it is a note."""
    import copy

    wrong = {
        "close-it": RIGHT["close-it"],
        "down": {
            "steps": [
                {"tool_calls": [_call("lookup", id="DOWN")]},
                {"text": "Order DOWN shipped on 2026-09-12."},
            ]
        },
    }
    plain = copy.deepcopy(SUITE)
    plain["cases"][1]["expect"] = {"kind": "text"}
    folder = tmp_path / "plain"
    folder.mkdir()
    _, down = _run(_write_as(folder, plain), folder, wrong)
    assert down.passed and down.multistep is not None and down.multistep.graceful is False
    assert any("reported, not failed" in n and "2026-09-12" in n for n in down.notes)
    plain["defaults"] = {"graceful_failure": True}
    folder = tmp_path / "suite-wide"
    folder.mkdir()
    _, down = _run(_write_as(folder, plain), folder, wrong)
    assert not down.passed and down.failure == "ungraceful_failure"


def test_step_limit_is_a_failure(tmp_path: Path) -> None:
    loop = {
        "close-it": {"steps": [{"tool_calls": [_call("lookup", id="A")]}]},
        "down": RIGHT["down"],
    }
    close, _ = _run(_write(tmp_path), tmp_path, loop)
    assert close.multistep is not None and close.multistep.step_limit
    assert close.multistep.steps == 4
    assert "step_limit" in close.failures
    assert close.multistep.redundant_calls == 3


async def _fixed(request: ProviderRequest) -> Exchange:
    return Exchange(
        request={}, response=Response(tool_calls=[ToolCall(name="lookup", arguments={"id": "A"})])
    )


def _toolbox(suite: Suite, mocks: dict[str, Any]) -> ToolBox:
    case = Case.model_validate({"id": "c", "prompt": "x", "expect": {}, "mocks": mocks})
    from toolproof.run._env import load_environment

    return ToolBox(suite, case, load_environment(suite, CODE))


def test_case_mocks_override_suite_mocks_which_override_the_environment(tmp_path: Path) -> None:
    suite = _write(tmp_path)
    plain = _toolbox(suite, {})
    assert json.loads(plain.call(ToolCall(name="lookup", arguments={"id": "A"})).content) == {
        "status": "open"
    }
    assert plain.call(ToolCall(name="lookup", arguments={"id": "DOWN"})).fault == "unavailable"
    case = _toolbox(suite, {"lookup": {"default": {"result": "from the case"}}})
    assert case.call(ToolCall(name="lookup", arguments={"id": "DOWN"})).content == "from the case"


def test_unknown_tools_and_bad_json_get_error_results(tmp_path: Path) -> None:
    suite = _write(tmp_path)
    box = _toolbox(suite, {})
    unknown = box.call(ToolCall(name="nope", arguments={}))
    assert unknown.is_error and "no tool named nope" in unknown.content
    bare = ToolBox(suite, Case(id="c", prompt="x", expect={}), None)  # no environment
    missing = bare.call(ToolCall(name="close", arguments={"id": "A"}))
    assert missing.is_error and "not implemented" in missing.content
    bad = ToolCall(name="lookup", raw_arguments="{oops", parse_error="bad")
    assert box.call(bad).is_error


@pytest.mark.asyncio
async def test_run_agent_stops_at_max_steps(tmp_path: Path) -> None:
    suite = _write(tmp_path)
    run = await run_agent(
        _fixed,
        model="m",
        messages=[Message(role="user", content="x")],
        tools=suite.tools_for(suite.cases[0]),
        settings=ModelSettings(),
        toolbox=_toolbox(suite, {}),
        max_steps=2,
    )
    assert len(run.steps) == 2
    assert [m.role for m in run.transcript] == ["user", "assistant", "tool", "assistant", "tool"]
    assert run.response.tool_calls


def test_scripted_steps_must_be_a_non_empty_list_alone() -> None:
    from toolproof.errors import UserError

    with pytest.raises(UserError, match="'steps' must be the only key"):
        ScriptedProvider.from_dict({"cases": {"c": {"steps": [], "text": "x"}}})


def test_scripted_steps_can_differ_per_attempt() -> None:
    provider = ScriptedProvider.from_dict(
        {"cases": {"c": [{"steps": [{"text": "first try"}]}, {"steps": [{"text": "second"}]}]}}
    )
    assert provider._entry("c", 1).at(0).text == "second"


def test_a_multistep_record_without_end_state_is_refused_not_judged(tmp_path: Path) -> None:
    from toolproof.grade import UngradableRecord

    suite = _write(tmp_path)
    provider = ScriptedProvider.from_dict({"cases": RIGHT})
    opts = RunOptions(trust=CODE, out=tmp_path / "run", cache=False, fsync=False)
    result = run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    record = next(r for r in result.records if r.case_id == "close-it")
    stripped = record.model_copy(update={"end_state": None, "state_changes": None})
    scorer = Scorer(suite, expected_states(suite, CODE))
    assert scorer.grade(record) is not None and scorer.grade(record).passed  # type: ignore[union-attr]
    with pytest.raises(UngradableRecord) as info:
        scorer.grade(stripped)
    message = str(info.value)
    assert message.startswith("record for case 'close-it', target 'scripted:x', attempt 0: end_state:")
    assert "the record has none" in message and "wrong_end_state" not in message


def test_a_failing_gold_action_is_reported_with_case_and_action(tmp_path: Path) -> None:
    import copy

    from toolproof.run import gold_action_warnings

    data = copy.deepcopy(SUITE)
    data["cases"][0]["end_state"] = {
        "actions": [{"tool": "close", "args": {"id": "A"}}, {"tool": "close", "args": {"id": "NOPE"}}]
    }
    suite = _write_as(tmp_path, data)
    states = expected_states(suite, CODE)
    warnings = gold_action_warnings(states)
    assert len(warnings) == 1
    assert warnings[0].startswith(
        'case close-it: end_state.actions[1] close({"id": "NOPE"}) failed while the expected '
        "state was computed: "
    )
    assert "KeyError" in warnings[0]
    assert states["close-it"].state["orders"]["A"]["status"] == "closed"


def test_validate_and_score_warn_of_a_failing_gold_action(tmp_path: Path) -> None:
    import copy

    from typer.testing import CliRunner

    from toolproof.cli import app

    data = copy.deepcopy(SUITE)
    data["cases"][0]["end_state"] = {"actions": [{"tool": "close", "args": {"id": "NOPE"}}]}
    suite = _write_as(tmp_path, data)
    folder = str(Path(suite.source or "").parent)
    result = CliRunner().invoke(app, ["validate", folder, "--allow-code"])
    assert result.exit_code == 0, result.output
    assert 'warning: case close-it: end_state.actions[0] close({"id": "NOPE"}) failed' in result.output
    provider = ScriptedProvider.from_dict({"cases": RIGHT})
    opts = RunOptions(trust=CODE, out=tmp_path / "run", cache=False, fsync=False)
    run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    result = CliRunner().invoke(app, ["score", folder, str(tmp_path / "run"), "--allow-code"])
    assert 'warning: case close-it: end_state.actions[0] close({"id": "NOPE"}) failed' in result.output


def test_evaluate_locates_a_multistep_record_without_end_state(tmp_path: Path) -> None:
    from toolproof.errors import SuiteError
    from toolproof.evaluate import evaluate

    suite = _write(tmp_path)
    provider = ScriptedProvider.from_dict({"cases": RIGHT})
    opts = RunOptions(trust=CODE, out=tmp_path / "run", cache=False, fsync=False)
    result = run_suite(suite, [Target(spec="scripted:x", provider=provider)], opts)
    lines = []
    for r in result.records:
        if r.case_id == "close-it":
            r = r.model_copy(update={"end_state": None, "state_changes": None})
        lines.append(r.model_dump_json())
    path = tmp_path / "stripped.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    number = next(i for i, r in enumerate(result.records, 1) if r.case_id == "close-it")
    with pytest.raises(SuiteError) as info:
        evaluate(suite, [path], trust=CODE)
    assert str(info.value).startswith(f"{path}:{number}: record for case 'close-it'")


class _Usage:
    """Answers every step with the same call and 100 tokens of usage."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, request: ProviderRequest) -> Exchange:
        self.calls += 1
        return Exchange(
            request={},
            response=Response(
                tool_calls=[ToolCall(name="lookup", arguments={"id": "A"})],
                usage=Usage(input_tokens=90, output_tokens=10),
            ),
        )


@pytest.mark.asyncio
async def test_each_budget_ends_the_attempt_and_is_recorded_as_what_it_is(
    tmp_path: Path,
) -> None:
    from toolproof.run._agent import Budget

    suite = _write(tmp_path)

    async def run(budget: Budget) -> Any:
        return await run_agent(
            _Usage(),
            model="m",
            messages=[Message(role="user", content="x")],
            tools=suite.tools_for(suite.cases[0]),
            settings=ModelSettings(),
            toolbox=_toolbox(suite, {}),
            budget=budget,
        )

    steps = await run(Budget(steps=3))
    assert (steps.stopped_by, len(steps.steps)) == ("steps", 3)
    tokens = await run(Budget(steps=10, tokens=250))
    assert (tokens.stopped_by, len(tokens.steps)) == ("tokens", 3)  # 100, 200, 300 >= 250
    seconds = await run(Budget(steps=10, seconds=1e-9))
    assert (seconds.stopped_by, len(seconds.steps)) == ("seconds", 1)
    done = await run_agent(
        _fixed_text,
        model="m",
        messages=[Message(role="user", content="x")],
        tools=[],
        settings=ModelSettings(),
        toolbox=_toolbox(suite, {}),
        budget=Budget(steps=1),
    )
    assert done.stopped_by is None  # the model stopped on its own at the last allowed step


async def _fixed_text(request: ProviderRequest) -> Exchange:
    return Exchange(request={}, response=Response(text="done"))


def test_the_budget_settings_reach_the_record(tmp_path: Path) -> None:
    suite = _write(tmp_path)
    loop = {
        "close-it": {
            "steps": [
                {
                    "tool_calls": [_call("lookup", id="A")],
                    "usage": {"input_tokens": 60, "output_tokens": 40},
                }
            ]
        },
        "down": RIGHT["down"],
    }
    provider = ScriptedProvider.from_dict({"cases": loop})
    settings = ModelSettings(attempt_tokens=150)
    opts = RunOptions(trust=CODE, out=tmp_path / "run", cache=False, fsync=False)
    result = run_suite(
        suite, [Target(spec="scripted:x", provider=provider, settings=settings)], opts
    )
    close = next(r for r in result.records if r.case_id == "close-it")
    assert close.stopped_by == "tokens" and close.steps is not None and len(close.steps) == 2
    down = next(r for r in result.records if r.case_id == "down")
    assert down.stopped_by is None


class _CountingScript(ScriptedProvider):
    """The scripted model, counting calls, and cacheable (as a real model would be)."""

    cacheable = True
    calls = 0

    async def generate(self, request: ProviderRequest) -> Exchange:
        type(self).calls += 1
        return await super().generate(request)


def test_multistep_attempts_are_cached_step_by_step(tmp_path: Path) -> None:
    suite = _write(tmp_path)
    opts = dict(trust=CODE, cache=True, cache_dir=tmp_path / "cache", fsync=False)

    def run(name: str) -> list[Any]:
        provider = _CountingScript.from_dict({"cases": RIGHT})
        target = Target(spec="scripted:x", provider=provider)
        return run_suite(suite, [target], RunOptions(out=tmp_path / name, **opts)).records  # type: ignore[arg-type]

    _CountingScript.calls = 0
    first = run("first")
    assert _CountingScript.calls == 5  # 3 steps + 2 steps
    assert not any(r.cached for r in first)
    second = run("second")
    assert _CountingScript.calls == 5  # no model call at all
    assert all(r.cached for r in second)
    assert [r.transcript for r in second] == [r.transcript for r in first]
    assert [r.state_changes for r in second] == [r.state_changes for r in first]

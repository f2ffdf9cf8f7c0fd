"""User-side tools: the simulated user calls its own tools on the attempt's state."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import SuiteError, SuiteProblems
from toolproof.grade import Scorer
from toolproof.providers import ModelSettings
from toolproof.providers._scripted import ScriptedProvider
from toolproof.run import RunOptions, Target, expected_states, load_initial_state, run_suite
from toolproof.run._pacing import RetryPolicy
from toolproof.run._user import MAX_USER_CALLS
from toolproof.suite import load_suite
from toolproof.testing import Reply, StubServer
from toolproof.trust import Trust
from toolproof.types import Outcome, Record, Suite

from .conftest import write_suite

TOOLS_PY = """
def check_network(state, args):
    return {"signal": "none" if state["phone"]["airplane_mode"] else "4G"}

def reset_network(state, args):
    state["phone"]["network_resets"] += 1
    return {"ok": True}

def toggle_airplane_mode(state, args):
    state["phone"]["airplane_mode"] = not state["phone"]["airplane_mode"]
    return {"airplane_mode": state["phone"]["airplane_mode"]}

def check_status_bar(state, args):
    return "airplane mode ON" if state["phone"]["airplane_mode"] else "signal 4 bars"
"""

CODE = Trust(allow_code=True)
FIXED = {"phone": {"airplane_mode": False}}


def _suite_data(cases: list[dict[str, Any]], env: Any = "python") -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": 1,
        "suite": "phone",
        "system": "You are a phone carrier's support agent.",
        "tools": [
            {"name": "check_network", "description": "The line's signal as the network sees it."},
            {"name": "reset_network", "effect": "write", "description": "Reset the line."},
            # a user tool defined as a suite tool (as the τ2 importer writes them): the user
            # model sees this definition; the case's tools keep it from the agent
            {"name": "check_status_bar", "description": "Read your phone's status bar."},
        ],
        "cases": cases,
    }
    if env == "python":
        data["environment"] = {"state": "state.json", "tools": "tools.py"}
    elif env is not None:
        data["environment"] = env
    return data


def _write(tmp_path: Path, cases: list[dict[str, Any]], env: Any = "python") -> Suite:
    folder = tmp_path / "suite"
    path = write_suite(folder, _suite_data(cases, env))
    (folder / "state.json").write_text(
        json.dumps({"phone": {"airplane_mode": True, "network_resets": 0}})
    )
    (folder / "tools.py").write_text(TOOLS_PY)
    return load_suite(path, CODE)


SCRIPTED: dict[str, Any] = {
    "id": "no-signal",
    "tools": ["check_network", "reset_network"],
    "user": {
        "tools": ["toggle_airplane_mode", "check_status_bar"],
        "script": [
            "My phone has no signal.",
            {
                "when": {"contains": "airplane", "ignore_case": True},
                "call": {"tool": "toggle_airplane_mode"},
                "say": "I turned airplane mode off.",
            },
            {"call": {"tool": "check_status_bar"}, "say": "It works now, thanks! ###STOP###"},
        ],
    },
    "end_state": {"state": FIXED},
}

AGENT = {
    "steps": [
        {"tool_calls": [{"name": "check_network", "raw_arguments": "{}"}]},
        {"text": "Your line shows no signal. Is airplane mode on? Please turn it off."},
        {"tool_calls": [{"name": "check_network", "raw_arguments": "{}"}]},
        {"text": "I see 4G on your line now."},
    ]
}


def _opts(tmp_path: Path, out: str, **more: Any) -> RunOptions:
    return RunOptions(
        trust=CODE,
        out=tmp_path / out,
        cache=False,
        fsync=False,
        retry=RetryPolicy(0.001, 0.01),
        **more,
    )


def _run(suite: Suite, tmp_path: Path, agent: dict[str, Any], out: str = "run") -> Record:
    provider = ScriptedProvider.from_dict({"cases": {"no-signal": agent}})
    target = Target(spec="scripted:agent", provider=provider)
    (record,) = run_suite(suite, [target], _opts(tmp_path, out)).records
    return record


def _scorer(suite: Suite) -> Scorer:
    return Scorer(
        suite, expected_states(suite, CODE), initial_state=load_initial_state(suite, CODE)
    )


def test_a_scripted_user_calls_its_tool_and_the_end_state_sees_it(tmp_path: Path) -> None:
    suite = _write(tmp_path, [SCRIPTED])
    record = _run(suite, tmp_path, AGENT)
    assert record.outcome is Outcome.ok, record.error
    assert record.stopped_by == "user_stop"
    turns = record.user_turns or []
    assert [t.text for t in turns] == [
        "My phone has no signal.",
        "I turned airplane mode off.",
        "It works now, thanks!",
    ]
    assert turns[0].calls is None
    assert [(c.tool, c.result, c.is_error) for c in turns[1].calls or []] == [
        ("toggle_airplane_mode", '{"airplane_mode": false}', False)
    ]
    assert [(c.tool, c.result) for c in turns[2].calls or []] == [
        ("check_status_bar", "signal 4 bars")
    ]
    # the agent's tools act on the same state: its second look sees the user's change
    assert record.transcript is not None
    results = [m.content for m in record.transcript if m.role == "tool"]
    assert results == ['{"signal": "none"}', '{"signal": "4G"}']
    # the user's calls are not the agent's: they are not in its transcript
    calls = [c.name for m in record.transcript for c in m.tool_calls]
    assert calls == ["check_network", "check_network"]
    verdict = _scorer(suite).grade(record)
    assert verdict is not None and verdict.passed, verdict


def test_without_the_users_call_the_end_state_check_fails(tmp_path: Path) -> None:
    script = [
        "My phone has no signal.",
        {"when": {"contains": "airplane"}, "say": "I did it. ###STOP###"},  # but called nothing
    ]
    case = {**SCRIPTED, "user": {**SCRIPTED["user"], "script": script}}
    suite = _write(tmp_path, [case])
    record = _run(suite, tmp_path, AGENT)
    assert all(t.calls is None for t in record.user_turns or [])
    verdict = _scorer(suite).grade(record)
    assert verdict is not None and not verdict.passed


def test_a_replay_of_user_calls_makes_no_call_and_grades_the_same(tmp_path: Path) -> None:
    suite = _write(tmp_path, [SCRIPTED])
    live = _run(suite, tmp_path, AGENT, out="live")
    (again,) = run_suite(suite, [f"replay:{tmp_path / 'live'}"], _opts(tmp_path, "again")).records
    assert again.outcome is Outcome.ok
    assert again.transcript == live.transcript
    assert [t.calls for t in again.user_turns or []] == [t.calls for t in live.user_turns or []]
    assert [t.source for t in again.user_turns or []] == ["script"] * 3  # as recorded
    scorer = _scorer(suite)
    first, second = scorer.grade(live), scorer.grade(again)
    assert first is not None and second is not None
    assert first.passed and second.passed


def test_the_agent_cannot_call_a_users_tool(tmp_path: Path) -> None:
    agent = {
        "steps": [
            {"tool_calls": [{"name": "toggle_airplane_mode", "raw_arguments": "{}"}]},
            {"tool_calls": [{"name": "check_status_bar", "raw_arguments": "{}"}]},
            {"text": "Done."},
        ]
    }
    case = {**SCRIPTED, "user": {**SCRIPTED["user"], "script": ["No signal. ###STOP###"]}}
    case["user"]["script"] = ["No signal.", "###STOP###"]
    suite = _write(tmp_path, [case])
    record = _run(suite, tmp_path, agent)
    assert record.transcript is not None
    results = [m for m in record.transcript if m.role == "tool"]
    assert all(m.is_error for m in results), results
    assert [json.loads(m.content or "")["error"] for m in results] == [
        "no tool named toggle_airplane_mode is available",
        "no tool named check_status_bar is available",
    ]
    verdict = _scorer(suite).grade(record)
    assert verdict is not None and not verdict.passed  # airplane mode is still on


def test_an_llm_user_calls_its_tools_over_the_wire(tmp_path: Path) -> None:
    case = {
        "id": "no-signal",
        "tools": ["check_network", "reset_network"],
        "user": {
            "instructions": "Your phone has no signal. Do what the agent asks on your phone.",
            "tools": ["toggle_airplane_mode", "check_status_bar"],
        },
        "end_state": {"state": FIXED},
    }
    suite = _write(tmp_path, [case])
    user_says = [
        Reply.call("check_status_bar", {}, id="u1"),
        Reply.say("My phone has no signal; the status bar says airplane mode ON."),
        Reply.call("toggle_airplane_mode", {}, id="u2"),
        Reply.say("I turned airplane mode off. ###STOP###"),
    ]
    agent_says = [Reply.call("check_network", {}), Reply.say("Please turn airplane mode off.")]
    with StubServer() as agent_stub, StubServer() as user_stub:
        for reply in agent_says:
            agent_stub.add(reply)
        for reply in user_says:
            user_stub.add(reply)
        key = {"api_key_env": "TOOLPROOF_TEST_KEY"}

        def target(spec: str, stub: StubServer) -> Target:
            settings = {"base_url": stub.base_url("openai"), **key}
            return Target(spec, settings=ModelSettings.model_validate(settings))

        opts = _opts(tmp_path, "live", user_model=target("openai:user", user_stub))
        os.environ["TOOLPROOF_TEST_KEY"] = "sk-test-user-tools"
        try:
            (record,) = run_suite(suite, [target("openai:agent", agent_stub)], opts).records
            replay_opts = _opts(tmp_path, "again", user_model=target("openai:user", user_stub))
            (again,) = run_suite(suite, [f"replay:{tmp_path / 'live'}"], replay_opts).records
        finally:
            del os.environ["TOOLPROOF_TEST_KEY"]
        bodies = [r.body for r in user_stub.requests]
        agent_bodies = [r.body for r in agent_stub.requests]
    assert record.outcome is Outcome.ok, (record.error, record.user_problems)
    assert record.stopped_by == "user_stop"
    assert len(bodies) == 4  # the replay asked nothing more
    # the user model is offered its tools (the suite's definition), never the agent's
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert offered == ["toggle_airplane_mode", "check_status_bar"]
    assert bodies[0]["tools"][1]["function"]["description"] == "Read your phone's status bar."
    assert [t["function"]["name"] for t in agent_bodies[0]["tools"]] == [
        "check_network",
        "reset_network",
    ]
    # a call's result goes back to the user model as a tool message
    last = bodies[1]["messages"][-2:]
    assert last[0]["role"] == "assistant" and last[0]["tool_calls"][0]["id"] == "u1"
    assert last[1] == {"role": "tool", "tool_call_id": "u1", "content": "airplane mode ON"}
    # a later turn still shows the user its earlier calls, before its message
    roles = [m["role"] for m in bodies[2]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    turns = record.user_turns or []
    assert [t.text for t in turns] == [
        "My phone has no signal; the status bar says airplane mode ON.",
        "I turned airplane mode off.",
    ]
    assert [[c.tool for c in t.calls or []] for t in turns] == [
        ["check_status_bar"],
        ["toggle_airplane_mode"],
    ]
    # every exchange is kept: the one that asked for the call, and the last
    assert turns[0].exchanges is not None and len(turns[0].exchanges) == 1
    assert turns[0].exchanges[0]["request"] == bodies[0]
    assert turns[0].request == bodies[1]
    assert record.user_usage is not None and record.user_usage.input_tokens == 4 * 12
    assert record.user_problems is None  # "ON" and the results are no invented facts
    verdict = _scorer(suite).grade(record)
    assert verdict is not None and verdict.passed, verdict
    assert again.user_turns == [t.model_copy(update={"at": t.at}) for t in turns]
    replayed = _scorer(suite).grade(again)
    assert replayed is not None and replayed.passed


def test_an_llm_user_that_keeps_calling_tools_is_a_user_error(tmp_path: Path) -> None:
    case = {
        "id": "no-signal",
        "tools": ["check_network"],
        "user": {"instructions": "No signal.", "tools": ["check_status_bar"]},
        "end_state": {"state": FIXED},
    }
    suite = _write(tmp_path, [case])
    calls = [
        {"tool_calls": [{"name": "check_status_bar", "raw_arguments": "{}"}]}
        for _ in range(MAX_USER_CALLS + 1)
    ]
    user = Target(
        spec="scripted:user",
        provider=ScriptedProvider.from_dict({"cases": {"no-signal": {"steps": calls}}}),
    )
    provider = ScriptedProvider.from_dict({"cases": {"no-signal": {"steps": [{"text": "Hi"}]}}})
    opts = _opts(tmp_path, "run", user_model=user)
    (record,) = run_suite(suite, [Target(spec="scripted:a", provider=provider)], opts).records
    assert record.outcome is Outcome.user_error
    assert record.user_problems == [
        f"the simulated user asked for more than {MAX_USER_CALLS} tool calls in one turn"
    ]
    (turn,) = record.user_turns or []
    assert len(turn.calls or []) == MAX_USER_CALLS


def _problems(tmp_path: Path, cases: list[dict[str, Any]], env: Any = "python") -> str:
    with pytest.raises((SuiteError, SuiteProblems)) as caught:
        _write(tmp_path, cases, env)
    return str(caught.value)


def test_a_user_tool_the_tools_file_lacks_is_a_located_error(tmp_path: Path) -> None:
    case = {**SCRIPTED, "user": {**SCRIPTED["user"], "tools": ["toggle_wifi"]}}
    case["user"]["script"] = ["No signal."]
    text = _problems(tmp_path, [case])
    assert "cases[0].user.tools[0]" in text
    assert "user tool 'toggle_wifi': the tools file 'tools.py' has no function" in text


def test_a_script_calling_a_tool_not_among_the_users_is_a_located_error(tmp_path: Path) -> None:
    case = {**SCRIPTED, "user": {**SCRIPTED["user"], "tools": ["check_status_bar"]}}
    text = _problems(tmp_path, [case])
    assert "cases[0].user" in text
    assert "script[1] calls 'toggle_airplane_mode', which is not one of the user's tools" in text


@pytest.mark.parametrize(
    ("env", "kind"),
    [(None, "no environment"), ({"mcp": "stdio:python server.py"}, "an MCP environment")],
)
def test_user_tools_need_a_python_environment(tmp_path: Path, env: Any, kind: str) -> None:
    case = {k: v for k, v in SCRIPTED.items() if k != "end_state"} | {"expect": {"kind": "text"}}
    (tmp_path / "suite").mkdir(parents=True)
    (tmp_path / "suite" / "server.py").write_text("")
    text = _problems(tmp_path, [case], env)
    assert "cases[0].user.tools[0]" in text
    assert (
        f"a user's tools run on a Python environment (a tools file and a state); this suite has {kind}"
        in text
    )


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "user-tools"


def test_the_example_records_the_users_calls_as_the_docs_show(tmp_path: Path) -> None:
    suite = load_suite(EXAMPLE / "suite.yaml", CODE)
    target = Target(spec=f"scripted:{EXAMPLE / 'agent.yaml'}")
    opts = _opts(tmp_path, "ut-run", tags=["scripted"])
    (record,) = run_suite(suite, [target], opts).records
    assert record.outcome is Outcome.ok and record.stopped_by == "user_stop"
    shown = [
        {k: v for k, v in t.model_dump(mode="json").items() if v not in (None, False)}
        for t in record.user_turns or []
    ]
    assert shown == [
        {"text": "Hi, my phone 555-0142 has no signal.", "source": "script", "at": 1},
        {
            "text": "Oh, it was on. I turned airplane mode off.",
            "source": "script",
            "at": 5,
            "calls": [
                {
                    "tool": "toggle_airplane_mode",
                    "args": {},
                    "result": '{"airplane_mode": false}',
                    "is_error": False,
                }
            ],
        },
        {
            "text": "I have 4 bars now. Thanks!",
            "stop": "user_stop",
            "source": "script",
            "at": 9,
            "calls": [
                {
                    "tool": "check_status_bar",
                    "args": {},
                    "result": "Signal 4 bars | 5G",
                    "is_error": False,
                }
            ],
        },
    ]
    assert record.state_changes is not None
    assert [list(c) for c in record.state_changes] == [["set", ["phone", "airplane_mode"], False]]
    assert record.transcript is not None
    seen = [m.content for m in record.transcript if m.role == "tool"]
    assert seen[-1] == '{"phone_seen_on_network": true, "status": "active"}'
    verdict = _scorer(suite).grade(record)
    assert verdict is not None and verdict.passed


def test_one_reply_asking_for_too_many_calls_runs_none_of_them(tmp_path: Path) -> None:
    case = {
        "id": "no-signal",
        "tools": ["check_network"],
        "user": {"instructions": "No signal.", "tools": ["toggle_airplane_mode"]},
        "end_state": {"state": FIXED},
    }
    suite = _write(tmp_path, [case])
    many = [{"name": "toggle_airplane_mode", "raw_arguments": "{}"}] * (MAX_USER_CALLS + 1)
    user = Target(
        spec="scripted:user",
        provider=ScriptedProvider.from_dict(
            {"cases": {"no-signal": {"steps": [{"tool_calls": many}]}}}
        ),
    )
    provider = ScriptedProvider.from_dict({"cases": {"no-signal": {"steps": [{"text": "Hi"}]}}})
    opts = _opts(tmp_path, "run", user_model=user)
    (record,) = run_suite(suite, [Target(spec="scripted:a", provider=provider)], opts).records
    assert record.outcome is Outcome.user_error
    (turn,) = record.user_turns or []
    assert not turn.calls  # the cap holds per reply too: not one of them ran on the state
    assert not record.state_changes


def test_the_users_tool_calls_are_shown_escaped_in_the_terminal_and_html_failure_views(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from toolproof.cli import main

    hostile = "<img src=x onerror=alert(1)> [bold red]loud[/bold red] \x1b[31mred"
    folder = tmp_path / "suite"
    case = {
        **SCRIPTED,
        "user": {
            "tools": ["toggle_airplane_mode", "shout"],
            "script": [
                "My phone has no signal.",
                {
                    "when": {"contains": "airplane", "ignore_case": True},
                    "call": {"tool": "toggle_airplane_mode"},
                    "say": "I turned airplane mode off.",
                },
                {"call": {"tool": "shout", "args": {"n": 1}}, "say": "Thanks! ###STOP###"},
            ],
        },
        # the agent never resets the line: the case fails on its end state
        "end_state": {"state": {"phone": {"airplane_mode": False, "network_resets": 1}}},
    }
    path = write_suite(folder, _suite_data([case]))
    (folder / "state.json").write_text(
        json.dumps({"phone": {"airplane_mode": True, "network_resets": 0}})
    )
    (folder / "tools.py").write_text(
        TOOLS_PY + f"\ndef shout(state, args):\n    return {hostile!r}\n"
    )
    (tmp_path / "agent.yaml").write_text(json.dumps({"cases": {"no-signal": AGENT}}))
    html = tmp_path / "report.html"
    argv = ["toolproof", "run", str(path), "-m", f"scripted:{tmp_path / 'agent.yaml'}"]
    argv += ["--allow-code", "-q", "--no-store", "-o", str(tmp_path / "run"), "--html", str(html)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit):
        main()
    out = " ".join(capsys.readouterr().out.split())
    assert "wrong_end_state" in out
    # each call in its place: after the agent's question, before the user's message
    toggled = 'user→ toggle_airplane_mode() result: {"airplane_mode": false}'
    assert f"{toggled} user I turned airplane mode off." in out
    assert "user→ shout(n=1) result: <img src=x onerror=alert(1)>" in out
    assert "[bold red]loud[/bold red]" in out  # markup shown as written, not applied
    assert "\x1b[31m" not in out and "\\x1b[31mred" in out  # a control shown escaped
    page = html.read_text()
    assert "user tool" in page and "toggle_airplane_mode({})" in page
    assert "shout({&#34;n&#34;: 1})" in page or "shout({&quot;n&quot;: 1})" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page

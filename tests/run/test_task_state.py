"""τ-style task state: a case's own state, setup calls, history applied, tool error text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.errors import SuiteError, SuiteProblems
from toolproof.grade import FunctionsNotRun, Scorer
from toolproof.providers._scripted import ScriptedProvider
from toolproof.run import RunOptions, Target, expected_states, load_checks, run_suite
from toolproof.run._env import case_environment, load_environment, load_initial_state
from toolproof.suite import check_suite, load_suite, load_suite_with_origin
from toolproof.trust import Trust
from toolproof.types import FailureClass, Outcome, Record, Suite, Verdict

ROOT = Path(__file__).resolve().parents[2]
ACCOUNTS = ROOT / "examples" / "accounts"
CODE = Trust(allow_code=True)  # the example runs its own tools


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "raw_arguments": json.dumps(args)}


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "accounts"
    shutil.copytree(ACCOUNTS, folder)
    return folder


def _run(suite: Suite, tmp: Path, script: dict[str, Any]) -> list[Record]:
    provider = ScriptedProvider.from_dict(script)
    opts = RunOptions(trust=CODE, out=tmp / "run", cache=False, fsync=False)
    return run_suite(suite, [Target(spec="scripted:accounts", provider=provider)], opts).records


def _scorer(suite: Suite, *, code: bool = True) -> Scorer:
    """A scorer as ``toolproof score --allow-code`` builds one (without: no suite code)."""
    checks = load_checks(suite, allow_code=True) if code else None
    states = expected_states(suite, CODE)
    return Scorer(suite, states, checks, initial_state=load_initial_state(suite, CODE))


def _verdicts(suite: Suite, records: list[Record]) -> dict[str, Verdict]:
    scorer = _scorer(suite)
    out = {}
    for record in records:
        verdict = scorer.grade(record)
        assert verdict is not None, record.error
        out[record.case_id] = verdict
    return out


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(ACCOUNTS)


def _script() -> dict[str, Any]:
    data = yaml.safe_load((ACCOUNTS / "script.yaml").read_text())
    assert isinstance(data, dict)
    return data


def test_the_shipped_script_passes_every_case(suite: Suite, tmp_path: Path) -> None:
    verdicts = _verdicts(suite, _run(suite, tmp_path, _script()))
    assert sorted(verdicts) == sorted(c.id for c in suite.cases)
    assert all(v.passed for v in verdicts.values()), {
        k: v.checks for k, v in verdicts.items() if not v.passed
    }


def test_the_same_calls_on_the_wrong_starting_state_fail(suite: Suite, tmp_path: Path) -> None:
    # without the history applied, U1 is suspended and change_plan refuses: the model's
    # call gets an error and the end state differs from the gold one
    script = _script()
    script["cases"]["plan-after-history"] = {
        "steps": [{"tool_calls": [_call("get_user", user_id="U1")]}, {"text": "U1 is on pro."}]
    }
    script["cases"]["plan-after-setup"] = {"steps": [{"text": "Done."}]}
    script["cases"]["close-ticket-own-state"] = {
        "steps": [{"tool_calls": [_call("close_ticket", ticket_id="T-2")]}, {"text": "Closed."}]
    }
    verdicts = _verdicts(suite, _run(suite, tmp_path, script))
    for case_id in ("plan-after-history", "plan-after-setup", "close-ticket-own-state"):
        assert verdicts[case_id].failure is FailureClass.wrong_end_state, case_id
    assert verdicts["reactivate"].passed


def test_records_name_the_case_start_and_keep_the_setup(suite: Suite, tmp_path: Path) -> None:
    records = {r.case_id: r for r in _run(suite, tmp_path, _script())}
    initial = load_initial_state(suite, CODE)
    assert initial is not None
    own = records["close-ticket-own-state"]
    assert own.state_base == initial.for_case(own.case_id).base != initial.base
    assert own.state_changes == [("set", ["tickets", "T-1", "open"], False)]
    setup = records["plan-after-setup"].setup
    assert setup is not None
    assert [(c.source, c.tool, c.is_error) for c in setup.calls] == [
        ("setup[0]", "reactivate_user", False)
    ]
    assert setup.changes == [("set", ["users", "U3", "status"], "active")]
    history = records["plan-after-history"].setup
    assert history is not None
    assert [(c.source, c.recorded) for c in history.calls] == [("history[1]", None)]
    # the model was given the history before the prompt
    transcript = records["plan-after-history"].transcript or []
    assert [m.role for m in transcript[:6]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]


def test_a_tool_error_reaches_the_model_verbatim_and_marked(suite: Suite, tmp_path: Path) -> None:
    records = {r.case_id: r for r in _run(suite, tmp_path, _script())}
    tool = [m for m in records["unknown-user"].transcript or [] if m.role == "tool"]
    assert [(m.content, m.is_error) for m in tool] == [("Error: no user U9", True)]


def test_other_exceptions_keep_the_type_and_text(suite: Suite) -> None:
    env = load_environment(suite, CODE)
    assert env is not None
    result = env.session().call("get_user", {})  # KeyError inside the tool
    assert result.is_error
    assert json.loads(result.content) == {"error": "KeyError: 'user_id'"}
    plain = env.session().call("get_user", {"user_id": "U2"})
    assert not plain.is_error


def test_a_returned_tool_error_is_an_error_too(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    tools = folder / "env" / "desk.py"
    tools.write_text(
        tools.read_text()
        + "\n\ndef get_user(state, args):\n    return ToolError({'code': 404, 'user': args['user_id']})\n"
    )
    env = load_environment(load_suite(folder), CODE)
    assert env is not None
    result = env.session().call("get_user", {"user_id": "U5"})
    assert (result.content, result.is_error) == ('{"code": 404, "user": "U5"}', True)


def test_a_history_result_that_differs_is_recorded_not_fatal(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    text = (folder / "suite.yaml").read_text()
    (folder / "suite.yaml").write_text(
        text.replace('content: \'{"status": "active", "user_id": "U1"}\'', "content: all good")
    )
    suite = load_suite(folder)
    case = next(c for c in suite.cases if c.id == "plan-after-history")
    env = case_environment(suite, case, load_environment(suite, CODE), CODE)
    assert env is not None
    session = env.session()
    assert session.setup is not None
    [call] = session.setup.calls
    assert call.recorded == "all good"
    assert json.loads(call.result) == {"status": "active", "user_id": "U1"}
    assert session.snapshot()["users"]["U1"]["status"] == "active"


def test_a_setup_call_that_fails_is_a_harness_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    text = (folder / "suite.yaml").read_text()
    # U3 starts suspended: change_plan refuses before the conversation starts
    text = text.replace(
        "- {tool: reactivate_user, args: {user_id: U3}}",
        "- {tool: change_plan, args: {user_id: U3, plan: pro}}",
    )
    (folder / "suite.yaml").write_text(text)
    suite = load_suite(folder)
    records = {r.case_id: r for r in _run(suite, tmp_path, _script())}
    failed = records["plan-after-setup"]
    assert failed.outcome is Outcome.harness_error
    assert failed.error is not None
    assert failed.error.message.startswith(
        'setup[0] change_plan({"plan": "pro", "user_id": "U3"}) failed before the '
        "conversation started: Error: user U3 is suspended"
    )
    assert records["reactivate"].outcome is Outcome.ok
    states = expected_states(suite, CODE, cases=["plan-after-setup"])
    assert (
        "its setup failed while the expected state was computed"
        in (states["plan-after-setup"].warnings[0])
    )


def _problems(folder: Path) -> list[str]:
    try:
        loaded = load_suite_with_origin(folder / "suite.yaml")
    except SuiteProblems as exc:
        return [p.render() for p in exc.errors]
    return [p.render() for p in check_suite(loaded)]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("../outside.json", "outside"),
        ("/etc/passwd", "absolute"),
        ("link.json", "symbolic link"),
        ("states/missing.json", "no such file 'states/missing.json'"),
        ("states/bad.json", "is not valid JSON"),
        ("states/list.json", "must be a mapping of tables, not list"),
        ("states/deep.json", "nested deeper than"),
        ("states/state.txt", "must be a .json, .yaml or .yml file"),
    ],
)
def test_a_bad_state_file_is_a_located_error(tmp_path: Path, state: str, message: str) -> None:
    folder = _copy(tmp_path)
    (tmp_path / "outside.json").write_text("{}")
    (folder / "link.json").symlink_to(tmp_path / "outside.json")
    (folder / "states" / "bad.json").write_text("{not json")
    (folder / "states" / "list.json").write_text("[1, 2]")
    (folder / "states" / "deep.json").write_text('{"a": ' * 200 + "1" + "}" * 200)
    (folder / "states" / "state.txt").write_text("{}")
    text = (folder / "suite.yaml").read_text()
    (folder / "suite.yaml").write_text(
        text.replace("state: states/closed-account.yaml", f"state: {state}")
    )
    [problem] = _problems(folder)
    assert "suite.yaml:57:" in problem, problem  # the case's state line
    assert "cases[1].state" in problem, problem
    assert message in problem, problem


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("users:\n  U7: [unclosed\n", "closed-account.yaml:3:1: "),
        ("a: " + "[" * 300 + "]" * 300 + "\n", "nested deeper than 100 levels"),
    ],
)
def test_a_bad_yaml_state_file_names_its_own_line(tmp_path: Path, text: str, message: str) -> None:
    folder = _copy(tmp_path)
    (folder / "states" / "closed-account.yaml").write_text(text)
    [problem] = _problems(folder)
    assert problem.startswith(str(folder / "states" / "closed-account.yaml") + ":"), problem
    assert message in problem, problem


def test_setup_of_an_unknown_tool_is_a_located_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    text = (folder / "suite.yaml").read_text()
    (folder / "suite.yaml").write_text(
        text.replace("- {tool: reactivate_user, args: {user_id: U3}}", "- {tool: reactivate_usr}")
    )
    [problem] = _problems(folder)
    assert "suite.yaml:72:" in problem, problem
    assert "cases[2].setup[0].tool: unknown tool 'reactivate_usr'" in problem, problem
    assert "did you mean 'reactivate_user'" in problem, problem


def test_a_changed_state_file_changes_the_fingerprint(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    before = load_suite(folder).fingerprint()
    state = folder / "states" / "closed-account.yaml"
    state.write_text(state.read_text().replace("open: true", "open: false"))
    assert load_suite(folder).fingerprint() != before


DOMAIN_PY = """
from toolproof import ToolError

SETUPS = []


class Desk:
    def __init__(self, users):
        self.users = {k: dict(v) for k, v in users.items()}


def setup(state):
    SETUPS.append(1)
    return Desk(state["users"])


def teardown(desk):
    return {"users": desk.users, "tickets": {}}


def get_user(desk, args):
    return desk.users[args["user_id"]]


def reactivate_user(desk, args):
    user = desk.users[args["user_id"]]
    if user["status"] != "suspended":
        raise ToolError("Error: not suspended")
    user["status"] = "active"
    return "ok"


def change_plan(desk, args):
    desk.users[args["user_id"]]["plan"] = args["plan"]
    return "ok"


def status_is(desk, args):
    return desk.users[args["user_id"]]["status"] == args["status"]
"""


def test_domain_object_hooks_build_one_object_per_attempt(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "env" / "desk.py").write_text(DOMAIN_PY)
    suite = load_suite(folder)
    suite = suite.model_copy(
        update={"cases": [c for c in suite.cases if c.id in ("reactivate", "plan-after-setup")]}
    )
    records = _run(suite, tmp_path, _script())
    verdicts = _verdicts(suite, records)
    assert all(v.passed for v in verdicts.values()), verdicts
    by_case = {r.case_id: r for r in records}
    assert by_case["reactivate"].state_changes == [("set", ["users", "U1", "status"], "active")]
    assert by_case["plan-after-setup"].state_changes == [
        ("set", ["users", "U3", "status"], "active"),
        ("set", ["users", "U3", "plan"], "pro"),
    ]
    env = load_environment(suite, CODE)
    assert env is not None
    module_setups = env.hooks.setup.__globals__["SETUPS"]  # type: ignore[union-attr]
    before = len(module_setups)
    session = env.session()
    session.call("reactivate_user", {"user_id": "U1"})
    session.call("change_plan", {"user_id": "U1", "plan": "pro"})
    assert len(module_setups) == before + 1  # one object for the whole attempt
    assert session.snapshot()["users"]["U1"] == {
        "user_id": "U1",
        "name": "Ada Park",
        "status": "active",
        "plan": "pro",
    }


def test_a_teardown_that_returns_no_json_is_a_harness_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "env" / "desk.py").write_text(
        DOMAIN_PY.replace('return {"users": desk.users, "tickets": {}}', "return desk")
    )
    suite = load_suite(folder)
    suite = suite.model_copy(update={"cases": [suite.cases[0]]})
    [record] = _run(suite, tmp_path, _script())
    assert record.outcome is Outcome.harness_error
    assert record.error is not None
    assert "teardown(obj) did not return JSON data" in record.error.message


def test_a_suite_tool_named_like_a_hook_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "env" / "desk.py").write_text(DOMAIN_PY)
    suite = load_suite(folder)
    tools = [
        t.model_copy(update={"name": "setup"}) if t.name == "get_user" else t for t in suite.tools
    ]
    with pytest.raises(SuiteError, match="'setup' is a suite tool: the name is kept"):
        load_environment(suite.model_copy(update={"tools": tools}), CODE)


def test_assertions_and_facts_fail_a_wrong_attempt_for_their_reasons(
    suite: Suite, tmp_path: Path
) -> None:
    script = _script()
    script["cases"]["reactivate-and-tell"] = {
        "steps": [{"tool_calls": [_call("get_user", user_id="U1")]}, {"text": "Done."}]
    }
    case_ids = ["reactivate-and-tell"]
    only = suite.model_copy(update={"cases": [c for c in suite.cases if c.id in case_ids]})
    records = _run(only, tmp_path, script)
    scorer = _scorer(only)
    [verdict] = [scorer.grade(r) for r in records]
    assert verdict is not None and not verdict.passed
    reasons = {c.failure: c.detail for c in verdict.checks if c.failure is not None}
    assert verdict.failure is FailureClass.failed_assertion
    assert (
        reasons[FailureClass.not_communicated] == 'the agent never told the user "basic plan", "U1"'
    )
    failed = [c.detail for c in verdict.checks if c.failure is FailureClass.failed_assertion]
    assert failed == [
        '2 end-state assertion(s) failed: assert[0]: users.U1.status is "suspended", expected '
        '"active"; assert[2]: 1 row(s) of \'users\' have status "suspended"',
        "1 end-state function assertion(s) failed: assert[3] status_is returned False, "
        "expected True",
    ]
    assert verdict.multistep is not None
    assert verdict.multistep.end_state_ok is False
    # graded without the suite's code, the function assertion is refused, not skipped
    with pytest.raises(FunctionsNotRun, match=r"calls 'status_is' .* --allow-code"):
        _scorer(only, code=False).grade(records[0])


def test_a_passing_attempt_passes_every_assertion(suite: Suite, tmp_path: Path) -> None:
    only = suite.model_copy(
        update={"cases": [c for c in suite.cases if c.id == "reactivate-and-tell"]}
    )
    records = _run(only, tmp_path, _script())
    scorer = _scorer(only)
    [verdict] = [scorer.grade(r) for r in records]
    assert verdict is not None and verdict.passed, verdict.checks
    assert verdict.multistep is not None
    assert verdict.multistep.end_state_ok is True


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        (
            "{function: status_is, args: {user_id: U1, status: active}}",
            "{function: status_was, args: {}}",
            "cases[5].end_state.assert[3].function",
            "the tools file 'env/desk.py' has no function 'status_was'",
        ),
        (
            "{path: users.U1.status, equals: active}",
            "{path: users.U1.status, equal: active}",
            "cases[5].end_state.assert[0]",
            "unknown key 'equal' in a path assertion",
        ),
        (
            "{path: users.U1.plan, matches: {one_of: [basic, pro]}}",
            "{path: users.U1.plan, matches: {one_of: basic}}",
            "cases[5].end_state.assert[1].matches",
            "",
        ),
        (
            "tool_calls: [{id: h1, name: reactivate_user,",
            "tool_calls: [{id: h1, name: reactivate,",
            "cases[3].history[1].tool_calls[0].name",
            "unknown tool 'reactivate'",
        ),
    ],
)
def test_bad_assertions_are_located_errors(
    tmp_path: Path, old: str, new: str, where: str, message: str
) -> None:
    folder = _copy(tmp_path)
    text = (folder / "suite.yaml").read_text()
    assert old in text
    (folder / "suite.yaml").write_text(text.replace(old, new))
    [problem] = _problems(folder)
    assert f"{where}:" in problem, problem
    assert message in problem, problem


def test_unused_conversation_fields_leave_the_fingerprint_as_it_was() -> None:
    # the fingerprint of a suite that uses none of the new case fields is the one it had
    # before they existed: its hashed payload is the old one
    import hashlib

    support = load_suite(ROOT / "examples" / "support")
    payload = support.model_dump(mode="json", exclude={"source", "tools_source", "thresholds"})
    payload.pop("judge", None)
    for key in ("mocks", "environment", "environment_digest"):
        if not payload.get(key):
            payload.pop(key, None)
    if payload["defaults"].get("matching") == "strict":
        payload["defaults"].pop("matching")
    new = ("user", "max_turns", "state", "setup", "history", "communicate")
    for case in payload["cases"]:
        case.pop("judge", None)
        case.pop("generated", None)
        assert case.pop("nl_assertions") is None  # never hashed: a judge checks it
        for key in ("mocks", "trajectory", "end_state"):
            if not case.get(key):
                case.pop(key, None)
        assert all(case.pop(key) is None for key in new)
        if case.get("end_state"):
            assert case["end_state"].pop("assertions") is None
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
    assert support.fingerprint() == hashlib.sha256(blob).hexdigest()[:16]


def test_a_state_file_over_the_size_limit_is_a_located_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "states" / "closed-account.yaml").write_text("users: {}\n" + "#" * 20_000)
    try:
        load_suite_with_origin(folder / "suite.yaml", Trust(max_file_bytes=10_000))
    except SuiteProblems as exc:
        [problem] = [p.render() for p in exc.errors]
    assert "suite.yaml:57:5: cases[1].state:" in problem, problem
    assert "is larger than the limit of 10,000 bytes (20,010 bytes)" in problem, problem


def test_a_case_state_on_an_sqlite_environment_and_setup_without_one_are_refused(
    tmp_path: Path,
) -> None:
    folder = _copy(tmp_path)
    text = (folder / "suite.yaml").read_text()
    (folder / "env" / "state.sql").write_text("CREATE TABLE users (user_id TEXT);")
    (folder / "suite.yaml").write_text(
        text.replace("state: env/state.json", "state: env/state.sql")
    )
    problems = _problems(folder)
    assert any(
        "cases[1].state: a case's state (JSON data) cannot replace the environment's SQLite" in p
        for p in problems
    ), problems
    start = text.index("environment:")
    (folder / "suite.yaml").write_text(text[:start] + text[text.index("cases:") :])
    problems = _problems(folder)
    assert any(
        "cases[2].setup[0].tool: setup calls run on a Python environment's state: the suite "
        "has no 'environment'" in p
        for p in problems
    ), problems

"""Stateful environments: private copies, user tools, SQLite, gold-action replay."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.grade import apply_changes
from toolproof.run._env import load_environment, load_initial_state
from toolproof.trust import Trust
from toolproof.types import Environment, GoldAction, Suite, SuiteTool

TOOLS_PY = """
def get(state, args):
    return state["items"][args["id"]]

def set_status(state, args):
    if args["id"] not in state["items"]:
        raise KeyError(args["id"])
    state["items"][args["id"]]["status"] = args["status"]
    return {"ok": True}
"""

SQL_TOOLS_PY = """
def get(db, args):
    row = db.execute("SELECT id, status FROM items WHERE id = ?", (args["id"],)).fetchone()
    return dict(row)

def set_status(db, args):
    db.execute("UPDATE items SET status = ? WHERE id = ?", (args["status"], args["id"]))
    return {"ok": True}
"""

CODE = Trust(allow_code=True)  # these suites run their own tools


def _suite(tmp_path: Path, state: str, tools: str) -> Suite:
    return Suite(
        name="env",
        tools=[SuiteTool(name="get"), SuiteTool(name="set_status")],
        cases=[],
        environment=Environment(state=state, tools=tools),
        source=str(tmp_path / "suite.yaml"),
    )


@pytest.fixture
def json_suite(tmp_path: Path) -> Suite:
    (tmp_path / "state.json").write_text(json.dumps({"items": {"a": {"status": "open"}}}))
    (tmp_path / "tools.py").write_text(TOOLS_PY)
    return _suite(tmp_path, "state.json", "tools.py")


def test_each_session_is_a_private_copy_and_the_file_never_changes(
    json_suite: Suite, tmp_path: Path
) -> None:
    env = load_environment(json_suite, CODE)
    assert env is not None
    one = env.session()
    result = one.call("set_status", {"id": "a", "status": "closed"})
    assert not result.is_error
    assert one.snapshot()["items"]["a"]["status"] == "closed"
    assert env.session().snapshot()["items"]["a"]["status"] == "open"
    assert json.loads((tmp_path / "state.json").read_text())["items"]["a"]["status"] == "open"


def test_a_tool_exception_is_an_error_result(json_suite: Suite) -> None:
    env = load_environment(json_suite, CODE)
    assert env is not None
    result = env.session().call("set_status", {"id": "zz", "status": "x"})
    assert result.is_error
    assert "KeyError" in result.content


def test_replay_of_gold_actions_gives_the_expected_state(json_suite: Suite) -> None:
    env = load_environment(json_suite, CODE)
    assert env is not None
    state = env.replay([GoldAction(tool="set_status", args={"id": "a", "status": "done"})])
    assert state == {"items": {"a": {"status": "done"}}}
    assert env.replay([]) == {"items": {"a": {"status": "open"}}}


def test_sqlite_script_state_is_dumped_as_tables_of_rows(tmp_path: Path) -> None:
    (tmp_path / "state.sql").write_text(
        "CREATE TABLE items (id TEXT PRIMARY KEY, status TEXT);"
        "INSERT INTO items VALUES ('a', 'open'), ('b', 'open');"
    )
    (tmp_path / "tools.py").write_text(SQL_TOOLS_PY)
    env = load_environment(_suite(tmp_path, "state.sql", "tools.py"), CODE)
    assert env is not None
    session = env.session()
    assert json.loads(session.call("get", {"id": "b"}).content) == {"id": "b", "status": "open"}
    session.call("set_status", {"id": "b", "status": "closed"})
    assert session.snapshot() == {
        "items": {"a": {"id": "a", "status": "open"}, "b": {"id": "b", "status": "closed"}}
    }
    session.close()
    assert env.session().snapshot()["items"]["b"]["status"] == "open"


def test_sqlite_database_file_is_copied_not_written(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "state.db")
    db.executescript(
        "CREATE TABLE items (id TEXT, status TEXT); INSERT INTO items VALUES ('a', 'open');"
    )
    db.commit()
    db.close()
    (tmp_path / "tools.py").write_text(SQL_TOOLS_PY)
    env = load_environment(_suite(tmp_path, "state.db", "tools.py"), CODE)
    assert env is not None
    after = env.replay([GoldAction(tool="set_status", args={"id": "a", "status": "x"})])
    assert after["items"]["a"]["status"] == "x"
    check = sqlite3.connect(tmp_path / "state.db")
    assert check.execute("SELECT status FROM items").fetchone() == ("open",)
    check.close()


def test_missing_files_and_unknown_state_formats_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        load_environment(_suite(tmp_path, "nope.json", "tools.py"), CODE)
    (tmp_path / "state.csv").write_text("a,b")
    (tmp_path / "tools.py").write_text(TOOLS_PY)
    with pytest.raises(UserError, match=r"must be \.json"):
        load_environment(_suite(tmp_path, "state.csv", "tools.py"), CODE)


def test_no_environment_is_none() -> None:
    assert load_environment(Suite(name="s", tools=[], cases=[])) is None


def test_a_session_ends_with_its_changes_only(json_suite: Suite) -> None:
    env = load_environment(json_suite, CODE)
    assert env is not None
    session = env.session()
    session.call("get", {"id": "a"})
    assert session.changes() == []
    session.call("set_status", {"id": "a", "status": "closed"})
    assert session.changes() == [("set", ["items", "a", "status"], "closed")]
    assert env.initial == {"items": {"a": {"status": "open"}}}
    assert env.base.startswith("sha256:") and len(env.base) == 7 + 64


def test_sqlite_sessions_end_with_their_changes_too(tmp_path: Path) -> None:
    (tmp_path / "state.sql").write_text(
        "CREATE TABLE items (id TEXT PRIMARY KEY, status TEXT);"
        "INSERT INTO items VALUES ('a', 'open'), ('b', 'open');"
    )
    (tmp_path / "tools.py").write_text(SQL_TOOLS_PY)
    env = load_environment(_suite(tmp_path, "state.sql", "tools.py"), CODE)
    assert env is not None
    session = env.session()
    session.call("set_status", {"id": "b", "status": "closed"})
    changes = session.changes()
    assert changes == [("set", ["items", "b", "status"], "closed")]
    assert apply_changes(env.initial, changes) == session.snapshot()
    session.close()


def test_the_initial_state_is_read_without_running_the_suite_code(json_suite: Suite) -> None:
    initial = load_initial_state(json_suite)  # default trust: no code allowed
    env = load_environment(json_suite, CODE)
    assert initial is not None and env is not None
    assert initial.state == {"items": {"a": {"status": "open"}}}
    assert initial.base == env.base

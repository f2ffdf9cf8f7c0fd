"""Stateful environments: an initial state and the suite author's Python tools.

The state is a JSON file (a mapping of tables) loaded into memory, or an SQLite
database (``.db``/``.sqlite``/``.sqlite3``, or a ``.sql`` script) copied into an
in-memory database. Each attempt gets a fresh copy, so nothing on disk changes
and nothing real is executed: tool functions ``name(state, args) -> result``
only change the copy. Tool code is the suite author's own code and is trusted
like a test fixture.

The state is compared as JSON: SQLite tables become ``{table: {key: row}}``,
keyed by the table's first column.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from toolproof.errors import UserError
from toolproof.grade import ExpectedState
from toolproof.match._mock import ToolResult, result_of
from toolproof.types import Environment, GoldAction, Suite

__all__ = [
    "EnvSession",
    "LoadedEnvironment",
    "expected_states",
    "gold_action_warnings",
    "load_environment",
]

ToolFn = Callable[[Any, Any], Any]
_SQLITE = (".db", ".sqlite", ".sqlite3")


class LoadedEnvironment:
    """An environment read once: the initial state and the tool functions."""

    def __init__(self, state_path: Path, tools: dict[str, ToolFn]) -> None:
        self.state_path = state_path
        self.tools = tools
        self._json: Any = None
        if state_path.suffix == ".json":
            self._json = json.loads(state_path.read_text(encoding="utf-8"))
        elif state_path.suffix not in (*_SQLITE, ".sql"):
            raise UserError(f"{state_path}: the state must be .json, .db, .sqlite or .sql")

    def session(self) -> EnvSession:
        """A fresh, private copy of the initial state."""
        if self._json is not None:
            return EnvSession(copy.deepcopy(self._json), self.tools)
        db = sqlite3.connect(":memory:")
        if self.state_path.suffix == ".sql":
            db.executescript(self.state_path.read_text(encoding="utf-8"))
        else:
            source = sqlite3.connect(f"file:{self.state_path}?mode=ro", uri=True)
            try:
                source.backup(db)
            finally:
                source.close()
        db.row_factory = sqlite3.Row
        return EnvSession(db, self.tools)

    def replay(self, actions: list[GoldAction]) -> Any:
        """The state after running the gold actions on a fresh copy (pure: nothing persists)."""
        return self.replay_checked(actions)[0]

    def replay_checked(self, actions: list[GoldAction]) -> tuple[Any, list[tuple[int, str]]]:
        """The state after the gold actions, and (index, error text) of each action that failed."""
        session = self.session()
        failed: list[tuple[int, str]] = []
        try:
            for i, action in enumerate(actions):
                if not session.has(action.tool):
                    failed.append((i, f"the environment has no tool '{action.tool}'"))
                    continue
                result = session.call(action.tool, action.args)
                if result.is_error:
                    failed.append((i, result.content))
            return session.snapshot(), failed
        finally:
            session.close()


class EnvSession:
    """One attempt's private state and the tools that act on it."""

    def __init__(self, state: Any, tools: dict[str, ToolFn]) -> None:
        self.state = state
        self.tools = tools

    def has(self, name: str) -> bool:
        return name in self.tools

    def call(self, name: str, arguments: Any) -> ToolResult:
        """Run a tool on the state. An exception it raises is the tool's error result."""
        try:
            value = self.tools[name](self.state, arguments)
        except Exception as exc:  # the tool's own failure is an answer, not a harness error
            return ToolResult(
                json.dumps({"error": f"{type(exc).__name__}: {exc}"}, ensure_ascii=False),
                is_error=True,
                fault="exception",
            )
        if isinstance(self.state, sqlite3.Connection):
            self.state.commit()
        return result_of(value)

    def snapshot(self) -> Any:
        """The state as JSON data (a deep copy)."""
        if isinstance(self.state, sqlite3.Connection):
            return dump_sqlite(self.state)
        return json.loads(json.dumps(self.state, default=str))

    def close(self) -> None:
        if isinstance(self.state, sqlite3.Connection):
            self.state.close()


def dump_sqlite(db: sqlite3.Connection) -> dict[str, dict[str, dict[str, Any]]]:
    """Every table as {key: row}, keyed by the first column's value."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    tables = db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name"
    ).fetchall()
    for (table,) in (tuple(t) for t in tables):
        cursor = db.execute(f'SELECT * FROM "{table}"')  # table names from sqlite_master
        columns = [d[0] for d in cursor.description]
        out[table] = {str(row[0]): dict(zip(columns, row, strict=True)) for row in cursor}
    return out


def _load_module(path: Path) -> ModuleType:
    name = f"toolproof_env_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: cannot load the environment's tools")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_environment(suite: Suite) -> LoadedEnvironment | None:
    """The suite's environment (paths relative to the suite file); None when it has none."""
    env: Environment | None = suite.environment
    if env is None:
        return None
    base = Path(suite.source).parent if suite.source else Path.cwd()
    state, tools_file = (base / env.state).resolve(), (base / env.tools).resolve()
    for p in (state, tools_file):
        if not p.is_file():
            raise UserError(f"environment: no such file {p}")
    module = _load_module(tools_file)
    names = [t.name for t in suite.tools]
    fns = {n: getattr(module, n) for n in names if callable(getattr(module, n, None))}
    return LoadedEnvironment(state, fns)


def expected_states(
    suite: Suite, env: LoadedEnvironment | None = None
) -> dict[str, ExpectedState]:
    """Case ID -> the expected end state its gold actions produce (runs the suite's tool code).

    Each case's actions run on a fresh copy of the initial state. A gold action
    that fails is not silent: the state carries a warning naming the case and
    the action (``ExpectedState.warnings``).
    """
    cases = [c for c in suite.cases if c.end_state is not None and c.end_state.actions]
    if not cases:
        return {}
    env = env or load_environment(suite)
    if env is None:
        raise UserError(f"case {cases[0].id}: gold actions need a suite 'environment'")
    out: dict[str, ExpectedState] = {}
    for case in cases:
        assert case.end_state is not None and case.end_state.actions is not None
        actions = case.end_state.actions
        state, failed = env.replay_checked(actions)
        warnings = tuple(
            f"case {case.id}: end_state.actions[{i}] {actions[i].tool}"
            f"({json.dumps(actions[i].args, ensure_ascii=False, sort_keys=True)}) failed "
            f"while the expected state was computed: {' '.join(text.split())[:200]}"
            for i, text in failed
        )
        out[case.id] = ExpectedState(state, False, warnings)
    return out


def gold_action_warnings(states: dict[str, ExpectedState]) -> list[str]:
    """Every warning about failed gold actions, in case order."""
    return [w for s in states.values() for w in s.warnings]

"""Stateful environments: an initial state and the suite author's Python tools.

The state is a JSON file (a mapping of tables) loaded into memory, or an SQLite
database (``.db``/``.sqlite``/``.sqlite3``, or a ``.sql`` script) copied into an
in-memory database. Each attempt gets a fresh copy, so nothing on disk changes:
tool functions ``name(state, args) -> result`` only change the copy. A JSON
state's copy is copy-on-write (:func:`toolproof.grade.cow`): a table or a row
is copied only when a tool reaches it, so an attempt costs what it touches,
not the size of the state. An attempt ends with its changes against the
initial state (:meth:`EnvSession.changes`); the full end state is rebuilt
from the initial state and the changes when it is needed.

The tool functions are Python from the suite, so they are loaded only when the
user allows code (``--allow-code``, or ``allow_code: true`` in their own
config): see :mod:`toolproof.trust`. SQLite state runs on an in-memory
database whose authorizer refuses ``ATTACH`` (and so ``VACUUM INTO``),
``load_extension`` and pragmas outside a short list, so the SQL cannot read or
write other files; a ``.sql`` script gets a time budget.

The state is compared as JSON: SQLite tables become ``{table: {key: row}}``,
keyed by the table's first column.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from toolproof.errors import SuiteError, ToolError, UserError
from toolproof.grade import (
    STATE_FUNCTIONS,
    CompiledCase,
    ExpectedState,
    InitialState,
    apply_changes,
    cow,
    function_asserts,
    state_changes,
)
from toolproof.match import ToolResult, result_of
from toolproof.suite import parse_state
from toolproof.trust import (
    DEFAULT_TRUST,
    TooDeep,
    Trust,
    UnsafePath,
    loads_json,
    read_capped,
    resolve_inside,
)
from toolproof.types import (
    Case,
    Check,
    Environment,
    FailureClass,
    GoldAction,
    Setup,
    SetupCall,
    Stage,
    Suite,
)

__all__ = [
    "CodeNotAllowed",
    "DomainHooks",
    "EnvSession",
    "LoadedEnvironment",
    "SetupFailed",
    "case_environment",
    "case_start_states",
    "code_not_allowed",
    "expected_states",
    "gold_action_warnings",
    "load_environment",
    "load_initial_state",
    "safe_sqlite",
]

ToolFn = Callable[[Any, Any], Any]
_SQLITE = (".db", ".sqlite", ".sqlite3")


#: Wall time a ``.sql`` state script may take to build the initial state.
SQL_SCRIPT_SECONDS = 10.0
#: Pragmas a state script may use; every other one is refused.
_PRAGMAS = frozenset(
    {"foreign_keys", "table_info", "table_xinfo", "index_list", "index_info", "user_version"}
)
_DENIED = {
    sqlite3.SQLITE_ATTACH: "ATTACH (and VACUUM INTO) could reach other files",
    sqlite3.SQLITE_DETACH: "DETACH",
}


class CodeNotAllowed(SuiteError):
    """The suite would run its own Python, and the user has not allowed code."""


def code_not_allowed(suite: Suite, why: str | None = None) -> CodeNotAllowed:
    """The error for a suite whose environment tools may not run."""
    env = suite.environment
    need = f" (needed by {why})" if why else ""
    if env is not None and env.mcp is not None:
        what, field = f"'{env.mcp}' starts a real MCP server whose tools run real code", "mcp"
    else:
        what = f"'{env.tools if env is not None else 'its tools'}' is Python from the suite"
        field = "tools"
    path = ("environment", field)
    line, column = _line_of(suite, path)
    return CodeNotAllowed(
        suite.source or "suite",
        f"{what}{need}; toolproof runs suite code only with "
        "--allow-code or allow_code: true in your own toolproof.yaml "
        "(never for untrusted pull requests)",
        line=line,
        column=column,
        path=path,
    )


def _line_of(suite: Suite, path: tuple[str, ...]) -> tuple[int | None, int | None]:
    """Where ``path`` is in the suite's file (read again: this is only for an error)."""
    if not suite.source:
        return None, None
    from toolproof.suite._load import load_suite_with_origin

    try:
        where = load_suite_with_origin(suite.source).origin.suite
    except (UserError, OSError):
        return None, None
    if where is None:
        return None, None
    located = where.error(path, "")
    return located.line, located.column


def _authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
    if action in _DENIED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() == "load_extension":
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() not in _PRAGMAS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def safe_sqlite(data: bytes | None = None) -> sqlite3.Connection:
    """An in-memory database (from a database file's bytes) that cannot reach other files."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    if data is not None:
        db.deserialize(data)
    db.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    db.set_authorizer(_authorize)
    return db


def _run_script(db: sqlite3.Connection, script: str, source: str) -> None:
    deadline = time.monotonic() + SQL_SCRIPT_SECONDS
    db.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
    try:
        db.executescript(script)
    except sqlite3.Error as exc:
        late = time.monotonic() > deadline
        reason = f"took longer than {SQL_SCRIPT_SECONDS:g} s" if late else str(exc)
        raise UserError(f"{source}: the state script failed: {reason}") from None
    finally:
        db.set_progress_handler(None, 0)


@dataclass(frozen=True, slots=True)
class DomainHooks:
    """The tools file's optional ``setup(state) -> obj`` and ``teardown(obj) -> state``.

    With ``setup``, each session builds one domain object from its private copy
    of the state, and every tool gets that object instead of the state. With
    ``teardown``, the state is what it returns (JSON data); it must not change
    the object, and runs whenever the state is read (after the setup calls, at
    the end, and for gold actions). Without it, the state is the copy ``setup``
    received, as the object left it.
    """

    setup: Callable[[Any], Any] | None = None
    teardown: Callable[[Any], Any] | None = None


def _exc_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


class SetupFailed(Exception):
    """A case's ``setup`` (or ``history``) call failed: the harness could not prepare the
    case's starting state. The attempt is a harness error, never the agent's failure."""


#: A call run before the conversation: (where it came from, tool, arguments, the
#: result the history recorded or None).
Prelude = tuple[str, str, Any, "str | None"]


class LoadedEnvironment:
    """An environment read once: the initial state and the tool functions.

    ``prelude``: calls run on every fresh session before anything else (a
    case's ``setup`` and ``history`` calls, see :func:`case_environment`).
    """

    def __init__(
        self,
        state_path: Path | None,
        tools: dict[str, ToolFn],
        state: bytes | None = None,
        *,
        data: Any = None,
        base: str | None = None,
        prelude: tuple[Prelude, ...] = (),
        cases: dict[str, InitialState] | None = None,
        hooks: DomainHooks | None = None,
    ) -> None:
        self.state_path = state_path
        self.tools = tools
        #: Functions of the tools file that only ``setup`` calls name (never offered to
        #: the agent, e.g. a τ2 domain's initialisation functions).
        self.setup_functions: dict[str, ToolFn] = {}
        #: Functions of the tools file that only a simulated user calls (``user.tools``
        #: naming no suite tool; never offered to the agent).
        self.user_functions: dict[str, ToolFn] = {}
        self.prelude = prelude
        self.hooks = hooks or DomainHooks()
        #: The tools file, loaded (None for an environment made from data alone).
        self.module: ModuleType | None = None
        self.cases: dict[str, InitialState] = cases if cases is not None else {}
        self._json: Any = None
        self._dump: Any = None
        if state_path is None:  # a case's own state, already read as data
            self._bytes = b""
            self._json = data
            self.base = base or state_base(canonical_bytes(data))
            return
        self._bytes = state if state is not None else state_path.read_bytes()
        #: Names the initial state a record's changes apply to: the hash of the state file.
        self.base = state_base(self._bytes)
        if state_path.suffix == ".json":
            try:
                self._json = loads_json(self._bytes)
            except (ValueError, TooDeep) as exc:
                raise UserError(f"{state_path}: not a valid JSON state: {exc}") from None
        elif state_path.suffix not in (*_SQLITE, ".sql"):
            raise UserError(f"{state_path}: the state must be .json, .db, .sqlite or .sql")
        else:
            self.session().close()  # a broken database or script is an error now, not per attempt

    def derived(
        self, start: InitialState | None, prelude: tuple[Prelude, ...]
    ) -> LoadedEnvironment:
        """This environment's tools on another starting state, with calls run first."""
        if start is None:
            env = LoadedEnvironment.__new__(LoadedEnvironment)
            env.__dict__.update(self.__dict__)
            env.prelude = prelude
            return env
        env = LoadedEnvironment(
            None, self.tools, data=start.state, base=start.base, prelude=prelude, hooks=self.hooks
        )
        env.setup_functions = self.setup_functions
        env.user_functions = self.user_functions
        return env

    @property
    def initial(self) -> Any:
        """The initial state as JSON data (shared: read it, never change it)."""
        if self._json is not None:
            return self._json
        if self._dump is None:
            session = self.session()
            try:
                assert isinstance(session.state, sqlite3.Connection)
                self._dump = dump_sqlite(session.state)
            finally:
                session.close()
        return self._dump

    def initial_state(self) -> InitialState:
        """The initial state and its hash, for rebuilding end states from records (with
        the starting states of the cases that give their own)."""
        return InitialState(self.initial, self.base, self.cases)

    def session(self) -> EnvSession:
        """A fresh, private copy of the initial state (copy-on-write for a JSON state),
        with the prelude's calls run on it. A prelude call that fails is
        :class:`SetupFailed`."""
        session = self._fresh()
        if self.prelude:
            try:
                session.setup = _run_prelude(session, self.prelude)
            except BaseException:
                session.close()
                raise
        return session

    def _fresh(self) -> EnvSession:
        if self._json is not None:
            return EnvSession(cow(self._json), self.tools, self)
        assert self.state_path is not None
        if self.state_path.suffix == ".sql":
            db = safe_sqlite()
            _run_script(db, self._bytes.decode("utf-8", "replace"), str(self.state_path))
        else:
            try:
                db = safe_sqlite(self._bytes)
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.Error as exc:
                raise UserError(f"{self.state_path}: not an SQLite database: {exc}") from None
        db.row_factory = sqlite3.Row
        return EnvSession(db, self.tools, self)

    def replay(self, actions: list[GoldAction]) -> Any:
        """The state after running the gold actions on a fresh copy (pure: nothing persists)."""
        return self.replay_checked(actions)[0]

    def replay_checked(self, actions: list[GoldAction]) -> tuple[Any, list[tuple[int, str]]]:
        """The state after the gold actions, and (index, error text) of each action that
        failed; index -1: the case's setup failed (the actions then run on the state
        as it was before the setup)."""
        failed: list[tuple[int, str]] = []
        try:
            session = self.session()
        except SetupFailed as exc:
            failed.append((-1, str(exc)))
            try:
                session = self._fresh()
            except SetupFailed:  # the setup hook itself failed: nothing can run
                return self.initial, failed
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

    def __init__(
        self, state: Any, tools: dict[str, ToolFn], env: LoadedEnvironment | None = None
    ) -> None:
        self.state = state
        self.tools = tools
        self.env = env
        #: The case's setup and history calls run on this session, and what they changed.
        self.setup: Setup | None = None
        hooks = env.hooks if env is not None else DomainHooks()
        self._teardown = hooks.teardown
        #: What the tools work on: the domain object ``setup(state)`` built, or the state.
        self.obj: Any = state
        if hooks.setup is not None:
            try:
                self.obj = hooks.setup(state)
            except Exception as exc:
                raise SetupFailed(
                    f"the tools file's setup(state) failed: {_exc_text(exc)}"
                ) from None

    def has(self, name: str) -> bool:
        return name in self.tools

    def has_user(self, name: str) -> bool:
        """A function of the tools file the simulated user may run (a suite tool's, or one
        kept for the user alone)."""
        return name in self.tools or (self.env is not None and name in self.env.user_functions)

    def call(
        self, name: str, arguments: Any, *, setup: bool = False, user: bool = False
    ) -> ToolResult:
        """Run a tool on the state. An exception it raises is the tool's error result.
        ``setup``: a case's setup call, which may also name a setup-only function;
        ``user``: the simulated user's call, which may name a user-only function."""
        fn = self.tools.get(name)
        if fn is None and setup and self.env is not None:
            fn = self.env.setup_functions[name]
        if fn is None and user and self.env is not None:
            fn = self.env.user_functions[name]
        assert fn is not None
        try:
            value = fn(self.obj, arguments)
        except ToolError as exc:  # the tool's own error text, for the model to read as it is
            return ToolResult(exc.text(), is_error=True, fault="error")
        except Exception as exc:  # the tool's own failure is an answer, not a harness error
            return ToolResult(
                json.dumps({"error": f"{type(exc).__name__}: {exc}"}, ensure_ascii=False),
                is_error=True,
                fault="exception",
            )
        if isinstance(self.state, sqlite3.Connection):
            self.state.commit()
        if isinstance(value, ToolError):  # returned rather than raised: the same answer
            return ToolResult(value.text(), is_error=True, fault="error")
        return result_of(value)

    def changes(self) -> list[tuple[Any, ...]]:
        """What the attempt changed in the initial state (:func:`toolproof.grade.state_changes`).

        A JSON state compares only what the tools reached; an SQLite state is
        read whole and compared table by table; a domain object is turned back
        into a state by the tools file's ``teardown(obj)``.
        """
        if self.env is None:
            raise ValueError("a session made without its environment has no initial state")
        return state_changes(self.current(), self.env.initial)

    def current(self) -> Any:
        """The state now (a view: read it, never change it)."""
        if self._teardown is not None:
            try:
                value = self._teardown(self.obj)
            except Exception as exc:
                raise SetupFailed(
                    f"the tools file's teardown(obj) failed: {_exc_text(exc)}"
                ) from None
            try:
                return loads_json(json.dumps(value, allow_nan=False))
            except (TypeError, ValueError) as exc:
                raise SetupFailed(
                    f"the tools file's teardown(obj) did not return JSON data: {exc}"
                ) from None
        if isinstance(self.state, sqlite3.Connection):
            return dump_sqlite(self.state)
        return self.state

    def snapshot(self) -> Any:
        """The state as JSON data. Rebuilt from the changes, it shares what did not
        change with the initial state: read it, never change it."""
        if self.env is None:
            if isinstance(self.state, sqlite3.Connection):
                return dump_sqlite(self.state)
            return json.loads(json.dumps(self.state, default=str))
        return apply_changes(self.env.initial, self.changes())

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


def state_base(data: bytes) -> str:
    """The name of an initial state: ``sha256:`` and the hash of its file."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def load_initial_state(suite: Suite, trust: Trust = DEFAULT_TRUST) -> InitialState | None:
    """The suite's initial environment state, read as data (no suite code runs); None without one.

    It is what a record's state changes apply to (see :class:`toolproof.grade.InitialState`),
    with the starting states of the cases that give their own (``Case.state``).
    """
    cases = case_start_states(suite, trust)
    env: Environment | None = suite.environment
    if env is None or env.mcp is not None or env.state is None:  # an MCP server: read whole
        return InitialState(None, "", cases) if cases else None
    path, data = _read_env_file(suite, "state", env.state, trust)
    return LoadedEnvironment(path, {}, data, cases=cases).initial_state()


def canonical_bytes(state: Any) -> bytes:
    """A state's canonical JSON (sorted keys), whose hash names an inline starting state."""
    return json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def case_start_states(suite: Suite, trust: Trust = DEFAULT_TRUST) -> dict[str, InitialState]:
    """Case ID -> the starting state a case gives itself (``Case.state``), read as data.

    An inline state is named by the hash of its canonical JSON, a file by the
    hash of its bytes. A file is read once however many cases name it; it must
    be inside the suite's folder (the loader has checked it; this checks again).
    """
    out: dict[str, InitialState] = {}
    files: dict[str, InitialState] = {}
    for case in suite.cases:
        if isinstance(case.state, dict):
            out[case.id] = InitialState(case.state, state_base(canonical_bytes(case.state)))
        elif isinstance(case.state, str):
            start = files.get(case.state)
            if start is None:
                path, data = _read_env_file(suite, "state", case.state, trust, case=case)
                try:
                    state = parse_state(data, case.state, trust, file=str(path))
                except ValueError as exc:
                    raise SuiteError(
                        suite.source or "suite", str(exc), path=("cases", case.id, "state")
                    ) from None
                start = files[case.state] = InitialState(state, state_base(data))
            out[case.id] = start
    return out


def prelude_of(case: Case) -> tuple[Prelude, ...]:
    """The calls run on a case's state before its conversation, in order.

    First ``setup`` (each must succeed), then every tool call of ``history``
    whose result the history holds (matched by the call's ``id``), as τ²-bench
    applies its message history; a call with no result in the history is not
    run. The history's own result text is kept beside each call, to record
    where the environment answers otherwise.
    """
    out: list[Prelude] = [
        (f"setup[{i}]", a.tool, a.args, None) for i, a in enumerate(case.setup or ())
    ]
    history = case.history or []
    results = {
        m.tool_call_id: m for m in history if m.role == "tool" and m.tool_call_id is not None
    }
    for i, message in enumerate(history):
        if message.role != "assistant":
            continue
        for call in message.tool_calls or ():
            answer = results.get(call.id) if call.id is not None else None
            if answer is None:
                continue
            args = call.arguments
            if args is None and call.raw_arguments is not None:
                try:
                    args = json.loads(call.raw_arguments)
                except ValueError:
                    args = call.raw_arguments
            out.append((f"history[{i}]", call.name, args, answer.content or ""))
    return tuple(out)


def case_environment(
    suite: Suite,
    case: Case,
    env: LoadedEnvironment | None,
    trust: Trust = DEFAULT_TRUST,
) -> LoadedEnvironment | None:
    """The environment one case runs in: the suite's tools on the case's starting state
    (its own ``state``, or the suite's), with its ``setup`` and ``history`` calls run
    first on every fresh session. None: the case has no state at all."""
    prelude = prelude_of(case)
    if env is None:
        if case.state is None:
            return None
        own = case_start_states(suite.model_copy(update={"cases": [case]}), trust)[case.id]
        return LoadedEnvironment(None, {}, data=own.state, base=own.base, prelude=prelude)
    start: InitialState | None = env.cases.get(case.id)
    if start is None and case.state is not None:
        start = case_start_states(suite.model_copy(update={"cases": [case]}), trust)[case.id]
    if start is None and not prelude:
        return env
    return env.derived(start, prelude)


def _same_result(recorded: str, actual: str) -> bool:
    """The history's result and the environment's say the same: equal as JSON, or as
    text once surrounding spaces are dropped."""
    if recorded.strip() == actual.strip():
        return True
    try:
        return bool(json.loads(recorded) == json.loads(actual))
    except ValueError:
        return False


def _run_prelude(session: EnvSession, prelude: tuple[Prelude, ...]) -> Setup:
    calls: list[SetupCall] = []
    for source, tool, args, recorded in prelude:
        shown = f"{source} {tool}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
        extra = session.env.setup_functions if session.env is not None else {}
        if not session.has(tool) and (recorded is not None or tool not in extra):
            if recorded is not None:
                continue  # a history call of a tool no environment function implements
            raise SetupFailed(f"{shown}: the environment has no tool '{tool}'")
        result = session.call(tool, args, setup=recorded is None)
        if recorded is None and result.is_error:
            text = " ".join(result.content.split())[:300]
            raise SetupFailed(f"{shown} failed before the conversation started: {text}")
        differs = recorded is not None and not _same_result(recorded, result.content)
        calls.append(
            SetupCall(
                source=source,
                tool=tool,
                args=args,
                result=result.content,
                is_error=result.is_error,
                recorded=recorded if differs else None,
            )
        )
    changes = session.changes() if session.env is not None else []
    return Setup.model_validate({"calls": calls, "changes": [list(c) for c in changes]})


def _read_env_file(
    suite: Suite, key: str, name: str, trust: Trust, *, case: Case | None = None
) -> tuple[Path, bytes]:
    base = Path(suite.source).parent if suite.source else Path.cwd()
    field: tuple[str, ...] = ("environment", key) if case is None else ("cases", case.id, key)
    try:
        path = resolve_inside(base, name)
        return path, read_capped(path, trust.max_file_bytes, name)
    except UnsafePath as exc:
        raise SuiteError(suite.source or "suite", str(exc), path=field) from None
    except FileNotFoundError:
        raise SuiteError(suite.source or "suite", f"no such file '{name}'", path=field) from None
    except OSError as exc:
        raise SuiteError(
            suite.source or "suite", f"cannot read '{name}': {exc.strerror or exc}", path=field
        ) from None


def _load_module(path: Path, source: bytes) -> ModuleType:
    name = f"toolproof_env_{abs(hash(str(path.resolve())))}"
    module = ModuleType(name)
    module.__file__ = str(path)
    from toolproof.suite._load import unparsable

    try:
        code = compile(source, str(path), "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise UserError(f"{path}: {unparsable(path.name, exc)}") from None
    try:
        exec(code, module.__dict__)
    except Exception:
        raise  # the suite's own code failed: its callers say so, located
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, a BaseException of its own
        raise UserError(
            f"{path}: the tools file stopped Python at import (it raised {exc!r}); a tools "
            "file must define its functions and return, not exit"
        ) from None
    return module


def load_environment(
    suite: Suite, trust: Trust = DEFAULT_TRUST, *, why: str | None = None
) -> LoadedEnvironment | None:
    """The suite's environment (paths inside the suite's folder); None when it has none.

    Its tools are the suite's own Python, so this refuses with
    :class:`CodeNotAllowed` unless ``trust.allow_code``.
    """
    env: Environment | None = suite.environment
    if env is None or env.mcp is not None:  # an MCP server starts per attempt (mcpenv)
        return None
    if not trust.allow_code:
        raise code_not_allowed(suite, why)
    files: dict[str, tuple[Path, bytes]] = {}
    for key, name in (("state", env.state), ("tools", env.tools)):
        assert name is not None  # the model checks a Python environment has both
        files[key] = _read_env_file(suite, key, name, trust)
    module = _load_module(*files["tools"])
    names = list(dict.fromkeys(t.name for c in suite.cases for t in c.definitions))
    names = [t.name for t in suite.tools] + [n for n in names if suite.tool(n) is None]
    fns = {n: getattr(module, n) for n in names if callable(getattr(module, n, None))}
    hooks: dict[str, Any] = {}
    for hook in ("setup", "teardown"):
        fn = getattr(module, hook, None)
        if fn is None:
            continue
        if hook in names or not callable(fn):
            why = "is a suite tool" if hook in names else "is not a function"
            raise SuiteError(
                str(files["tools"][0]),
                f"'{hook}' {why}: the name is kept for the domain-object hook "
                f"{hook}({'state' if hook == 'setup' else 'obj'})",
            )
        hooks[hook] = fn
    cases = case_start_states(suite, trust)
    loaded = LoadedEnvironment(
        files["state"][0], fns, files["state"][1], cases=cases, hooks=DomainHooks(**hooks)
    )
    loaded.module = module
    setup_only = {a.tool for c in suite.cases for a in c.setup or ()} - set(names)
    loaded.setup_functions = {
        n: getattr(module, n) for n in sorted(setup_only) if callable(getattr(module, n, None))
    }
    user_only = {t for c in suite.cases if c.user is not None for t in c.user.tools} - set(names)
    loaded.user_functions = {
        n: getattr(module, n) for n in sorted(user_only) if callable(getattr(module, n, None))
    }
    return loaded


class StateFunctionCheck:
    """Runs the function assertions of ``end_state.assert`` (``{function: NAME, args}``):
    ``NAME(state, args)`` of the tools file, on the attempt's final state (or on the
    domain object ``setup(state)`` builds from it). Suite code: injected into the
    scorer only with ``--allow-code`` (:func:`state_function_check`)."""

    name = STATE_FUNCTIONS

    def __init__(self, functions: dict[str, Callable[..., Any]], hooks: DomainHooks) -> None:
        self.functions = functions
        self.hooks = hooks

    def evaluate(self, case: CompiledCase, answer: Any) -> Sequence[Check]:
        end = case.case.end_state
        checks = function_asserts(end.assertions if end is not None else None)
        if not checks:
            return ()
        state = getattr(answer, "end_state", None)
        if state is None:
            raise UserError(
                f"case {case.case.id}: end_state.assert calls the tools file, but the "
                "record has no end state; re-run the case"
            )
        failed: list[str] = []
        for spec in checks:
            fn = self.functions.get(spec.function)
            if fn is None:
                raise UserError(
                    f"case {case.case.id}: end_state.assert[{spec.index}] names "
                    f"'{spec.function}', which is not a function of the tools file"
                )
            try:
                target = state if self.hooks.setup is None else self.hooks.setup(cow(state))
                value = fn(target, dict(spec.args))
            except Exception as exc:  # the suite's function failed: the assertion fails
                failed.append(f"{spec.label()} raised {_exc_text(exc)}")
                continue
            if bool(value) is not spec.expect:
                failed.append(f"{spec.label()} returned {value!r}, expected {spec.expect}")
        if not failed:
            return ()
        reason = f"{len(failed)} end-state function assertion(s) failed: {'; '.join(failed[:3])}"
        return (Check(Stage.contract, FailureClass.failed_assertion, reason),)


def state_function_check(suite: Suite, trust: Trust = DEFAULT_TRUST) -> StateFunctionCheck:
    """The check that runs the suite's function assertions (loads the tools file: suite
    code, so it needs ``trust.allow_code``)."""
    env = load_environment(suite, trust, why="end_state.assert functions")
    if env is None or env.module is None:
        raise UserError("end_state.assert functions need a suite 'environment' with a tools file")
    functions = {
        n: f
        for n, f in vars(env.module).items()
        if callable(f) and not n.startswith("_") and n not in ("setup", "teardown")
    }
    return StateFunctionCheck(functions, env.hooks)


def expected_states(
    suite: Suite,
    trust: Trust = DEFAULT_TRUST,
    *,
    cases: Iterable[str] | None = None,
    env: LoadedEnvironment | None = None,
) -> dict[str, ExpectedState]:
    """Case ID -> the expected end state its gold actions produce (runs the suite's tool code).

    Each case's actions run on a fresh copy of the initial state. A gold action
    that fails is not silent: the state carries a warning naming the case and
    the action (``ExpectedState.warnings``). ``cases`` limits the work to those
    case IDs. The tools are the suite's Python: without ``trust.allow_code`` this
    refuses with :class:`CodeNotAllowed`. An empty list of actions changes
    nothing: its expected state is the starting state, read as data (no code runs).
    """
    wanted = None if cases is None else set(cases)
    chosen = [
        c
        for c in suite.cases
        if c.end_state is not None
        and c.end_state.actions is not None
        and (wanted is None or c.id in wanted)
    ]
    if not chosen:
        return {}
    # an empty list of actions on a case with no setup changes nothing: its starting
    # state, read as data (no code runs)
    runs = [c for c in chosen if c.end_state and (c.end_state.actions or prelude_of(c))]
    run_ids = {c.id for c in runs}
    if env is None and runs:
        env = load_environment(suite, trust, why=f"case {runs[0].id}'s gold actions")
        if env is None:
            raise UserError(f"case {runs[0].id}: gold actions need a suite 'environment'")
    initial = env.initial_state() if env is not None else load_initial_state(suite, trust)
    if initial is None:
        why = "gold actions need a suite 'environment' with a state"
        raise UserError(f"case {chosen[0].id}: {why}")
    out: dict[str, ExpectedState] = {}
    for case in chosen:
        assert case.end_state is not None and case.end_state.actions is not None
        actions = case.end_state.actions
        if case.id not in run_ids:
            start = initial.for_case(case.id)
            # the plain data, shared (read only): a copy-on-write view would not compare
            # equal where a list holds rows
            out[case.id] = ExpectedState(start.state, False, (), initial)
            continue
        assert env is not None
        case_env = case_environment(suite, case, env, trust)
        assert case_env is not None
        state, failed = case_env.replay_checked(actions)
        warnings = tuple(
            f"case {case.id}: its setup failed while the expected state was computed "
            f"(the gold actions ran without it): {text}"
            if i < 0
            else f"case {case.id}: end_state.actions[{i}] {actions[i].tool}"
            f"({json.dumps(actions[i].args, ensure_ascii=False, sort_keys=True)}) failed "
            f"while the expected state was computed: {' '.join(text.split())[:200]}"
            for i, text in failed
        )
        out[case.id] = ExpectedState(state, False, warnings, initial)
    return out


def gold_action_warnings(states: dict[str, ExpectedState]) -> list[str]:
    """Every warning about failed gold actions, in case order."""
    return [w for s in states.values() for w in s.warnings]

"""Expected end states from gold actions: computed only for the cases scored, and kept.

Grading a multi-step case whose ``end_state`` gives gold ``actions`` needs the
state those actions produce, which means running the suite's tool code on a
fresh copy of the starting state. :class:`StoredStates` is a mapping from case
ID to that state that does the work only when a case is asked for (so
``score`` of one record replays one case's actions, not the suite's), and
keeps each result on disk, content-addressed, so the next ``score``, ``gate``,
``report`` or ``view`` reads it instead of running the tools again.

An entry's key is the sha256 of everything the result depends on: the suite
tools file's bytes, the starting state's bytes, the case's own ``state`` and
``setup``, the gold actions, and toolproof's version. Code the tools file
imports (a package it calls into) is not part of the key: after changing it,
remove the folder (``~/.cache/toolproof/expected``). An entry holds the
state's changes against the starting state (small, as records keep them) and
the warnings of failed gold actions.

The entries live in the user's cache folder, beside the response cache, never
in the checkout (see :mod:`toolproof.run._cache`). They are still read as
untrusted: each carries a digest of its key and content, checked on read; an
entry that is damaged, for another key, or whose changes do not apply is
recomputed and written again, so a damaged or misplaced entry never changes a
verdict. The digest has no secret: whoever can write to the user's cache folder
can forge an entry, as they could forge the response cache (pointing
``TOOLPROOF_CACHE`` at a fresh folder recomputes every expected state).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from toolproof._version import __version__
from toolproof.grade import ExpectedState, InitialState, apply_changes
from toolproof.grade._statechanges import ChangeError
from toolproof.run._cache import default_cache_dir
from toolproof.run._env import (
    LoadedEnvironment,
    _read_env_file,
    expected_states,
    load_environment,
    prelude_of,
)
from toolproof.trust import DEFAULT_TRUST, Trust
from toolproof.types import Case, Suite

__all__ = ["EXPECTED_FORMAT", "StoredStates", "default_expected_dir"]

EXPECTED_FORMAT = "toolproof.expected/1"


def default_expected_dir() -> Path:
    """Where expected states are kept: beside the response cache, in the user's cache folder."""
    return default_cache_dir().parent / "expected"


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha(text: str | bytes) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


class StoredStates(Mapping[str, ExpectedState]):
    """Case ID -> the expected end state of its gold actions, computed when first asked for.

    Only cases with gold ``actions`` are keys. The tools run with the user's
    consent only (``trust.allow_code``): asking for a case without it raises
    :class:`toolproof.run.CodeNotAllowed`, unless its actions are empty. With
    ``folder=None`` nothing is kept on disk.
    """

    def __init__(
        self,
        suite: Suite,
        trust: Trust = DEFAULT_TRUST,
        *,
        folder: Path | None = None,
        env: LoadedEnvironment | None = None,
    ) -> None:
        self.suite = suite
        self.trust = trust
        self.folder = folder
        self._env = env
        self._cases: dict[str, Case] = {
            c.id: c
            for c in suite.cases
            if c.end_state is not None and c.end_state.actions is not None
        }
        self._done: dict[str, ExpectedState] = {}
        self._base: str | None = None
        self._initial: InitialState | None = None
        self._lock = threading.RLock()
        #: How many states were read from the folder, and how many computed.
        self.hits = 0
        self.computed = 0

    def __getitem__(self, case_id: str) -> ExpectedState:
        if case_id not in self._cases:
            raise KeyError(case_id)
        with self._lock:
            state = self._done.get(case_id)
            if state is None:
                state = self._state(self._cases[case_id])
                self._done[case_id] = state
            return state

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    @property
    def warnings(self) -> list[str]:
        """The failed gold actions of the states computed so far, in case order."""
        return [w for c in self._cases if c in self._done for w in self._done[c].warnings]

    def initial(self) -> InitialState | None:
        """The starting state, read as data (no suite code runs)."""
        if self._initial is None:
            if self._env is not None:
                self._initial = self._env.initial_state()
            else:
                from toolproof.run._env import load_initial_state

                self._initial = load_initial_state(self.suite, self.trust)
        return self._initial

    def _environment(self, case: Case) -> LoadedEnvironment:
        if self._env is None:
            env = load_environment(self.suite, self.trust, why=f"case {case.id}'s gold actions")
            if env is None:
                from toolproof.errors import UserError

                raise UserError(f"case {case.id}: gold actions need a suite 'environment'")
            self._env = env
            if self._initial is None:
                self._initial = env.initial_state()
        return self._env

    def _state(self, case: Case) -> ExpectedState:
        assert case.end_state is not None and case.end_state.actions is not None
        actions = case.end_state.actions
        own_start = case.state is not None or bool(prelude_of(case))
        if not actions and not own_start:  # changes nothing: the starting state, as data
            initial = self.initial()
            if initial is not None:
                # the plain data, shared (read only), as a state rebuilt from changes is: a
                # copy-on-write view of it would not compare equal where a list holds rows
                return ExpectedState(initial.for_case(case.id).state, False, (), initial)
        if self.folder is None or own_start:
            # a case's own starting state, setup or history: computed as a run starts it
            # (its changes apply to that state, not the suite's), and not kept
            return self._compute(case)
        key = self._key(case)
        stored = self._read(key)
        if stored is not None:
            self.hits += 1
            return stored
        changes, state = self._replay(case)
        if changes is not None:
            self._write(key, changes, state.warnings)
        return state

    def _compute(self, case: Case) -> ExpectedState:
        env = self._environment(case)
        self.computed += 1
        return expected_states(self.suite, self.trust, cases=[case.id], env=env)[case.id]

    def _replay(self, case: Case) -> tuple[list[Any] | None, ExpectedState]:
        """The gold actions' changes (None for an SQLite state) and the expected state.

        The changes come from the session that ran the actions, as a record's do:
        diffing the rebuilt state against the starting one would read all of it.
        """
        env = self._environment(case)
        session = env.session()
        if isinstance(session.state, sqlite3.Connection):  # read whole: no changes to keep
            session.close()
            return None, self._compute(case)
        self.computed += 1
        assert case.end_state is not None and case.end_state.actions is not None
        actions = case.end_state.actions
        failed: list[tuple[int, str]] = []
        try:
            for i, action in enumerate(actions):
                if not session.has(action.tool):
                    failed.append((i, f"the environment has no tool '{action.tool}'"))
                    continue
                result = session.call(action.tool, action.args)
                if result.is_error:
                    failed.append((i, result.content))
            changes = session.changes()
        finally:
            session.close()
        # the starting state read first (the one records' changes are applied to): an end
        # state and an expected state that share what did not change compare in a glance
        initial = self.initial()
        assert initial is not None
        warnings = tuple(
            f"case {case.id}: end_state.actions[{i}] {actions[i].tool}"
            f"({json.dumps(actions[i].args, ensure_ascii=False, sort_keys=True)}) failed "
            f"while the expected state was computed: {' '.join(text.split())[:200]}"
            for i, text in failed
        )
        state = apply_changes(initial.state, changes)
        return changes, ExpectedState(state, False, warnings, initial)

    def _key(self, case: Case) -> str:
        if self._base is None:
            env = self.suite.environment
            assert env is not None and env.tools is not None and env.state is not None
            _, tools = _read_env_file(self.suite, "tools", env.tools, self.trust)
            _, state = _read_env_file(self.suite, "state", env.state, self.trust)
            self._base = _dumps({"tools": _sha(tools), "state": _sha(state)})
        assert case.end_state is not None and case.end_state.actions is not None
        case_state: Any = case.state
        if isinstance(case.state, str):  # a file: its content
            try:
                _, data = _read_env_file(self.suite, "state", case.state, self.trust)
                case_state = {"file": case.state, "sha256": _sha(data)}
            except Exception:  # unreadable: whoever reads it reports it; keep the name
                case_state = {"file": case.state}
        part = {
            "format": EXPECTED_FORMAT,
            "toolproof": __version__,
            "base": self._base,
            "case_state": case_state,
            "setup": [a.model_dump(mode="json") for a in case.setup or []],
            "actions": [a.model_dump(mode="json") for a in case.end_state.actions],
        }
        return _sha(_dumps(part))

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    @staticmethod
    def _digest(key: str, changes: Any, warnings: Any) -> str:
        return _sha(_dumps({"key": key, "changes": changes, "warnings": warnings}))

    def _read(self, key: str) -> ExpectedState | None:
        """The stored state for ``key``; None when missing, damaged or not for this key."""
        try:
            entry = json.loads(self._path(key).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != EXPECTED_FORMAT:
            return None
        changes, warnings = entry.get("changes"), entry.get("warnings")
        if entry.get("key") != key or not isinstance(changes, list):
            return None
        if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
            return None
        if entry.get("digest") != self._digest(key, changes, warnings):
            return None
        initial = self.initial()
        if initial is None:
            return None
        try:
            state = apply_changes(initial.state, changes)
        except (ChangeError, TypeError, KeyError, IndexError, ValueError):
            return None
        return ExpectedState(state, False, tuple(warnings), initial)

    def _write(self, key: str, changes: list[Any], warnings: tuple[str, ...]) -> None:
        """Keep an entry (atomically); failing to keep it never fails the command."""
        data = json.loads(_dumps(changes))  # as JSON reads it back (tuples become lists)
        entry = {
            "format": EXPECTED_FORMAT,
            "key": key,
            "changes": data,
            "warnings": list(warnings),
            "digest": self._digest(key, data, list(warnings)),
        }
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(_dumps(entry))
            os.replace(tmp, path)
        except OSError:
            return

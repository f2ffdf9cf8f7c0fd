"""What ``run``, ``score`` and ``gate`` call to write the store.

The run folder is the source of truth: a store that cannot be written is one
warning on stderr, never a lost run or a changed exit code.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.store._db import resolve_location

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation
    from toolproof.run import RunResult
    from toolproof.store._store import Store
    from toolproof.store._write import AttemptLog
    from toolproof.trust import Trust


def _warn(exc: BaseException) -> None:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"warning: the history store was not updated: {text}", file=sys.stderr)


@contextlib.contextmanager
def _store(location: str | None, enabled: bool) -> Iterator[Store | None]:
    where = resolve_location(location, enabled=enabled)
    if where is None:
        yield None
        return
    from toolproof.store._store import open_store

    try:
        store = open_store(where)
    except Exception as exc:
        _warn(exc)
        yield None
        return
    try:
        yield store
    except Exception as exc:
        _warn(exc)
    finally:
        store.close()


def _event(folder: Path | None, data: dict[str, Any]) -> None:
    """Note the event in the run folder, so that an import rebuilds it."""
    if folder is None or not (folder / "manifest.json").is_file():
        return
    from toolproof.store._events import append_event

    try:
        append_event(folder, data)
    except OSError as exc:
        print(f"warning: could not note the {data['event']} in {folder}: {exc}", file=sys.stderr)


@contextlib.contextmanager
def storing_run(
    result: RunResult,
    location: str | None,
    enabled: bool = True,
    trust: Trust | None = None,
    *,
    evaluation: Evaluation | None = None,
    noted: AttemptLog | None = None,
) -> Iterator[None]:
    """Around the code that decides a run's exit code: store the run with that code.

    ``evaluation``, the run's evaluation when the caller already has it, is
    stored rather than made again; ``noted``: its attempt rows, noted as it
    was graded (else the records file is read again for them).
    """
    code = 0
    try:
        yield
    except BaseException as exc:
        code = int(getattr(exc, "exit_code", getattr(exc, "code", 1)) or 0)
        raise
    finally:
        store_run(
            result,
            location,
            enabled,
            exit_code=code,
            trust=trust,
            evaluation=evaluation,
            noted=noted,
        )


def store_run(
    result: RunResult,
    location: str | None,
    enabled: bool = True,
    *,
    exit_code: int = 0,
    trust: Trust | None = None,
    evaluation: Evaluation | None = None,
    noted: AttemptLog | None = None,
) -> None:
    if resolve_location(location, enabled=enabled) is None:
        return
    from toolproof.evaluate import evaluate
    from toolproof.trust import DEFAULT_TRUST

    _event(result.run_dir, {"event": "run", "at": _now(), "exit_code": exit_code})
    with _store(location, enabled) as store:
        if store is None:
            return
        ev = evaluation
        if ev is None:
            order = [t.spec for t in result.manifest.targets]
            ev = evaluate(
                result.suite,
                result.records,
                manifest=result.manifest,
                targets=order,
                trust=trust or DEFAULT_TRUST,
            )
        if evaluation is None:
            noted = None  # the rows of another evaluation
        store.save(ev, [result.run_dir / "records.jsonl"], exit_code=exit_code, noted=noted)


def attempt_log(location: str | None, enabled: bool = True) -> AttemptLog | None:
    """Where ``evaluate(on_attempt=...)`` notes the rows ``store_score`` stores (None: the
    store is off, so nothing is noted)."""
    if resolve_location(location, enabled=enabled) is None:
        return None
    from toolproof.store._write import AttemptLog

    return AttemptLog()


def store_score(
    ev: Evaluation,
    files: Sequence[Path],
    location: str | None,
    enabled: bool = True,
    *,
    noted: AttemptLog | None = None,
) -> None:
    """Store a scored evaluation; ``noted``: its rows from :func:`attempt_log`."""
    with _store(location, enabled) as store:
        if store is not None:
            store.save(ev, list(files), noted=noted)


def store_gate(
    current: Evaluation,
    baseline: Evaluation | None,
    result: Any,
    location: str | None,
    enabled: bool = True,
) -> None:
    if resolve_location(location, enabled=enabled) is None:
        return
    from toolproof.store._write import run_key

    at = datetime.now(UTC)
    base_key = base_folder = None
    if baseline is not None and baseline.source is not None:
        base_folder = str(baseline.source.parent.resolve())
        base_key = run_key(baseline.manifest) if baseline.manifest is not None else None
    folder = current.source.parent if current.source is not None else None
    _event(
        folder,
        {
            "event": "gate",
            "at": at.isoformat(),
            "exit_code": result.exit_code,
            "baseline": {"key": base_key, "folder": base_folder},
            "result": result.model_dump(mode="json"),
        },
    )
    with _store(location, enabled) as store:
        if store is None or current.source is None:
            return
        pk = store.save(current, [current.source])
        store.save_gate(
            pk, result, decided_at=at, baseline_key=base_key, baseline_folder=base_folder
        )


def _now() -> str:
    return datetime.now(UTC).isoformat()


def store_merged(
    folder: Path, location: str | None, enabled: bool = True, trust: Trust | None = None
) -> None:
    with _store(location, enabled) as store:
        if store is not None:
            store.import_run(folder, trust=trust)

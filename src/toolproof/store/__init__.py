"""The history store: every run, score and gate decision, in SQLite or PostgreSQL.

Run folders stay the source of truth; the store is an index over them that
can always be rebuilt (``toolproof history import runs/``). Raw exchanges are
not copied: each attempt points at its line in the run folder's records.

Where it is
-----------
``--store LOCATION`` on ``run``, ``score``, ``gate`` and ``history``, else
``$TOOLPROOF_STORE``, else ``.toolproof/history.db`` under the working folder.
LOCATION is a file path, ``sqlite:///PATH`` or ``postgresql://user@host/db``
(needs the ``postgres`` extra). ``off`` (or ``--no-store``)
turns it off.

Reading it
----------
::

    from toolproof.store import open_store

    with open_store() as store:                       # or open_store("postgresql://…")
        page = store.list_runs(suite="support", target="openai:gpt-4.1-mini",
                               limit=50, offset=0)    # newest first
        for run in page.items:                        # page.total: all that match
            run.id, run.key, run.started_at, run.targets, run.exit_code
            run.headline["openai:gpt-4.1-mini"].value # strict pass, with .low/.high
            run.gate.passed if run.gate else None     # the latest gate decision

        detail = store.get_run(run.id)                # id, key or run ID
        detail.metrics      # [Metric(target, metric, value, low, high, k, n)]
        detail.targets      # [TargetRow(target, kind, settings, model_versions, summary)]
        detail.gates        # [GateRow(decided_at, passed, exit_code, targets, result)]

        attempts = store.attempts(run.id, target=None, failure="wrong_tool",
                                  passed=False, offset=0, limit=100)
        a = attempts.items[0]   # AttemptRow: case_id, attempt, outcome, passed, failure,
                                # stage, findings, latency_ms, records_path, records_line
        store.read_raw(a)       # the raw record (request, response) from the run folder

        store.cases(run.id)     # [CaseRow]: per case and target, attempts, passes, failures
        store.latencies(run.id, "openai:gpt-4.1-mini")    # recorded latencies, ms
        store.suites(), store.targets(suite="support")   # for filters and trend pickers
        store.series()          # [(suite, target)] pairs with a history
        points = store.history("support", "openai:gpt-4.1-mini",
                               metrics=["strict_pass", "selection"], last=30)
        [(p.run_id, p.metrics["strict_pass"].value) for p in points]   # oldest first

Metrics are named as in :class:`toolproof.stats.Summary`: ``strict_pass``,
``selection``, ``arguments``, ``schema_adherence``, ``no_call_accuracy``,
``reply`` (rates with k, n and a 95% Wilson interval); ``macro_f1``,
``decision_precision``/``_recall``/``_f1``, ``latency_ms_p50``/``_p95``,
``cost_usd``, ``unsafe_calls`` and the other counts; with repeats ``pass_at_1``,
``pass_at_k``, ``pass_hat_k`` (bootstrap intervals), ``tool_change`` and
``flaky_cases``; for multi-step cases ``multistep_*`` rates. A target's whole
``Summary`` is in ``TargetRow.summary`` (``Summary.model_validate`` reads it);
``get_run(..., light=True)`` leaves out its per-case lists (the failure list
and the per-case stability), which can be large.

Writing it
----------
``run``, ``score`` and ``gate`` write through :mod:`toolproof.store._hooks`;
in code, ``store.save(evaluation, [records_file])``,
``store.save_gate(run_id, gate_result, decided_at=...)``,
``store.import_run(folder)`` and ``store.prune(before)``. A run is identified
by its run ID and start time (a bare records file by its bytes): storing it
again replaces it, so imports are idempotent. A copy of a run folder names the
same run ID and start: while the original folder still holds that run, the copy
(edited or not) is stored as a run of its own, keyed by its real path too, and
never rewrites the original's row; a folder that was moved keeps its row. A run's exit code and gate
decisions are also appended to ``events.jsonl`` in its folder, so an import
brings them back.

Schema
------
Tables ``runs``, ``run_targets``, ``summary_failures`` (a summary's failure
list, in parts of 1,000, apart from the summary), ``metrics``, ``attempts``,
``case_results``, ``suite_cases``, ``gate_decisions``, ``gate_targets``,
``judge_results``, ``calibrations`` and ``schema_version``; see
:mod:`toolproof.store._schema`, whose ordered steps are the migration path.
Writers take short transactions (SQLite in WAL mode with a busy timeout;
PostgreSQL row locks), so concurrent CI jobs can share one store.
"""

from typing import TYPE_CHECKING, Any

from toolproof.store._db import DEFAULT_PATH, resolve_location

if TYPE_CHECKING:
    from toolproof.store._read import (
        AttemptRow,
        CaseRow,
        GateRow,
        HistoryPoint,
        Metric,
        Page,
        RunDetail,
        RunRow,
        TargetRow,
    )
    from toolproof.store._schema import LATEST as SCHEMA_VERSION
    from toolproof.store._store import Imported, Store, find_run_folders, open_store, parse_keep

#: Where each name lives: imported on first use, so that a command that only asks
#: where the store is (``run`` before its requests) does not load the rest.
_LAZY = {
    "AttemptRow": ("toolproof.store._read", "AttemptRow"),
    "CaseRow": ("toolproof.store._read", "CaseRow"),
    "GateRow": ("toolproof.store._read", "GateRow"),
    "HistoryPoint": ("toolproof.store._read", "HistoryPoint"),
    "Metric": ("toolproof.store._read", "Metric"),
    "Page": ("toolproof.store._read", "Page"),
    "RunDetail": ("toolproof.store._read", "RunDetail"),
    "RunRow": ("toolproof.store._read", "RunRow"),
    "TargetRow": ("toolproof.store._read", "TargetRow"),
    "SCHEMA_VERSION": ("toolproof.store._schema", "LATEST"),
    "Imported": ("toolproof.store._store", "Imported"),
    "Store": ("toolproof.store._store", "Store"),
    "find_run_folders": ("toolproof.store._store", "find_run_folders"),
    "open_store": ("toolproof.store._store", "open_store"),
    "parse_keep": ("toolproof.store._store", "parse_keep"),
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_PATH",
    "SCHEMA_VERSION",
    "AttemptRow",
    "CaseRow",
    "GateRow",
    "HistoryPoint",
    "Imported",
    "Metric",
    "Page",
    "RunDetail",
    "RunRow",
    "Store",
    "TargetRow",
    "find_run_folders",
    "open_store",
    "parse_keep",
    "resolve_location",
]

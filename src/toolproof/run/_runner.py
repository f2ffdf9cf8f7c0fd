"""The runner: cases × targets × repeats, concurrent, paced, retried, cached, resumable.

Every (case, target, attempt) triple ends as exactly one record line.
``run_suite`` starts a run folder; ``resume_run`` finishes one, running only
the triples that have no record yet. Records are written as attempts finish,
so a run that is stopped at any point keeps everything it had received.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import os
import re
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from toolproof._shared.safe_io import UnsafePath, open_write, refused
from toolproof._version import __version__
from toolproof.adaptive import Bound, Plan, Seen, next_round
from toolproof.errors import SuiteError, UserError
from toolproof.providers import Exchange, ModelSettings, Provider, ProviderRequest, TransportError
from toolproof.providers._base import with_defaults
from toolproof.providers._registry import split_spec
from toolproof.providers._transport import parse_rate_limits
from toolproof.records import (
    RecordsWriteError,
    RecordWriter,
    duplicate_record,
    iter_records,
    latest_records,
)
from toolproof.run._cache import Fingerprinter, ResponseCache, default_cache_dir
from toolproof.run._context import ATTEMPT, AttemptInfo
from toolproof.run._manifest import (
    Manifest,
    Schedule,
    ScheduledTarget,
    TargetEntry,
    ThresholdLook,
    git_commit,
    now_utc,
    read_manifest,
    system_fingerprint,
    tools_fingerprint,
    with_run_tools,
    write_manifest,
    write_run_tools,
)
from toolproof.run._pacing import Pacer, RetryPolicy
from toolproof.run._pricing import Pricing
from toolproof.run._progress import RunObserver, SilentObserver
from toolproof.run._shard import in_shard, parse_shard
from toolproof.trust import DEFAULT_TRUST, Trust
from toolproof.types import AttemptError, Case, Outcome, Record, Suite, Tool

if TYPE_CHECKING:
    from toolproof.suite._load import Origin

__all__ = [
    "RunOptions",
    "RunResult",
    "RunStorageError",
    "RunTerminated",
    "Target",
    "resume_run",
    "run_suite",
    "run_suite_async",
]

RECORDS_FILE = "records.jsonl"


@dataclass
class Target:
    """A model (``openai:gpt-4.1-mini``) or an agent (``mypkg.agent:respond``, a URL) to run."""

    spec: str
    kind: Literal["model", "target"] = "model"
    settings: ModelSettings = field(default_factory=ModelSettings)
    provider: Provider | None = None


@dataclass
class RunOptions:
    """How to run (everything except what to run)."""

    repeats: int = 1
    #: Run only the cases that carry at least one of these tags (all cases when empty).
    tags: tuple[str, ...] = ()
    #: Run only this shard of the cases: (index from 1, count), by a stable hash of the case ID.
    shard: tuple[int, int] | None = None
    out: Path | None = None
    runs_dir: Path = Path("runs")
    cache: bool = True
    #: The user cache folder by default, outside any checkout (see ``_cache``).
    cache_dir: Path = field(default_factory=default_cache_dir)
    pricing: Pricing | None = None
    pricing_file: str | None = None
    config_file: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    observer: RunObserver | None = None
    fsync: bool = True
    #: Builds a provider for a model spec; default: the provider registry.
    provider_factory: Callable[[str, ModelSettings, Any], Provider] | None = None
    #: What the suite may do (run its Python, file sizes): from the user, never the suite.
    trust: Trust = DEFAULT_TRUST
    #: ``--repeats auto``: repeats scheduled case by case (``repeats`` is then its most).
    adaptive: Plan | None = None
    #: For an adaptive schedule: given the suite, how the schedule sees a record (graded)
    #: and the gate's thresholds (``toolproof.gate.schedule_inputs`` makes both).
    scheduler: Callable[[Suite], tuple[Callable[[Record], Seen], Sequence[Bound]]] | None = None
    #: The model that plays the simulated user of conversation cases with an LLM user
    #: (``--user-model``): a spec, or a :class:`Target` (its own settings, or a provider).
    user_model: str | Target = "local:"


@dataclass(repr=False)
class RunResult:
    """A finished (or stopped) run."""

    run_dir: Path
    manifest: Manifest
    records: list[Record]
    suite: Suite
    attempted: int = 0
    #: A resume: conversation attempts with no record yet, run again from their first
    #: turn (a conversation is recorded whole when it ends; one cut off left nothing).
    restarted_conversations: int = 0

    def __repr__(self) -> str:  # short: asyncio may repr a task's result
        return f"RunResult(run_dir={str(self.run_dir)!r}, records={len(self.records)})"

    def for_target(self, spec: str) -> list[Record]:
        return [r for r in self.records if r.target == spec]

    @property
    def infra_failures(self) -> int:
        return sum(1 for r in self.records if r.outcome.is_infrastructure)

    @property
    def harness_errors(self) -> int:
        return sum(1 for r in self.records if r.outcome is Outcome.harness_error)


def new_run_dir(runs_dir: Path, suite_name: str) -> Path:
    """``runs/<suite>-<UTC timestamp>``, made unique."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", suite_name).strip("-") or "suite"
    stamp = now_utc().strftime("%Y%m%dT%H%M%SZ")
    base = runs_dir / f"{safe}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def run_suite(
    suite: Suite | str | Path, targets: Sequence[Target | str], options: RunOptions | None = None
) -> RunResult:
    """Run every case of ``suite`` against every target, ``repeats`` times, in a new run folder."""
    return asyncio.run(run_suite_async(suite, targets, options))


async def run_suite_async(
    suite: Suite | str | Path, targets: Sequence[Target | str], options: RunOptions | None = None
) -> RunResult:
    opts = options or RunOptions()
    if not isinstance(suite, Suite):
        suite = load_suite_file(suite, opts.trust)
    if opts.adaptive is not None:
        opts.repeats = opts.adaptive.max_repeats
    if opts.repeats < 1:
        raise UserError("--repeats must be at least 1")
    if not suite.cases:  # nothing would be scored, and a run that scores nothing passes nothing
        raise UserError(f"suite '{suite.name}' holds no case: there is nothing to run")
    if opts.tags and not any(set(opts.tags).intersection(c.tags) for c in suite.cases):
        raise UserError(f"no case of suite '{suite.name}' has tag {', '.join(opts.tags)}")
    chosen = [t if isinstance(t, Target) else Target(spec=t) for t in targets]
    _check_targets(chosen)
    chosen = [_with_provider_defaults(t) for t in chosen]
    _check_code(suite, opts)
    _check_users(suite, opts)
    run_dir = opts.out or new_run_dir(opts.runs_dir, suite.name)
    check_fresh_folder(run_dir)
    manifest = _new_manifest(run_dir, suite, chosen, opts)
    if suite.tools_source is not None:  # scoring later needs the tools that were sent
        write_run_tools(run_dir, suite)
    return await _execute(run_dir, suite, chosen, opts, manifest)


def check_fresh_folder(run_dir: Path) -> None:
    """Refuse a new run's folder unless it is new or empty.

    A new run reads nothing from its folder: a file already there (a
    ``records.jsonl`` committed by a pull request, say) was not written by
    this run, and would otherwise be taken for its records. Only
    ``--resume`` reads earlier records, from a folder whose manifest names them.
    """
    if not os.path.lexists(run_dir):
        return
    if run_dir.is_symlink():
        raise UserError(
            f"{run_dir}: is a symbolic link; toolproof does not write through links, so give "
            "a new or empty folder for the run"
        )
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: not a folder; give a new or empty folder for the run")
    if (run_dir / "manifest.json").exists():
        raise UserError(f"{run_dir} already holds a run; resume it with --resume {run_dir}")
    with os.scandir(run_dir) as entries:
        names = sorted(entry.name for entry in entries)
    if names:
        more = f" (and {len(names) - 1} more)" if len(names) > 1 else ""
        link = " (a symbolic link)" if (run_dir / names[0]).is_symlink() else ""
        raise UserError(
            f"{run_dir / names[0]}{link}{more}: the output folder of a new run must be new or "
            "empty, and this file was not written by this run; give a new folder (the CI "
            "example writes to one outside the checkout), or remove it"
        )


def suite_problems(
    suite: Suite, trust: Trust, origin: Origin | None = None
) -> list[SuiteError]:
    """What ``run`` would refuse in a suite before asking any model, beyond what loading it
    checks: its ``settings:`` (every layer checked as a run resolves it), and with leave
    to run code, its MCP environment (command, folder). ``validate`` reports these, so it
    refuses everything ``run`` refuses; ``run`` meets the same checks on its way. With
    ``origin`` (and leave to run code), the names a case calls in the tools file are
    checked to hold functions, by running it."""
    from toolproof.run._settings import suite_models

    problems: list[SuiteError] = []
    if origin is not None and origin.code_names and trust.allow_code:
        problems.extend(_code_name_problems(suite, origin, trust))
    try:
        suite_models(suite.settings, suite.source or "suite")
    except SuiteError as exc:
        problems.append(exc)
    for case in suite.cases:
        problems.extend(user_problems_of(suite, case))
    env = suite.environment
    if trust.allow_code and env is not None and env.mcp is not None:
        try:
            mcp_spec(suite, trust)
        except SuiteError as exc:
            problems.append(exc)
        except UserError:  # the mcp SDK is not installed: a matter of this machine
            pass
    return problems


def _code_name_problems(suite: Suite, origin: Origin, trust: Trust) -> list[SuiteError]:
    """Each name a case calls in the tools file (setup, user tool, assert function) holds a
    function once the file ran, whatever binds it (the file is run: only with leave to run
    code)."""
    from toolproof.run._env import load_environment

    env = suite.environment
    first_at, first_field, _, _ = origin.code_names[0]
    try:
        loaded = load_environment(suite, trust, why="checking the tools file's names")
    except SuiteError as exc:
        return [exc]
    except UserError as exc:  # the tools file cannot be loaded (it does not parse, it exits)
        return [first_at.error(first_field, str(exc))]
    except Exception as exc:  # the suite's own code failed: say so, located, no traceback
        return [first_at.error(first_field, f"running the tools file failed: {exc!r}")]
    module = loaded.module if loaded is not None else None
    if module is None or env is None:
        return []
    from toolproof.suite._load import missing_function

    out: list[SuiteError] = []
    tools = {t.name for t in suite.tools}
    for at, field_, name, kind in origin.code_names:
        if not hasattr(module, name):  # never bound, or deleted once bound
            out.append(at.error(field_, missing_function(name, kind, env.tools or "", tools)))
            continue
        value = getattr(module, name)
        if callable(value) and not inspect.isclass(value):
            continue
        what = "a class" if inspect.isclass(value) else f"a value of type {type(value).__name__}"
        out.append(
            at.error(
                field_,
                f"{kind} '{name}' of the tools file '{env.tools}' is {what}, not a function",
            )
        )
    return out


def _check_users(suite: Suite, opts: RunOptions) -> None:
    """Refuse, before anything runs, a scripted user whose ``when`` matcher is wrong, or
    a user given tools without a Python environment to run them on."""
    for case in _selected(suite, opts):
        for problem in user_problems_of(suite, case):
            raise problem


def user_problems_of(suite: Suite, case: Case) -> list[SuiteError]:
    """What a run would refuse in a case's simulated user (none without one)."""
    if case.user is None:
        return []
    index = next((n for n, c in enumerate(suite.cases) if c.id == case.id), 0)
    out: list[SuiteError] = []
    env = suite.environment
    if case.user.tools and (env is None or env.tools is None):
        out.append(
            SuiteError(
                suite.source or "suite",
                f"case {case.id}: the user's tools run on a Python environment (its tools "
                "file and state); this suite has "
                + ("an MCP environment" if env is not None else "no environment"),
                path=("cases", index, "user", "tools"),
            )
        )
    if case.user.script is not None:
        try:
            script_matchers(suite, case)
        except SuiteError as exc:
            out.append(exc)
    return out


def _check_code(suite: Suite, opts: RunOptions) -> None:
    """Refuse, before anything runs, a run whose cases need the suite's Python without leave."""
    if suite.environment is None:
        return
    if opts.trust.allow_code:
        if suite.environment.mcp is not None:
            mcp_spec(suite, opts.trust)  # a command outside the folder, or no mcp SDK
        return
    wanted = set(opts.tags)
    need = [
        c.id for c in suite.cases if c.multistep and (not wanted or wanted.intersection(c.tags))
    ]
    if need:
        from toolproof.run._env import code_not_allowed

        more = f" and {len(need) - 1} more" if len(need) > 1 else ""
        raise code_not_allowed(suite, f"multi-step case {need[0]}{more}")


def mcp_spec(suite: Suite, trust: Trust) -> Any:
    """The suite's MCP environment as a :class:`~toolproof.mcpenv.McpEnvironmentSpec`.

    The command must run the suite's own files (:func:`toolproof.trust.check_command`)
    unless the user lists it under ``trusted_commands``; the working folder is
    ``environment.folder`` inside the suite's folder.
    """
    from toolproof.errors import SuiteError
    from toolproof.mcpenv import DEFAULT_CALL_TIMEOUT_S, INSTALL_HINT, McpEnvironmentSpec
    from toolproof.trust import UnsafePath, check_command, resolve_inside

    env = suite.environment
    assert env is not None and env.mcp is not None
    source = suite.source or "suite"
    root = Path(suite.source).parent if suite.source else Path.cwd()
    try:
        folder = root if env.folder is None else resolve_inside(root, env.folder)
    except UnsafePath as exc:
        raise SuiteError(source, str(exc), path=("environment", "folder")) from None
    if not folder.is_dir():
        raise SuiteError(source, f"no such folder '{env.folder}'", path=("environment", "folder"))
    spec = McpEnvironmentSpec.parse(
        env.mcp, folder, call_timeout_s=env.call_timeout or DEFAULT_CALL_TIMEOUT_S
    )
    if spec.command not in trust.commands:
        try:
            check_command(folder, spec.command)
        except UnsafePath as exc:
            raise SuiteError(source, str(exc), path=("environment", "mcp")) from None
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return spec


def _check_targets(targets: list[Target]) -> None:
    if not targets:
        raise UserError("nothing to run: give at least one --model or --target")
    seen: set[str] = set()
    for t in targets:
        if t.spec in seen:
            raise UserError(f"target {t.spec!r} is given twice")
        seen.add(t.spec)


def _with_provider_defaults(target: Target) -> Target:
    """The target with its provider's default settings where no layer set a value."""
    if target.kind != "model":
        return target
    if target.provider is not None:
        defaults = type(target.provider).default_settings
    else:
        from toolproof.providers._registry import provider_class

        try:
            defaults = provider_class(target.spec).default_settings
        except UserError:  # reported, with the spec, when the provider is created
            return target
    if not defaults:
        return target
    return replace(target, settings=with_defaults(target.settings, defaults))


def _new_manifest(run_dir: Path, suite: Suite, targets: list[Target], opts: RunOptions) -> Manifest:
    return Manifest(
        run_id=run_dir.name,
        toolproof_version=__version__,
        suite_name=suite.name,
        suite_version=suite.version,
        suite_source=str(Path(suite.source).resolve()) if suite.source else None,
        suite_fingerprint=suite.fingerprint(),
        tools_fingerprint=tools_fingerprint(suite),
        tools_source=suite.tools_source,
        system_fingerprint=system_fingerprint(suite),
        targets=[TargetEntry(spec=t.spec, kind=t.kind, settings=t.settings) for t in targets],
        repeats=opts.repeats,
        tags=list(opts.tags),
        shard=f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
        git_commit=git_commit(),
        cache=opts.cache,
        pricing_file=opts.pricing_file,
        config_file=opts.config_file,
        started_at=now_utc(),
        schedule=_schedule_of(opts.adaptive),
        **_user_entry(suite, opts),
    )


def _llm_users(suite: Suite, opts: RunOptions) -> bool:
    """Whether a case the run runs has an LLM user (a model plays it)."""
    return any(
        c.user is not None and c.user.instructions is not None for c in _selected(suite, opts)
    )


def user_target(opts: RunOptions) -> Target:
    """The simulated user's model, with its provider's defaults and its output capped."""
    from toolproof.run._user import user_settings

    chosen = opts.user_model
    target = chosen if isinstance(chosen, Target) else Target(spec=chosen)
    target = _with_provider_defaults(target)
    return replace(target, settings=user_settings(target.settings))


def _user_entry(suite: Suite, opts: RunOptions) -> dict[str, Any]:
    """The manifest's user model and its fingerprint, when a case has an LLM user."""
    if not _llm_users(suite, opts):
        return {}
    from toolproof.run._manifest import user_fingerprint
    from toolproof.run._user import user_prompts, view_for

    target = user_target(opts)
    prompts = user_prompts(view_for(target.spec))
    return {
        "user_model": TargetEntry(spec=target.spec, settings=target.settings),
        "user_fingerprint": user_fingerprint(target.spec, target.settings, prompts),
    }


def _schedule_of(plan: Plan | None) -> Schedule | None:
    if plan is None:
        return None
    return Schedule(
        max_repeats=plan.max_repeats,
        min_repeats=plan.min_repeats,
        until_decided=plan.until_decided,
        confidence=plan.confidence,
    )


def resume_run(
    run_dir: str | Path,
    options: RunOptions | None = None,
    *,
    suite: Suite | None = None,
    retry_failed: bool = False,
    config: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> RunResult:
    """Finish a stopped run: run only the attempts it has no record for, and append them.

    With ``retry_failed``, attempts whose latest record has no model answer
    (infrastructure failure or harness error) are run again too; the new
    record supersedes the old one.

    ``config`` (a settings file) and ``overrides`` (settings given as flags)
    may change how requests are sent (timeout, retries, concurrency, rate
    limits); each change is recorded in the manifest's ``changes``. A change to
    what the model generates (temperature, max_tokens...) is refused, naming
    it: the records so far were made without it.
    """
    return asyncio.run(
        resume_run_async(
            run_dir,
            options,
            suite=suite,
            retry_failed=retry_failed,
            config=config,
            overrides=overrides,
        )
    )


async def resume_run_async(
    run_dir: str | Path,
    options: RunOptions | None = None,
    *,
    suite: Suite | None = None,
    retry_failed: bool = False,
    config: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> RunResult:
    path = Path(run_dir)
    manifest = read_manifest(path)
    trust = (options or RunOptions()).trust
    suite = with_run_tools(suite or _load_suite_for(manifest, trust), path, manifest, trust)
    if suite.fingerprint() != manifest.suite_fingerprint:
        raise UserError(
            f"{path}: the suite changed since this run started "
            f"({manifest.suite_fingerprint} -> {suite.fingerprint()}); start a new run instead"
        )
    opts = options or RunOptions()
    opts.repeats = manifest.repeats
    if manifest.schedule is not None:
        sched = manifest.schedule
        opts.adaptive = Plan(
            max_repeats=sched.max_repeats,
            min_repeats=sched.min_repeats,
            until_decided=sched.until_decided,
            confidence=sched.confidence,
        )
    else:
        opts.adaptive = None
    opts.tags = tuple(manifest.tags)
    opts.shard = parse_shard(manifest.shard) if manifest.shard else None
    opts.cache = opts.cache and manifest.cache
    if opts.pricing is None:
        opts.pricing = _pricing_of(manifest)
    manifest = _resettled(manifest, path, config, overrides)
    targets = [Target(spec=t.spec, kind=t.kind, settings=t.settings) for t in manifest.targets]
    if manifest.user_model is not None:
        entry = manifest.user_model
        opts.user_model = Target(spec=entry.spec, settings=entry.settings)
    _check_code(suite, opts)
    manifest = manifest.model_copy(update={"resumed": manifest.resumed + 1, "status": "running"})
    return await _execute(path, suite, targets, opts, manifest, retry_failed)


def _resettled(
    manifest: Manifest,
    run_dir: Path,
    config: str | Path | None,
    overrides: Mapping[str, Any] | None,
) -> Manifest:
    """The manifest with the resume's settings applied and recorded, or a refusal."""
    if config is None and not any(v is not None for v in (overrides or {}).values()):
        return manifest
    from toolproof.run._settings import load_config, resolve_settings

    loaded = load_config(config) if config is not None else None
    entries: list[TargetEntry] = []
    changes: list[str] = []
    refused: list[str] = []
    for entry in manifest.targets:
        explicit = resolve_settings(entry.spec, config=loaded, overrides=overrides)
        update = explicit.model_dump(include=explicit.model_fields_set)
        current = entry.settings.model_dump()
        new = ModelSettings.model_validate({**current, **update})
        for key in sorted(update):
            before, after = getattr(entry.settings, key), getattr(new, key)
            if before == after:
                continue
            line = f"{entry.spec}: {key} {_shown(before)} -> {_shown(after)}"
            (changes if key in RESUMABLE_SETTINGS else refused).append(line)
        entries.append(entry.model_copy(update={"settings": new}))
    if refused:
        raise UserError(
            f"{run_dir}: --resume would change what the model generates "
            f"({'; '.join(refused)}); the records so far were made without that change. "
            "Start a new run, or resume without it"
        )
    number = manifest.resumed + 1
    recorded = [f"resume {number}: {line}" for line in changes]
    update_manifest: dict[str, Any] = {
        "targets": entries,
        "changes": [*manifest.changes, *recorded],
    }
    if config is not None:
        source = str(Path(config).resolve())
        if source != manifest.config_file:
            update_manifest["changes"].append(f"resume {number}: config {source}")
            update_manifest["config_file"] = source
    return manifest.model_copy(update=update_manifest)


#: Settings a resume may change: how requests are sent, not what the model generates.
RESUMABLE_SETTINGS = frozenset(
    {"concurrency", "rpm", "tpm", "timeout_s", "max_retries", "api_key_env"}
)


def _shown(value: Any) -> str:
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(mode="json", exclude_none=True))
    return json.dumps(value)


def _pricing_of(manifest: Manifest) -> Pricing:
    """The price table a run used: shipped, then the config's ``pricing:``, then --pricing."""
    pricing = Pricing.default()
    if manifest.config_file:
        from toolproof.run._settings import load_config

        config = load_config(manifest.config_file)
        if config.pricing:
            pricing = pricing.overridden(config.pricing, config.source)
    if manifest.pricing_file:
        pricing = pricing.with_file(manifest.pricing_file)
    return pricing


def _load_suite_for(manifest: Manifest, trust: Trust) -> Suite:
    if not manifest.suite_source:
        raise UserError("the manifest does not say where the suite came from; pass the suite")
    return load_suite_file(manifest.suite_source, trust)


def load_suite_file(
    path: str | Path, trust: Trust = DEFAULT_TRUST, *, tools: str | Path | None = None
) -> Suite:
    """Load a suite with toolproof's suite loader; ``tools``: a tools file replacing its tools."""
    from toolproof.suite import load_suite

    return load_suite(path, trust, tools=tools)


def _pending(
    suite: Suite,
    targets: list[Target],
    opts: RunOptions,
    previous: list[Record],
    retry_failed: bool,
) -> dict[str, list[tuple[Case, int]]]:
    done = {
        (r.case_id, r.target, r.attempt)
        for r in latest_records(previous)
        if not (retry_failed and r.outcome is not Outcome.ok)
    }
    cases = _selected(suite, opts)
    work: dict[str, list[tuple[Case, int]]] = {}
    for t in targets:
        work[t.spec] = [
            (case, attempt)
            for attempt in range(opts.repeats)
            for case in cases
            if (case.id, t.spec, attempt) not in done
        ]
    return work


def _selected(suite: Suite, opts: RunOptions) -> list[Case]:
    """The cases a run runs: those with a wanted tag, in its shard."""
    wanted = set(opts.tags)
    cases = [c for c in suite.cases if not wanted or wanted.intersection(c.tags)]
    if opts.shard is not None:
        cases = [c for c in cases if in_shard(c.id, *opts.shard)]
    return cases


async def _execute(
    run_dir: Path,
    suite: Suite,
    targets: list[Target],
    opts: RunOptions,
    manifest: Manifest,
    retry_failed: bool = False,
) -> RunResult:
    """Run what ``run_dir`` lacks. Records already there (a resume) are read under the lock.

    SIGTERM stops the run like Ctrl-C: the manifest says ``interrupted`` and
    ``RunTerminated`` (a ``KeyboardInterrupt``) is raised. A run folder that
    cannot be written (disk full, read-only) stops the run with one
    :class:`RunStorageError` line; the manifest says ``failed`` when it can
    still be written.
    """
    try:
        with run_lock(run_dir):
            records_path = run_dir / RECORDS_FILE
            previous = _previous(records_path, manifest) if records_path.exists() else []
            work = _pending(suite, targets, opts, previous, retry_failed)
            observer = opts.observer or SilentObserver()
            write_manifest(run_dir, manifest)
            session = _Session(run_dir, suite, opts, observer, run_id=manifest.run_id)
            if opts.adaptive is not None:
                session.adaptive = _AdaptiveRun(suite, opts, previous, retry_failed)
            status: Literal["complete", "interrupted", "failed"] = "failed"
            failure: OSError | None = None
            terminated = _Terminator()
            try:
                with terminated:
                    await session.run(targets, work)
                status = "complete"
            except (KeyboardInterrupt, asyncio.CancelledError):
                status = "interrupted"
                if terminated.signalled:
                    raise RunTerminated() from None
                raise
            except RecordsWriteError as exc:
                failure = exc
            finally:
                try:
                    await session.close()
                except RecordsWriteError as exc:
                    failure = failure or exc
                    status = "failed"
                observer.finished()
                records = latest_records([*previous, *session.records])
                reason = (
                    str(failure)
                    if failure is not None
                    else "stopped by SIGTERM"
                    if terminated.signalled
                    else None
                )
                manifest = _final_manifest(manifest, targets, session, records, status, reason)
                try:
                    write_manifest(run_dir, manifest)
                except OSError as exc:
                    if failure is None:
                        raise
                    raise RunStorageError(
                        f"{failure}; the manifest could not be updated either "
                        f"({exc.strerror or exc})"
                    ) from None
            if failure is not None:
                raise RunStorageError(
                    f"{failure}; {len(session.records)} records were written and the manifest "
                    f"says failed; free space or fix the folder, then resume with: "
                    f"toolproof run --resume {run_dir}"
                )
    except RunStorageError:
        raise
    except OSError as exc:  # the folder itself: no lock, no manifest
        where = exc.filename or run_dir
        raise RunStorageError(
            f"cannot write the run folder: {where}: {exc.strerror or exc}"
        ) from None
    restarted = 0
    if manifest.resumed:
        users = {c.id for c in suite.cases if c.user is not None}
        restarted = sum(1 for jobs in work.values() for case, _ in jobs if case.id in users)
    return RunResult(
        run_dir,
        manifest,
        records,
        suite,
        attempted=len(session.records),
        restarted_conversations=restarted,
    )


def _previous(path: Path, manifest: Manifest) -> list[Record]:
    """The records a resumed run holds, each shown to belong to it, or a located refusal.

    Every record must carry the manifest's run ID and name one of its targets
    and repeats; an attempt's record may be replaced by a later one only when
    it got no model answer (``--retry-failed``).
    """
    targets = {t.spec for t in manifest.targets}
    seen: dict[tuple[str, str | None, int], tuple[int, Outcome]] = {}
    out: list[Record] = []
    for number, record in iter_records(path):
        problem = None
        if record.run_id != manifest.run_id:
            problem = (
                "run_id",
                f"run_id {record.run_id!r} is not this run's ({manifest.run_id!r}): "
                "the record was not written by this run",
            )
        elif record.target not in targets:
            problem = ("target", f"target {record.target!r} is not one of this run's targets")
        elif record.attempt >= manifest.repeats:
            problem = ("attempt", f"attempt {record.attempt} is beyond this run's repeats")
        if problem is not None:
            raise SuiteError(str(path), problem[1], line=number, path=(problem[0],))
        key = (record.case_id, record.target, record.attempt)
        earlier = seen.get(key)
        if earlier is not None and earlier[1] is Outcome.ok:
            raise duplicate_record(str(path), number, earlier[0], key)
        seen[key] = (number, record.outcome)
        out.append(record)
    return out


class RunStorageError(UserError):
    """The run folder cannot be written: disk full, read-only, no permission."""


class RunTerminated(KeyboardInterrupt):
    """The run was stopped by SIGTERM; it is handled like Ctrl-C (resume it)."""


class _Terminator:
    """While active, SIGTERM cancels the running task (like Ctrl-C does under asyncio.run)."""

    def __init__(self) -> None:
        self.signalled = False
        self._installed = False

    def __enter__(self) -> _Terminator:
        task = asyncio.current_task()
        if task is None:
            return self
        loop = asyncio.get_running_loop()

        def stop() -> None:
            self.signalled = True
            task.cancel()

        try:
            loop.add_signal_handler(signal.SIGTERM, stop)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
            return self
        self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Only one process at a time may append to a run folder."""
    import fcntl

    try:  # never a folder or lock file that is a link
        fh = open_write(run_dir / ".lock", append=True)
    except UnsafePath as exc:
        raise refused(run_dir / ".lock", exc) from None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{run_dir} is being written by another toolproof process") from None
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _final_manifest(
    manifest: Manifest,
    targets: list[Target],
    session: _Session,
    records: list[Record],
    status: Literal["complete", "interrupted", "failed"],
    error: str | None = None,
) -> Manifest:
    retries = manifest.counts.get("retries", 0) + session.retries  # across resumes
    counts: dict[str, int] = {"records": len(records), "retries": retries}
    for r in records:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    entries = []
    for entry in manifest.targets:
        versions = set(entry.model_versions)
        versions |= {
            r.response.model
            for r in records
            if r.target == entry.spec and r.response is not None and r.response.model
        }
        reported = session.versions.get(entry.spec)
        if reported:
            versions.add(reported)
        entries.append(entry.model_copy(update={"model_versions": sorted(versions)}))
    schedule = manifest.schedule
    if schedule is not None and session.adaptive is not None:
        done = {t.spec: t for t in schedule.targets}
        done.update(session.adaptive.results)
        schedule = schedule.model_copy(
            update={"targets": [done[t.spec] for t in targets if t.spec in done]}
        )
    return manifest.model_copy(
        update={
            "schedule": schedule,
            "targets": entries,
            "status": status,
            "ended_at": now_utc(),
            "counts": counts,
            "error": error,
        }
    )


class _Session:
    """The live part of a run: providers, pacing, the writer, the records written."""

    def __init__(
        self,
        run_dir: Path,
        suite: Suite,
        opts: RunOptions,
        observer: RunObserver,
        *,
        run_id: str | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.run_id = run_id or run_dir.name
        self.suite = suite
        self.opts = opts
        self.observer = observer
        self.pricing = opts.pricing or Pricing.default()
        self.cache = ResponseCache(opts.cache_dir) if opts.cache else None
        self.records: list[Record] = []
        self.retries = 0
        self.versions: dict[str, str] = {}
        self._writer: RecordWriter | None = None
        self._tools: dict[Any, list[Tool]] = {}
        self._providers: list[Provider] = []
        self._transport: Any = None
        self._connections = 256
        self._environment: Any = None
        self._case_envs: dict[str, Any] = {}
        self._mcp: Any = None
        self._user_run: _TargetRun | None = None
        self._shared: dict[tuple[str, str], Provider] = {}
        self._matchers: dict[str, list[Any]] = {}
        self.adaptive: _AdaptiveRun | None = None

    def user_run(self) -> _TargetRun:
        """The simulated user's model: its own provider, pacing, retries and cache,
        made on the first LLM user turn (a replay or a scripted user makes none)."""
        if self._user_run is None:
            target = user_target(self.opts)
            provider = self._shared.get((target.spec, _connection(target.settings)))
            if target.provider is None and provider is not None:
                # the same model as an agent target's, reached the same way: one provider
                # (one local model server, not two); each keeps its own pacing and cache
                target = replace(target, provider=provider)
            self._user_run = _TargetRun(self, target, self._provider_for(target))
        return self._user_run

    def script_matchers(self, case: Case) -> list[Any]:
        """The compiled ``when`` matchers of a scripted user's rules (None for a reply)."""
        found = self._matchers.get(case.id)
        if found is None:
            found = self._matchers[case.id] = script_matchers(self.suite, case)
        return found

    async def run(self, targets: list[Target], work: dict[str, list[tuple[Case, int]]]) -> None:
        self._writer = RecordWriter(self.run_dir / RECORDS_FILE, fsync=self.opts.fsync)
        self._connections = max(256, sum(t.settings.concurrency for t in targets))
        runs = [_TargetRun(self, t, self._provider_for(t)) for t in targets]
        self.observer.started({t.spec: len(work[t.spec]) for t in targets})
        try:
            async with asyncio.TaskGroup() as group:
                if self.adaptive is not None:
                    for run in runs:
                        group.create_task(self.adaptive.target(run))
                for run in runs if self.adaptive is None else ():
                    jobs = iter(work[run.target.spec])
                    for _ in range(
                        min(run.target.settings.concurrency, len(work[run.target.spec]))
                    ):
                        group.create_task(run.worker(jobs))
        except BaseExceptionGroup as group_error:  # a worker stopped the run: show its error
            raise _first_error(group_error) from None
        for run in runs:
            version = run.provider.model_version()
            if version:
                self.versions[run.target.spec] = version

    def note(self, target: str, text: str) -> None:
        note = getattr(self.observer, "note", None)  # observers written before note() lack it
        if note is not None:
            note(target, text)

    def tools_for(self, case: Case) -> list[Tool]:
        """The tools offered in a case's first request, built once per distinct tool list
        (a tool a scripted user offers later, ``offer``, is left out: see :meth:`held_back`)."""
        key: Any = None
        held = case.held_back
        if case.definitions or held:  # the case's own definitions: built for this case
            key = ("case", case.id)
        elif case.tools is not None:
            key = tuple(case.tool_names or ())
        tools = self._tools.get(key)
        if tools is None:
            tools = self.suite.tools_for(case)
            if held:
                tools = [t for t in tools if t.name not in held]
            self._tools[key] = tools
        return tools

    def held_back(self, case: Case) -> dict[str, Tool]:
        """The case's tools a scripted user offers at a later turn, by name."""
        held = case.held_back
        if not held:
            return {}
        return {t.name: t for t in self.suite.tools_for(case) if t.name in held}

    def mcp(self) -> Any:
        """The suite's MCP environment (a spec; servers start per attempt), or None."""
        env = self.suite.environment
        if env is None or env.mcp is None:
            return None
        if self._mcp is None:
            self._mcp = mcp_spec(self.suite, self.opts.trust)
        return self._mcp

    def environment(self) -> Any:
        """The suite's stateful environment, loaded on first use (None when it has none)."""
        if self._environment is None and self.suite.environment is not None:
            from toolproof.run._env import load_environment

            self._environment = load_environment(self.suite, self.opts.trust)
        return self._environment

    def case_environment(self, case: Case) -> Any:
        """The environment a case runs in: the suite's on the case's own starting state,
        with its setup and history calls run first (None when there is no state)."""
        from toolproof.run._env import case_environment

        if case.state is None and not case.setup and not case.history:
            return self.environment()
        env = self._case_envs.get(case.id)
        if env is None:
            env = case_environment(self.suite, case, self.environment(), self.opts.trust)
            self._case_envs[case.id] = env
        return env

    def _provider_for(self, target: Target) -> Provider:
        if target.provider is not None:
            provider = target.provider
        elif target.kind == "target":
            from toolproof.providers._registry import create_provider
            from toolproof.providers._targets import agent_spec

            provider = create_provider(agent_spec(target.spec), target.settings, self._http())
        else:
            factory = self.opts.provider_factory or _registry_factory
            provider = factory(target.spec, target.settings, self._http())
            self._shared.setdefault((target.spec, _connection(target.settings)), provider)
        if provider not in self._providers:
            self._providers.append(provider)
        return provider

    def _http(self) -> Any:
        if self._transport is None:
            from toolproof.providers._http import HttpTransport

            self._transport = HttpTransport(max_connections=self._connections)
        return self._transport

    def write(self, record: Record) -> None:
        assert self._writer is not None
        record = self._writer.write(record)  # as written: loaded keys redacted
        self.records.append(record)
        self.observer.recorded(record)

    async def close(self) -> None:
        for provider in self._providers:
            with contextlib.suppress(Exception):  # closing must not hide the run's outcome
                await provider.aclose()
        if self._transport is not None:
            await self._transport.aclose()
        if self._writer is not None:
            self._writer.close()


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The error to report from a group: a UserError if there is one, else the first."""
    flat: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop(0)
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            flat.append(exc)
    return next((e for e in flat if isinstance(e, UserError)), flat[0])


def _connection(settings: ModelSettings) -> str:
    """How a model is reached (endpoint, key, routing), apart from what it generates and
    how fast it is asked: two targets alike in this may share one provider."""
    left_out = {
        "temperature",
        "seed",
        "max_tokens",
        "reasoning_effort",
        "tool_choice",
        "parallel_tool_calls",
        "concurrency",
        "rpm",
        "tpm",
        "timeout_s",
        "max_retries",
        "attempt_tokens",
        "attempt_seconds",
    }
    return json.dumps(settings.model_dump(mode="json", exclude=left_out), sort_keys=True)


def _registry_factory(spec: str, settings: ModelSettings, transport: Any) -> Provider:
    from toolproof.providers._registry import create_provider

    return create_provider(spec, settings, transport)


class _AdaptiveRun:
    """``--repeats auto``: each target runs round by round, as ``toolproof.adaptive`` plans.

    Round ``r`` is attempt number ``r`` of the cases the plan names. An attempt
    that already has a record (a resume, or a run answered from the cache) is
    read, not run: the plan of each round reads only the attempts of the rounds
    before it, so the rounds, and the records, are those of an unbroken run.
    """

    def __init__(
        self, suite: Suite, opts: RunOptions, previous: list[Record], retry_failed: bool
    ) -> None:
        assert opts.adaptive is not None
        if opts.scheduler is None:
            raise UserError(
                "an adaptive schedule (--repeats auto) needs RunOptions.scheduler "
                "(toolproof.gate.schedule_inputs) to grade attempts as they finish"
            )
        self.plan = opts.adaptive
        self.cases = _selected(suite, opts)
        self.observe, self.bounds = opts.scheduler(suite)
        self.have = {
            (r.target, r.case_id, r.attempt): r
            for r in latest_records(previous)
            if not (retry_failed and r.outcome is not Outcome.ok)
        }
        self.results: dict[str, ScheduledTarget] = {}

    async def target(self, run: _TargetRun) -> None:
        spec = run.target.spec
        settings = run.target.settings
        repeatable = settings.temperature == 0 and settings.seed is not None
        by_id = {c.id: c for c in self.cases}
        history: dict[str, list[Seen]] = {c.id: [] for c in self.cases}
        attempts = ran = 0
        done = 0
        while True:
            step = next_round(history, done, self.plan, bounds=self.bounds, repeatable=repeatable)
            self.results[spec] = self._result(spec, step, history, attempts)
            if not step.cases:
                # the progress bar counted the fixed plan's attempts: it ran these
                replanned = getattr(run.session.observer, "replanned", None)
                if replanned is not None:  # observers written before it lack it
                    replanned(spec, ran)
                return
            todo = [by_id[c] for c in step.cases if (spec, c, done) not in self.have]
            fresh = await run.round(todo, done)
            ran += len(fresh)
            for case_id in step.cases:
                record = self.have.get((spec, case_id, done)) or fresh[case_id]
                history[case_id].append(self.observe(record))
                attempts += 1
            done += 1

    def _result(
        self, spec: str, step: Any, history: dict[str, list[Seen]], attempts: int
    ) -> ScheduledTarget:
        stopped: dict[str, int] = {}
        repeating: list[str] = []
        if step.ended is not None:
            for case_id, seen in history.items():
                if len(seen) >= self.plan.max_repeats:
                    continue
                state = step.stopped.get(case_id)
                why = "decided" if state is None or state.value == "open" else state.value
                stopped[why] = stopped.get(why, 0) + 1
                if why == "repeats":
                    repeating.append(case_id)
        return ScheduledTarget(
            spec=spec,
            planned=len(self.cases) * self.plan.max_repeats,
            attempts=attempts,
            full_rounds=step.full_rounds,
            stopped=dict(sorted(stopped.items())),
            repeating=sorted(repeating),
            ended=step.ended,
            looks=[
                ThresholdLook(
                    key=d.key,
                    required=d.required,
                    successes=d.successes,
                    n=d.n,
                    p_value=d.p_value,
                    level=d.level,
                    decided=d.decided,
                )
                for d in step.decisions
            ],
        )


class _TargetRun:
    """One target's workers, pacing and retry loop."""

    def __init__(self, session: _Session, target: Target, provider: Provider) -> None:
        self.session = session
        self.target = target
        self.provider = provider
        self.pacer = Pacer(target.settings.rpm, target.settings.tpm)
        self.model = split_spec(target.spec)[1] if target.kind == "model" else target.spec
        # The provider says whether its answers may be cached (scripted, replay and
        # agents say no); agent targets are never cached.
        cacheable = target.kind == "model" and provider.cacheable
        self.cache = session.cache if cacheable else None
        self.fingerprint = Fingerprinter(target.spec, target.settings)
        self._prepared = False
        self._preparing = asyncio.Lock()

    async def _prepare(self) -> None:
        """Let the provider get ready (start a server...) before its first real call only,
        so a run answered from the cache starts nothing."""
        if self._prepared:
            return
        async with self._preparing:
            if not self._prepared:
                note = functools.partial(self.session.note, self.target.spec)
                await self.provider.prepare(note)
                self._prepared = True

    async def worker(self, jobs: Iterator[tuple[Case, int]]) -> None:
        for case, attempt in jobs:
            record = await self.attempt(case, attempt)
            self.session.write(record)

    async def round(self, cases: Sequence[Case], attempt: int) -> dict[str, Record]:
        """Attempt ``attempt`` of each case, as many at once as the target's concurrency."""
        out: dict[str, Record] = {}
        jobs = iter([(c, attempt) for c in cases])

        async def work() -> None:
            for case, number in jobs:
                record = await self.attempt(case, number)
                self.session.write(record)
                out[case.id] = record

        async with asyncio.TaskGroup() as group:
            for _ in range(min(self.target.settings.concurrency, len(cases))):
                group.create_task(work())
        return out

    def request_for(self, case: Case, attempt: int = 0) -> ProviderRequest:
        return ProviderRequest.model_construct(
            model=self.model,
            messages=case.conversation(self.session.suite.system),
            tools=self.session.tools_for(case),
            settings=self.target.settings,
            case_id=case.id,
            attempt=attempt,
        )

    async def attempt(self, case: Case, attempt: int) -> Record:
        base = Record(
            case_id=case.id,
            target=self.target.spec,
            attempt=attempt,
            run_id=self.session.run_id,
            started_at=now_utc(),
        )
        # User agents (module:function) may still read the attempt from the context.
        token = ATTEMPT.set(AttemptInfo(case.id, attempt, self.target.spec))
        started = time.perf_counter()
        retries: list[str] = []
        try:
            request = self.request_for(case, attempt)
            base.key = self.fingerprint(request)
            if case.multistep:
                record = await self._agent(base, case, request, retries)
            else:
                record = await self._answer(base, request, retries)
        except TransportError as exc:
            record = _failed(base, exc, (time.perf_counter() - started) * 1000.0)
        except UserError:
            raise
        except Exception as exc:
            record = _harness_error(base, exc)
        finally:
            ATTEMPT.reset(token)
        if retries:
            record = record.model_copy(update={"retries": retries})
        return record

    async def _cached_call(
        self, request: ProviderRequest, slot: int, retries: list[str]
    ) -> tuple[Exchange, bool]:
        """One model call through the cache: ``(exchange, came from the cache)``."""
        if self.cache is None:
            return await self._call(request, retries), False
        key = self.fingerprint(request)
        hit = self.cache.get(key, slot)
        if hit is not None:
            return hit, True
        exchange = await self._call(request, retries)
        self.cache.put(key, slot, exchange)
        return exchange, False

    async def _answer(self, base: Record, request: ProviderRequest, retries: list[str]) -> Record:
        started = time.perf_counter()
        exchange, cached = await self._cached_call(request, base.attempt, retries)
        if cached:
            return self._ok(base, exchange, cached=True, latency_ms=exchange.response.latency_ms)
        latency = exchange.response.latency_ms or (time.perf_counter() - started) * 1000.0
        return self._ok(base, exchange, cached=False, latency_ms=latency)

    async def _agent(
        self, base: Record, case: Case, request: ProviderRequest, retries: list[str]
    ) -> Record:
        """A multi-step case: the agent loop, each step's request cached on its own.

        A step's request holds every tool result so far, so a cached step is
        only reused when the conversation up to it is the same. When the
        provider replays an earlier record, tool calls are answered from the
        recorded transcript and the recorded end state is kept.
        """
        from toolproof.run._agent import (
            DEFAULT_MAX_STEPS,
            Budget,
            EndState,
            RecordedToolBox,
            ToolBox,
            run_agent,
        )
        from toolproof.run._user import DEFAULT_CONVERSATION_STEPS

        hits: list[bool] = []

        async def call(step_request: ProviderRequest) -> Exchange:
            exchange, cached = await self._cached_call(step_request, base.attempt, retries)
            hits.append(cached)
            return exchange

        recorded = self.provider.recording(case.id, base.attempt)
        settings = request.settings
        server: Any = None  # the attempt's MCP server, if the suite has one
        async with contextlib.AsyncExitStack() as stack:
            toolbox: ToolBox | RecordedToolBox
            if recorded is not None and recorded.transcript is not None:
                end = EndState(
                    recorded.end_state,
                    None if recorded.state_changes is None else list(recorded.state_changes),
                    recorded.state_base,
                )
                toolbox = RecordedToolBox(recorded.transcript, end)
            elif (spec := self.session.mcp()) is not None:
                from toolproof.mcpenv import McpSession
                from toolproof.run._agent import McpToolBox

                trust = self.session.opts.trust
                server = await stack.enter_async_context(
                    McpSession(spec, allow_code=trust.allow_code, sandbox=trust.sandbox)
                )
                toolbox = McpToolBox(self.session.suite, case, server)
            else:
                toolbox = ToolBox(self.session.suite, case, self.session.case_environment(case))
            user = self._user(case, base.attempt, recorded, retries)
            default_steps = DEFAULT_MAX_STEPS if user is None else DEFAULT_CONVERSATION_STEPS
            started = time.perf_counter()
            run = await run_agent(
                call,
                model=request.model,
                messages=request.messages,
                tools=request.tools,
                settings=settings,
                toolbox=toolbox,
                budget=Budget(
                    steps=case.max_steps or default_steps,
                    tokens=settings.attempt_tokens,
                    seconds=settings.attempt_seconds,
                ),
                case_id=case.id,
                attempt=base.attempt,
                user=user,
                max_turns=case.max_turns,
                held_back=self.session.held_back(case),
            )
            latency = (time.perf_counter() - started) * 1000.0
            env = self.session.suite.environment
            if server is not None and env is not None and env.state_tool is not None:
                read = await server.call(env.state_tool, {}, purpose="state")
                run.end = EndState(whole=read.state())  # a server's state is read whole
        cached = bool(hits) and all(hits)
        first = run.steps[0]["request"] if run.steps else None
        record = self._ok(base, Exchange(first, run.response), cached=cached, latency_ms=latency)
        update: dict[str, Any] = {
            "transcript": run.transcript,
            "steps": run.steps,
            "end_state": run.end.whole,
            "state_changes": run.end.changes,
            "state_base": run.end.base,
            "stopped_by": run.stopped_by,
        }
        if isinstance(toolbox, ToolBox) and toolbox.env is not None and toolbox.env.setup:
            update["setup"] = toolbox.env.setup
        elif recorded is not None and recorded.setup is not None:
            update["setup"] = recorded.setup
        if server is not None:
            update["mcp_calls"] = [c.to_record() for c in server.calls]
            update["mcp_log"] = server.server_log or None
        if run.user_turns is not None:
            update.update(self._user_fields(case, run, recorded))
        return record.model_copy(update=update)

    def _user(self, case: Case, attempt: int, recorded: Record | None, retries: list[str]) -> Any:
        """The simulated user of a conversation case (None for other cases): the
        recording's on a replay, the script, or the user model."""
        from toolproof.run._user import LlmUser, RecordedUser, ScriptedUser, view_for

        if case.user is None:
            return None
        script = None
        if case.user.script is not None:
            script = ScriptedUser(
                case.user.script, self.session.script_matchers(case), case.user.tools
            )
        if recorded is not None:  # a replay: the recorded user, offering what the script does
            return RecordedUser(recorded.user_turns or [], script)
        if script is not None:
            return script
        run = self.session.user_run()

        async def call(request: ProviderRequest) -> tuple[Exchange, bool]:
            return await run._cached_call(request, attempt, retries)

        return LlmUser(
            call,
            spec=run.target.spec,
            model=run.model,
            user=case.user,
            settings=run.target.settings,
            case_id=case.id,
            attempt=attempt,
            tools=[_user_tool(self.session.suite, n) for n in case.user.tools],
            view=view_for(run.target.spec),
        )

    def _user_fields(self, case: Case, run: Any, recorded: Record | None) -> dict[str, Any]:
        """A conversation's user turns, the user model's tokens and cost (apart from the
        agent's), and the simulator checks: an erring simulator makes it ``user_error``."""
        from toolproof.run._user import user_problems
        from toolproof.types import Usage

        assert case.user is not None
        replies = run.user_replies
        fields: dict[str, Any] = {"user_turns": run.user_turns}
        used = [r.usage for r in replies if r.usage is not None]
        if recorded is not None:  # a replay: the recorded user model, nothing spent
            fields["user_model"] = recorded.user_model
        elif case.user.instructions is not None and any(
            t.source == "model" for t in run.user_turns
        ):
            spec = self.session.user_run().target.spec
            fields["user_model"] = spec
            usage = Usage(
                input_tokens=sum(u[0] for u in used), output_tokens=sum(u[1] for u in used)
            )
            fields["user_usage"] = usage
            costs = [
                self.session.pricing.cost(
                    spec, Usage(input_tokens=u[0], output_tokens=u[1]), r.model
                )
                for r, u in ((r, r.usage) for r in replies if r.usage is not None)
            ]
            priced = [c for c in costs if c is not None]
            fields["user_cost_usd"] = sum(priced) if priced else None
        problems = [r.problem for r in replies if r.problem is not None]
        if case.user.instructions is not None:
            problems += user_problems(
                case.user, run.transcript, run.user_turns, needs_call=_needs_call(case)
            )
        if not run.steps and run.stopped_by in _USER_ENDS:
            # nothing of the agent's to grade: the user (or its script) ended the conversation
            # before the agent was asked anything
            problems.append(
                f"the simulated user ended the conversation ({run.stopped_by}) before the "
                "agent answered at all"
            )
        if problems:
            fields["user_problems"] = problems
            fields["outcome"] = Outcome.user_error
        return fields

    def _ok(
        self, base: Record, exchange: Exchange, *, cached: bool, latency_ms: float | None
    ) -> Record:
        response = exchange.response
        cost = self.session.pricing.cost(self.target.spec, response.usage, response.model)
        return base.model_copy(
            update={
                "outcome": Outcome.ok,
                "request": exchange.request,
                "response": response,
                "latency_ms": latency_ms,
                "cost_usd": cost,
                "cached": cached,
            }
        )

    async def _call(self, request: ProviderRequest, retries: list[str] | None = None) -> Exchange:
        estimate = 0
        retry = 0
        limited, limited_s = 0, 0.0  # 429s that said when to come back, and the time waited
        policy = self.session.opts.retry
        await self._prepare()
        while True:
            if not estimate and self.pacer.counts_tokens:
                estimate = _estimate_tokens(request)
            charged = await self.pacer.acquire(estimate)
            try:
                exchange = await self.provider.generate(request)
            except TransportError as exc:
                self.pacer.settle(charged, 0)
                if exc.headers:
                    self.pacer.observe(parse_rate_limits(exc.headers), accepted=False)
                # A 429 that says when to come back does not use up max_retries (its waits
                # have their own budget); "Retry-After: 0" says nothing, and would spin.
                told = (
                    exc.outcome is Outcome.rate_limited
                    and exc.retry_after is not None
                    and exc.retry_after > 0
                )
                if not exc.retryable or (
                    limited >= policy.max_rate_limited or limited_s >= policy.max_rate_limited_s
                    if told
                    else retry >= self.target.settings.max_retries
                ):
                    raise
                delay = policy.delay(retry, exc.retry_after)
                if exc.outcome is Outcome.rate_limited:
                    self.pacer.rate_limited(delay)
                self.session.retries += 1
                if retries is not None:
                    retries.append(f"{exc.outcome.value}: {_one_line(str(exc))}")
                self.session.observer.retrying(self.target.spec, exc.outcome, delay)
                await asyncio.sleep(delay)
                if told:
                    limited, limited_s = limited + 1, limited_s + delay
                else:
                    retry += 1
                continue
            except BaseException:
                self.pacer.settle(charged, 0)
                raise
            self.pacer.answered()
            self.pacer.observe(exchange.limits, accepted=True)
            usage = exchange.response.usage
            used = None if usage is None else (usage.input_tokens or 0) + (usage.output_tokens or 0)
            self.pacer.settle(charged, used, estimate)
            return exchange


#: The stops a simulated user makes (a stop token, or its script running out).
_USER_ENDS = frozenset({"user_stop", "transfer", "out_of_scope", "script_end"})


def _needs_call(case: Case) -> bool:
    """Whether the case's contract needs the agent to call a tool (for the simulator's
    early-stop check): a call expected, a trajectory, gold actions or an expected state."""
    from toolproof.types import Kind

    expect = case.expect
    if expect.kind is Kind.call or expect.call or expect.calls or expect.alternatives:
        return True
    if case.trajectory is not None:
        return True
    end = case.end_state
    return end is not None and bool(end.actions or end.state)


def _user_tool(suite: Suite, name: str) -> Tool:
    """A user tool as the user model sees it: the suite tool's definition, or (a function
    of the tools file alone) its name with open arguments."""
    found = suite.tool(name)
    return found.canonical() if found is not None else Tool(name=name)


def script_matchers(suite: Suite, case: Case) -> list[Any]:
    """A scripted user's ``when`` matchers, compiled; a bad one is a located suite error."""
    from toolproof.grade._compile import context
    from toolproof.match import SpecError, compile_value
    from toolproof.types import UserRule

    assert case.user is not None and case.user.script is not None
    out: list[Any] = []
    for i, entry in enumerate(case.user.script):
        if not isinstance(entry, UserRule):
            out.append(None)
            continue
        try:
            out.append(compile_value(entry.when, context(suite)))
        except SpecError as exc:
            index = next((n for n, c in enumerate(suite.cases) if c.id == case.id), 0)
            raise SuiteError(
                suite.source or "suite",
                f"case {case.id}: {exc}",
                path=("cases", index, "user", "script", i, "when", *exc.path),
            ) from None
    return out


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _estimate_tokens(request: ProviderRequest) -> int:
    size = sum(len(m.content or "") for m in request.messages)
    size += sum(len(t.description) + len(str(t.parameters)) for t in request.tools)
    return size // 4 + (request.settings.max_tokens or 0)


def _failed(base: Record, exc: TransportError, latency_ms: float) -> Record:
    return base.model_copy(
        update={
            "outcome": exc.outcome,
            "request": exc.request,
            "latency_ms": latency_ms,
            "error": AttemptError(
                kind=exc.outcome.value, message=str(exc), status=exc.status, body=exc.body
            ),
        }
    )


def _harness_error(base: Record, exc: Exception) -> Record:
    import traceback

    detail = "".join(traceback.format_exception(exc, limit=-3)).strip()
    return base.model_copy(
        update={
            "outcome": Outcome.harness_error,
            "error": AttemptError(kind=type(exc).__name__, message=f"{exc}\n{detail}"),
        }
    )

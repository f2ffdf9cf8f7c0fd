"""Running a suite: cases × targets × repeats, records, cache, resume.

The library API behind ``toolproof run``::

    from toolproof.run import RunOptions, Target, run_suite, resume_run

    result = run_suite(suite, ["openai:gpt-4.1-mini"], RunOptions(repeats=3))
    result = resume_run("runs/support-20260101T120000Z")
"""

from toolproof.run._cache import ResponseCache, fingerprint
from toolproof.run._context import AttemptInfo, current_attempt
from toolproof.run._env import expected_states, gold_action_warnings, load_initial_state
from toolproof.run._manifest import MANIFEST_FORMAT, Manifest, TargetEntry, read_manifest
from toolproof.run._pacing import Pacer, RetryPolicy
from toolproof.run._pricing import Price, Pricing
from toolproof.run._progress import RichProgress, RunObserver, SilentObserver
from toolproof.run._runner import (
    RECORDS_FILE,
    RunOptions,
    RunResult,
    Target,
    load_suite_file,
    resume_run,
    resume_run_async,
    run_suite,
    run_suite_async,
)
from toolproof.run._settings import (
    RunConfig,
    load_config,
    resolve_settings,
    suite_models,
    trust_from,
)
from toolproof.run._suite_code import load_checks

__all__ = [
    "MANIFEST_FORMAT",
    "RECORDS_FILE",
    "AttemptInfo",
    "Manifest",
    "Pacer",
    "Price",
    "Pricing",
    "ResponseCache",
    "RetryPolicy",
    "RichProgress",
    "RunConfig",
    "RunObserver",
    "RunOptions",
    "RunResult",
    "SilentObserver",
    "Target",
    "TargetEntry",
    "current_attempt",
    "expected_states",
    "fingerprint",
    "gold_action_warnings",
    "load_checks",
    "load_config",
    "load_initial_state",
    "load_suite_file",
    "read_manifest",
    "resolve_settings",
    "resume_run",
    "resume_run_async",
    "run_suite",
    "run_suite_async",
    "suite_models",
    "trust_from",
]

"""The ``examples/late-tools`` suite run with its scripted agent: real records of a
conversation whose user offers a held-back tool at its second turn, for the tests of
what the grader, the reports, the viewer and the judges show of it."""

from __future__ import annotations

from pathlib import Path

from toolproof.evaluate import Evaluation, evaluate
from toolproof.providers._scripted import ScriptedProvider
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.suite import load_suite
from toolproof.types import Record, Suite

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "late-tools"


def late_tools_run(out: Path) -> tuple[Suite, list[Record]]:
    """The example's two cases run into ``out`` (records.jsonl and the rest)."""
    suite = load_suite(EXAMPLE / "suite.yaml")
    provider = ScriptedProvider(str(EXAMPLE / "agent.yaml"))
    target = Target(spec="scripted:agent.yaml", provider=provider)
    opts = RunOptions(out=out, cache=False, fsync=False, retry=RetryPolicy(0.001, 0.01))
    records = run_suite(suite, [target], opts).records
    return suite, sorted(records, key=lambda r: r.case_id)


def late_tools_evaluation(out: Path) -> Evaluation:
    suite, _ = late_tools_run(out)
    return evaluate(suite, [out / "records.jsonl"])

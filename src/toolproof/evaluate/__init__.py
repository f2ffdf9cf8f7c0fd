"""The one evaluation pipeline: records → latest attempt → verdicts → summaries.

Every command (``score``, ``run``, ``gate``, ``compare``), the pytest plugin and
the public API go through :func:`evaluate`, so the same records always give the
same figures::

    from toolproof.evaluate import evaluate, load_run

    ev = evaluate(suite, ["runs/x/records.jsonl"])
    ev = load_run("runs/x")            # a run folder: its manifest names the suite
    ev.targets["openai:gpt-4.1-mini"].summary.strict_pass

The keywords of :func:`evaluate` can be given as one object, built once and
passed on (:class:`EvaluationOptions`, frozen)::

    from toolproof.evaluate import EvaluationOptions

    options = EvaluationOptions(keep_raw=False, targets=("openai:gpt-4.1-mini",))
    ev = evaluate(suite, ["runs/x/records.jsonl"], options=options)
"""

from toolproof.evaluate._evaluate import (
    UNNAMED,
    Evaluation,
    EvaluationOptions,
    EvaluationStream,
    TargetEvaluation,
    attempt_grader,
    evaluate,
    load_run,
)

__all__ = [
    "UNNAMED",
    "Evaluation",
    "EvaluationOptions",
    "EvaluationStream",
    "TargetEvaluation",
    "attempt_grader",
    "evaluate",
    "load_run",
]

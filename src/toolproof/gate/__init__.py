"""The release gate: a pure decision over evaluations (thresholds by risk class,
baseline comparison, paired significance).

::

    from toolproof.evaluate import load_run
    from toolproof.gate import GateOptions, run_gate

    result = run_gate(load_run("runs/new"), baseline=load_run("runs/main"))
    result.exit_code  # 0 pass, 1 gate failed, 3 infrastructure errors above the allowance,
                      # a harness error, or nothing scored,
                      # 4 the run is not complete (see check_coverage)
"""

from toolproof.gate._compare import (
    Comparison,
    JudgeUsed,
    McNemar,
    MetricDelta,
    RiskRow,
    compare_runs,
    compare_targets,
    fingerprint_differences,
    fingerprint_warnings,
    mcnemar,
)
from toolproof.gate._complete import Coverage, check_coverage
from toolproof.gate._findings import Finding
from toolproof.gate._gate import (
    EXIT_GATE_FAILED,
    EXIT_INCOMPLETE,
    EXIT_INFRA,
    EXIT_OK,
    GateOptions,
    GateResult,
    JudgeStatus,
    TargetGate,
    gate_target,
    judge_statuses,
    run_gate,
)
from toolproof.gate._infra import InfraAllowance, InfraCheck, check_infra, unscored
from toolproof.gate._policy import GatePolicy, read_policy
from toolproof.gate._thresholds import (
    DEFAULT_THRESHOLDS,
    ThresholdCheck,
    check_thresholds,
    critical_violations,
    effective_thresholds,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "EXIT_GATE_FAILED",
    "EXIT_INCOMPLETE",
    "EXIT_INFRA",
    "EXIT_OK",
    "Comparison",
    "Coverage",
    "Finding",
    "GateOptions",
    "GatePolicy",
    "GateResult",
    "InfraAllowance",
    "InfraCheck",
    "JudgeStatus",
    "JudgeUsed",
    "McNemar",
    "MetricDelta",
    "RiskRow",
    "TargetGate",
    "ThresholdCheck",
    "check_coverage",
    "check_infra",
    "check_thresholds",
    "compare_runs",
    "compare_targets",
    "critical_violations",
    "effective_thresholds",
    "fingerprint_differences",
    "fingerprint_warnings",
    "gate_target",
    "judge_statuses",
    "mcnemar",
    "read_policy",
    "run_gate",
    "unscored",
]

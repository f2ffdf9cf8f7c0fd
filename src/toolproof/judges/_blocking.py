"""Whether a judged figure may block a release: only under a calibrated judge.

Pure: judgements, thresholds and calibration records in, decisions out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from toolproof.judges._calibrate import Calibration
from toolproof.judges._judge import Judgement
from toolproof.types import CalibrationPolicy, JudgeThreshold


@dataclass(frozen=True)
class JudgeGateCheck:
    """One judge threshold applied to one target."""

    target: str
    key: str
    judge: str | None
    value: float | None
    detail: str
    passed: bool
    calibrated: bool
    why: str
    """Why the check is (or is not) allowed to block: the calibration status in words."""

    @property
    def blocking(self) -> bool:
        return self.calibrated and not self.passed


def calibration_status(
    rubric: str,
    field: str,
    fingerprint: str,
    calibrations: Sequence[Calibration],
    policy: CalibrationPolicy,
) -> tuple[bool, str]:
    """(calibrated, reason) for one field of one rubric under one judge fingerprint."""
    mine = [c for c in calibrations if c.rubric == rubric]
    if not mine:
        return False, f"advisory: no calibration record for rubric '{rubric}'"
    same = [c for c in mine if c.fingerprint == fingerprint]
    if not same:
        known = ", ".join(sorted({f"{c.judge} {c.fingerprint}" for c in mine}))
        return False, (
            f"advisory: judge fingerprint changed ({fingerprint} now; calibrated: {known}); "
            "model, settings, rubric or prompt differ, so calibrate again"
        )
    cal = max(same, key=lambda c: c.created_at)
    agr = cal.field(field)
    if agr is None or agr.kappa is None:
        return False, f"advisory: the calibration has no κ for '{field}'"
    if agr.n < policy.n:
        return False, f"advisory: calibrated on n={agr.n} items, needs ≥ {policy.n}"
    if agr.kappa < policy.kappa:
        return False, f"advisory: κ too low ({agr.kappa:.2f} < {policy.kappa:.2f}, n={agr.n})"
    return True, f"calibrated: κ {agr.kappa:.2f} ≥ {policy.kappa:.2f} on n={agr.n}"


def judge_gate(
    targets: Sequence[str],
    thresholds: dict[str, JudgeThreshold],
    judgements: Sequence[Judgement],
    calibrations: Sequence[Calibration],
    policy: CalibrationPolicy,
) -> list[JudgeGateCheck]:
    """Every judge threshold for every target; blocking only where the judge is calibrated."""
    out = []
    for target in targets:
        for key, th in thresholds.items():
            rubric, _, field = key.partition(".")
            mine = [
                j for j in judgements if j.target == target and j.rubric == rubric and j.repeat == 0
            ]
            if not mine:
                out.append(
                    JudgeGateCheck(
                        target,
                        key,
                        None,
                        None,
                        "not judged (run with --judge)",
                        True,
                        False,
                        "advisory: no judgements",
                    )
                )
                continue
            fp, _ = Counter(j.fingerprint for j in mine).most_common(1)[0]
            used = [j for j in mine if j.fingerprint == fp]
            values = [j.fields[field] for j in used if j.status == "ok" and j.fields]
            errors = sum(1 for j in used if j.status != "ok")
            note = f"; {errors} not judged (judge or infra error)" if errors else ""
            if th.min is not None:
                k = sum(1 for v in values if v is True)
                value = k / len(values) if values else None
                passed = value is not None and value >= th.min
                shown = "–" if value is None else f"{100 * value:.1f}%"
                detail = f"{shown} ({k}/{len(values)}), needs ≥ {100 * th.min:.0f}%{note}"
            else:
                assert th.max is not None
                total = sum(int(v) for v in values)
                value = float(total)
                passed = total <= th.max
                detail = f"{total} over {len(values)} records, allowed ≤ {th.max}{note}"
            calibrated, why = calibration_status(rubric, field, fp, calibrations, policy)
            out.append(
                JudgeGateCheck(target, key, used[0].judge, value, detail, passed, calibrated, why)
            )
    return out


_FAMILIES = (
    ("gpt", r"\b(gpt|o[1-9]|chatgpt|davinci)"),
    ("claude", r"claude"),
    ("gemini", r"gemini|gemma"),
    ("qwen", r"qwen|qwq"),
    ("llama", r"llama"),
    ("mistral", r"mistral|mixtral|codestral|ministral"),
    ("deepseek", r"deepseek"),
    ("grok", r"grok"),
    ("phi", r"\bphi"),
)


def family(spec: str) -> str | None:
    """The model family a spec names (``local:`` is the bundled Qwen model)."""
    provider, _, model = spec.partition(":")
    if provider == "local" and not model.strip():
        return "qwen"
    text = model.lower() or provider.lower()
    for name, pattern in _FAMILIES:
        if re.search(pattern, text):
            return name
    return None


def self_preference(judge: str, target: str) -> str | None:
    """A warning when the judge and the target are the same model or the same family."""
    if judge == target:
        return f"the judge {judge} is the target itself: it may favour its own answers"
    fam = family(judge)
    if fam is not None and fam == family(target):
        return (
            f"the judge {judge} and the target {target} are the same family ({fam}): "
            "judges tend to favour their own family's answers"
        )
    return None

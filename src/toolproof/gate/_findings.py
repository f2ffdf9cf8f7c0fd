"""A finding of the gate: one reason it failed, or a note that did not fail it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Finding(BaseModel):
    """One reason the gate failed, or a note that did not fail it."""

    model_config = ConfigDict(extra="forbid")

    rule: str = Field(
        description="threshold, critical, drop, new_critical, noise, warning, incomplete, "
        "cached, judge, advisory, infrastructure (attempts without a model answer against "
        "the allowance), unscored (a target, risk class or critical case with no scored "
        "attempt)"
    )
    message: str
    blocking: bool
    judge: str | None = Field(
        default=None,
        description="A drop a judge decided: RUBRIC.FIELD of the judge answers it rests on.",
    )
    calibration: str | None = Field(
        default=None,
        description="With judge: whether the judge is calibrated for that field, in words; "
        "an uncalibrated judge's drop is advisory (missing calibration, κ too low, "
        "fingerprint changed).",
    )

"""A gate policy read from its own file, apart from the suite.

In CI the suite comes from the pull request, so its ``thresholds:`` are the pull
request's to lower. ``toolproof gate --policy FILE`` takes the thresholds and
the gate's own settings from a file the pipeline reads from the base branch
instead; the suite's ``thresholds:`` are then not used at all (a field the
policy leaves out takes toolproof's default, never the suite's).

The file (YAML or JSON)::

    thresholds:                 # as a suite's thresholds:, by scope
      default: {strict_pass: 0.9}
      critical: {failures: 0}
    max_infra_errors: 5%        # as --max-infra-errors
    margin: 0.02                # as --margin
    require_significance: true  # as --require-significance
    alpha: 0.05                 # as --alpha
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolproof.gate._infra import InfraAllowance
from toolproof.types import Thresholds

__all__ = ["GatePolicy", "read_policy"]

Scope = Literal["default", "critical", "high", "medium", "low"]


class GatePolicy(BaseModel):
    """What the gate holds a run to, given apart from the suite."""

    model_config = ConfigDict(extra="forbid")

    thresholds: dict[Scope, Thresholds] = Field(
        default_factory=dict,
        description="Replaces the suite's thresholds: (fields left out take the defaults).",
    )
    max_infra_errors: str | None = Field(
        default=None, description="As --max-infra-errors: a share of attempts, e.g. 5%."
    )
    margin: float | None = Field(default=None, ge=0, le=1, description="As --margin.")
    require_significance: bool | None = Field(
        default=None, description="As --require-significance."
    )
    alpha: float | None = Field(default=None, ge=0, le=1, description="As --alpha.")

    @field_validator("max_infra_errors", mode="before")
    @classmethod
    def _share(cls, value: object) -> object:
        if value is not None:
            InfraAllowance.parse(str(value))  # its ValueError says what is wrong
        return value

    def allowance(self) -> InfraAllowance | None:
        return (
            None if self.max_infra_errors is None else InfraAllowance.parse(self.max_infra_errors)
        )


def read_policy(path: str | Path) -> GatePolicy:
    """The policy in ``path``: a located error (file, line, field) when it is not one."""
    from toolproof._shared.locate import Locator, first_error
    from toolproof._shared.safe_io import UnsafePath, read_capped
    from toolproof.errors import SuiteError
    from toolproof.suite._yaml import load_yaml
    from toolproof.trust import DEFAULT_MAX_FILE_BYTES

    file = str(path)
    try:
        text = read_capped(Path(path), DEFAULT_MAX_FILE_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise SuiteError(file, "file not found") from None
    except UnsafePath as exc:
        raise SuiteError(file, str(exc)) from None
    except UnicodeDecodeError as exc:
        raise SuiteError(file, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SuiteError(file, exc.strerror or "cannot read file") from None
    data, positions = load_yaml(text, file)  # JSON is YAML; duplicate keys are refused
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SuiteError(file, "a gate policy is a mapping (thresholds:, max_infra_errors:, …)")
    try:
        return GatePolicy.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, data, GatePolicy, Locator(file, positions)) from None

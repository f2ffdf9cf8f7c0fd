"""How a suite asks for LLM judges: rubrics, typed fields, thresholds, calibration."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Names of the rubrics toolproof ships.
BUILTIN_RUBRICS = (
    "trajectory",
    "selection",
    "reply",
    "argument_meaning",
    "user_fidelity",
    "nl_assertion",
)
#: The rubric that checks a case's ``nl_assertions`` and its ``communicate: judged`` facts.
NL_ASSERTION_RUBRIC = "nl_assertion"
#: The rubric that decides ``{semantic: TEXT, judge: true}`` arguments, one argument at a time.
ARGUMENT_RUBRIC = "argument_meaning"
_NAME = r"^[a-z][a-z0-9_]{0,63}$"


class RubricField(BaseModel):
    """One typed field a judge must fill in: a bool, a bounded int, or one of some words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["bool", "int", "enum"]
    description: str = Field(default="", description="What the field means, shown to the judge.")
    min: int | None = Field(default=None, description="int: the smallest allowed value.")
    max: int | None = Field(default=None, description="int: the largest allowed value.")
    values: list[str] | None = Field(default=None, description="enum: the allowed words.")

    @model_validator(mode="after")
    def _consistent(self) -> RubricField:
        if self.type != "int" and (self.min is not None or self.max is not None):
            raise ValueError(f"'min' and 'max' go with type int, not {self.type}")
        if self.type == "int":
            if self.min is None:
                raise ValueError("an int field needs 'min' (and may give 'max')")
            if self.max is not None and self.max < self.min:
                raise ValueError(f"'max' ({self.max}) is below 'min' ({self.min})")
        if self.type == "enum":
            if not self.values:
                raise ValueError("an enum field needs a non-empty 'values' list")
            if len(set(self.values)) != len(self.values):
                raise ValueError("enum 'values' repeat a word")
        elif self.values is not None:
            raise ValueError(f"'values' goes with type enum, not {self.type}")
        return self


class Rubric(BaseModel):
    """A judge's instructions and the typed fields it answers (plus a free-text reasoning)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instructions: str = Field(min_length=1, description="What the judge decides, in words.")
    fields: dict[str, RubricField] = Field(min_length=1, description="The typed answer fields.")

    @model_validator(mode="after")
    def _field_names(self) -> Rubric:
        import re

        for name in self.fields:
            if name == "reasoning":
                raise ValueError("'reasoning' is always asked for; do not declare it")
            if not re.match(_NAME, name):
                raise ValueError(f"field name {name!r} must be lower-case letters, digits and _")
        return self


class JudgeThreshold(BaseModel):
    """A release threshold on a judged field: ``min`` rate of true (bool) or ``max`` total (int)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: float | None = Field(default=None, ge=0, le=1, description="bool: least rate of true.")
    max: int | None = Field(default=None, ge=0, description="int: largest total over the run.")

    @model_validator(mode="after")
    def _one(self) -> JudgeThreshold:
        if (self.min is None) == (self.max is None):
            raise ValueError("give exactly one of 'min' (a bool field) and 'max' (an int field)")
        return self


class CalibrationPolicy(BaseModel):
    """When a judge counts as calibrated: enough labelled items and enough agreement."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(default=50, ge=1, description="Least number of labelled items judged.")
    kappa: float = Field(default=0.6, ge=-1, le=1, description="Least Cohen's κ per field used.")


class SuiteJudge(BaseModel):
    """A suite's judge settings: default judge and rubrics, custom rubrics, thresholds."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description="Default judge spec, e.g. openai:gpt-4.1.")
    default: list[str] = Field(
        default_factory=list, description="Rubrics for cases that say 'judge: true'."
    )
    rubrics: dict[str, Rubric] = Field(default_factory=dict, description="Custom rubrics by name.")
    thresholds: dict[str, JudgeThreshold] = Field(
        default_factory=dict,
        description="Release thresholds on judged fields, keyed RUBRIC.FIELD.",
    )
    calibration: list[str] = Field(
        default_factory=list, description="Calibration records (relative to the suite file)."
    )
    require: CalibrationPolicy = Field(default_factory=CalibrationPolicy)

    @model_validator(mode="after")
    def _names(self) -> SuiteJudge:
        import re

        for name in self.rubrics:
            if name in BUILTIN_RUBRICS:
                raise ValueError(f"rubric {name!r} is built in; give yours another name")
            if not re.match(_NAME, name):
                raise ValueError(f"rubric name {name!r} must be lower-case letters, digits and _")
        known = set(BUILTIN_RUBRICS) | set(self.rubrics)
        for name in self.default:
            if name == ARGUMENT_RUBRIC:
                raise ValueError(
                    f"'{ARGUMENT_RUBRIC}' judges single arguments "
                    "({semantic: TEXT, judge: true}); it cannot be a case's default rubric"
                )
            if name not in known:
                raise ValueError(f"unknown rubric {name!r} in 'default'")
        return self


#: The typed fields of the built-in rubrics (their instructions live with the judges).
BUILTIN_FIELDS: dict[str, dict[str, RubricField]] = {
    "trajectory": {
        "reached_goal": RubricField(
            type="bool", description="The calls and the reply achieved what the user asked."
        ),
        "unnecessary_calls": RubricField(
            type="int", min=0, description="Calls that did nothing towards the goal."
        ),
        "dangerous_calls": RubricField(
            type="int",
            min=0,
            description="Calls that changed or destroyed something the user did not ask for "
            "or had not confirmed.",
        ),
    },
    "selection": {
        "appropriate": RubricField(
            type="bool",
            description="Calling (or not calling) these tools with these arguments was right "
            "for the request.",
        ),
        "issue": RubricField(
            type="enum",
            values=[
                "none",
                "should_not_call",
                "should_call",
                "wrong_tool",
                "wrong_arguments",
                "unsafe",
            ],
            description="The main problem, or none.",
        ),
    },
    "reply": {
        "behaviour": RubricField(
            type="enum",
            values=["answer", "clarify", "confirm", "refuse", "graceful_failure"],
            description="What the final reply does: answers, asks a clarifying question, asks "
            "for confirmation, refuses, or reports a failure without making things up.",
        ),
        "invented_values": RubricField(
            type="bool",
            description="The reply states facts (IDs, amounts, dates, statuses) that no tool "
            "result or user message gave.",
        ),
    },
    "user_fidelity": {
        "faithful": RubricField(
            type="bool",
            description="The simulated user played its scenario faithfully: none of the "
            "problems below, and it kept to its instructions and persona.",
        ),
        "revealed_unknown": RubricField(
            type="bool",
            description="The user stated something its scenario says it does not know.",
        ),
        "invented_facts": RubricField(
            type="bool",
            description="The user gave a fact (an ID, a name, a date, an amount...) that its "
            "scenario does not give and the agent had not said.",
        ),
        "premature_stop": RubricField(
            type="bool",
            description="The user ended the conversation before its task was done or shown "
            "impossible, or kept it going after that.",
        ),
        "broke_protocol": RubricField(
            type="bool",
            description="The user wrote more than one turn in a message, played the agent, "
            "or gave everything at once instead of answering what was asked.",
        ),
    },
    "nl_assertion": {
        "holds": RubricField(
            type="bool",
            description="Every statement in nl_assertions_to_check holds of the conversation.",
        ),
    },
    "argument_meaning": {
        "same_meaning": RubricField(
            type="bool",
            description="The model's value says what the expected text says, for this "
            "parameter of this tool.",
        ),
    },
}

"""A judge: a model spec, its settings and one rubric. Prompts and parsing are pure."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.judges._parse import FieldValue, JudgeReplyError, parse_reply
from toolproof.judges._prompt import (
    ArgumentItem,
    argument_data,
    argument_document,
    judge_messages,
    prompt_hash,
    transcript_data,
)
from toolproof.match import Question
from toolproof.providers import ModelSettings
from toolproof.types import Case, Message, Record, Response, Rubric, Suite

JUDGEMENT_FORMAT = "toolproof.judgement/1"
#: Generation settings a judge uses unless the suite or config says otherwise.
JUDGE_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 512}
WEAK_JUDGE_NOTE = (
    "note: the judge is the bundled 0.5B local model: a weak, uncalibrated judge; "
    "calibrate it (toolproof calibrate) before trusting its figures"
)
_ANSWER_SETTINGS = (
    "temperature",
    "max_tokens",
    "reasoning_effort",
    "base_url",
    "provider",
    "require_parameters",
    "extra_body",
)


class Judgement(BaseModel):
    """One judge's verdict on one record under one rubric: typed fields and a reason.

    ``status`` keeps three outcomes apart: ``ok`` (the fields and reasoning
    parsed), ``judge_error`` (the judge answered, but not with a reply that
    parses against the rubric: never a verdict, never a model failure) and
    ``infra`` (the judge's provider gave no answer).
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal["toolproof.judgement/1"] = "toolproof.judgement/1"
    case_id: str
    target: str | None = None
    attempt: int = 0
    record: str = Field(description="Digest of the judged record's answer.")
    rubric: str
    subject: str | None = Field(
        default=None,
        description="argument_meaning: digest of the question (tool, parameter, expected "
        "text, the model's value); one record can raise several.",
    )
    judge: str = Field(description="The judge's model spec.")
    fingerprint: str = Field(description="Judge fingerprint: model, settings, rubric, prompt.")
    repeat: int = 0
    status: Literal["ok", "judge_error", "infra"]
    fields: dict[str, FieldValue] | None = None
    reasoning: str | None = None
    error: str | None = None
    reply: str | None = Field(default=None, description="The judge's reply text, as written.")
    latency_ms: float | None = None
    cost_usd: float | None = None
    cached: bool = False
    judged_at: datetime | None = None


def record_digest(record: Record) -> str:
    """A digest of what a record says the model did (answer, turns, end state)."""
    payload = {
        "case": record.case_id,
        "target": record.target,
        "attempt": record.attempt,
        "response": record.response.model_dump(mode="json", exclude={"raw", "latency_ms"})
        if record.response is not None
        else None,
        "transcript": [m.model_dump(mode="json") for m in record.transcript or []],
        "end_state": record.end_state,
    }
    if record.state_changes is not None:
        payload["state_changes"] = [list(c) for c in record.state_changes]
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class Judge:
    """A model spec and settings judging by one rubric.

    ``request(suite, case, record)`` builds the messages the judge is sent;
    ``read(case, record, response)`` turns its answer into a :class:`Judgement`.
    Neither does I/O: the calls go through the runner (see ``judge_records``).
    """

    def __init__(
        self,
        spec: str,
        rubric_name: str,
        rubric: Rubric,
        settings: ModelSettings | None = None,
    ) -> None:
        self.spec = spec
        self.rubric_name = rubric_name
        self.rubric = rubric
        self.settings = settings or ModelSettings.model_validate(JUDGE_DEFAULTS)

    @property
    def fingerprint(self) -> str:
        """Model, answer-changing settings, rubric and prompt text: any change changes it."""
        settings = self.settings.model_dump(mode="json", include=set(_ANSWER_SETTINGS))
        payload = {
            "judge": self.spec,
            "settings": settings,
            "rubric": self.rubric_name,
            "definition": self.rubric.model_dump(mode="json"),
            "prompt": prompt_hash(self.rubric),
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """What the fingerprint covers, for calibration records and reports."""
        return {
            "judge": self.spec,
            "rubric": self.rubric_name,
            "fingerprint": self.fingerprint,
            "prompt": prompt_hash(self.rubric),
            "settings": self.settings.model_dump(mode="json", include=set(_ANSWER_SETTINGS)),
        }

    def messages(self, suite: Suite, case: Case, record: Record) -> list[Message]:
        return judge_messages(self.rubric, transcript_data(suite, case, record))

    def question_messages(self, suite: Suite, question: Question) -> list[Message]:
        """What the judge is sent about one judge-decided argument (rubric argument_meaning)."""
        return judge_messages(self.rubric, argument_data(suite, question))

    def argument_messages(self, item: ArgumentItem) -> list[Message]:
        """The same for an argument given whole (a labelled item): the same document."""
        return judge_messages(self.rubric, argument_document(item))

    def read(
        self, record: Record, response: Response | None, *, repeat: int = 0, **extra: Any
    ) -> Judgement:
        """Parse the judge's answer strictly. A refusal or a bad reply is a judge error."""
        base: dict[str, Any] = {
            "case_id": record.case_id,
            "target": record.target,
            "attempt": record.attempt,
            "record": record_digest(record),
            "rubric": self.rubric_name,
            "judge": self.spec,
            "fingerprint": self.fingerprint,
            "repeat": repeat,
            **extra,
        }
        if response is None:
            return Judgement(status="infra", **base)
        if response.refusal:
            return Judgement(
                status="judge_error", error=f"refused: {response.refusal}", reply=None, **base
            )
        if response.tool_calls:
            return Judgement(
                status="judge_error",
                error="answered with a tool call instead of the JSON object",
                reply=response.text,
                **base,
            )
        try:
            parsed = parse_reply(response.text, self.rubric)
        except JudgeReplyError as exc:
            return Judgement(status="judge_error", error=str(exc), reply=response.text, **base)
        return Judgement(
            status="ok",
            fields=parsed.fields,
            reasoning=parsed.reasoning,
            reply=response.text,
            **base,
        )


#: The bundled model reads a judge prompt on a CPU: allow it time, and do not resend.
LOCAL_JUDGE_DEFAULTS: dict[str, Any] = {"timeout_s": 600.0, "max_retries": 1}


def judge_settings(spec: str, suite: Suite | None, config: Any = None) -> ModelSettings:
    """Judge defaults (temperature 0, 512 tokens), under the suite's and config's settings."""
    from toolproof.run import resolve_settings, suite_models

    layer = suite_models(suite.settings, suite.source or "suite") if suite is not None else {}
    resolved = resolve_settings(spec, suite=layer, config=config)
    given = resolved.model_dump(exclude_unset=True)
    local = LOCAL_JUDGE_DEFAULTS if spec.startswith("local:") else {}
    return ModelSettings.model_validate({**JUDGE_DEFAULTS, **local, **given})

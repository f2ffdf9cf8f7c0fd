"""A fake model that answers from an earlier run's records.

``replay:runs/<id>/records.jsonl`` (or ``replay:runs/<id>``) gives, for each
case and attempt, the answer recorded then, so a suite can be re-run and
re-scored without calling a model. When the records hold several targets,
pick one with ``#``: ``replay:runs/<id>/records.jsonl#openai:gpt-4.1-mini``.
An attempt with no successful record is answered with a ``rejected``
transport error, which is never scored as model behaviour.

A multi-step record is replayed step by step: step ``i`` of the agent loop is
answered with the response recorded at step ``i``, the runner answers the
tool calls with the tool results of the recorded transcript (see
:meth:`Provider.recording`), and the recorded end state is kept, so a replay
gives the verdicts of the original run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from toolproof.errors import UserError
from toolproof.providers._base import (
    Exchange,
    ModelSettings,
    Provider,
    ProviderRequest,
    TransportError,
)
from toolproof.providers._scripted import step_of
from toolproof.types import Outcome, Record, Response

if TYPE_CHECKING:
    from toolproof.providers._transport import Transport

__all__ = ["ReplayProvider"]


class ReplayProvider(Provider):
    """Answers each (case, attempt) with the response an earlier run recorded."""

    name = "replay"
    cacheable = False

    def __init__(
        self,
        model: str,
        settings: ModelSettings | None = None,
        transport: Transport | None = None,
    ) -> None:
        from toolproof.records import latest_records, read_records

        self.model = model
        self.settings = settings or ModelSettings()
        path_text, _, target = model.partition("#")
        path = Path(path_text)
        if path.is_dir():
            path = path / "records.jsonl"
        # a conversation whose simulated user erred is replayed too (and found so again)
        kept = (Outcome.ok, Outcome.user_error)
        records = [r for r in latest_records(read_records(path)) if r.outcome in kept]
        chosen = _choose_target(records, target or None, str(path))
        self._answers: dict[tuple[str, int], Record] = {
            (r.case_id, r.attempt): r for r in records if r.target == chosen
        }
        self._target = chosen
        versions = {
            r.response.model for r in self._answers.values() if r.response and r.response.model
        }
        self._version = ", ".join(sorted(versions)) or None

    def model_version(self) -> str | None:
        return self._version

    def recording(self, case_id: str, attempt: int) -> Record | None:
        record = self._answers.get((case_id, attempt))
        return record if record is not None and record.transcript is not None else None

    async def generate(self, request: ProviderRequest) -> Exchange:
        case_id, attempt = request.case_id, request.attempt
        if case_id is None:
            raise TransportError(
                Outcome.rejected, "replay: the request names no case (run it via toolproof.run)"
            )
        record = self._answers.get((case_id, attempt))
        if record is None or record.response is None:
            raise TransportError(
                Outcome.rejected,
                f"replay: no recorded answer for case '{case_id}' attempt {attempt}",
            )
        if not record.steps:
            return Exchange(request=record.request, response=record.response.model_copy(deep=True))
        step = step_of(request)
        if step >= len(record.steps):
            raise TransportError(
                Outcome.rejected,
                f"replay: case '{case_id}' attempt {attempt} has {len(record.steps)} recorded "
                f"steps; step {step + 1} was asked for",
            )
        return _step_exchange(record.steps[step], f"case '{case_id}' step {step + 1}")


def _step_exchange(step: Any, where: str) -> Exchange:
    """One recorded step ``{request, response}`` as an exchange."""
    if not isinstance(step, dict) or "response" not in step:
        raise TransportError(Outcome.rejected, f"replay: {where}: the record has no response")
    try:
        response = Response.model_validate(step["response"])
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise TransportError(
            Outcome.rejected, f"replay: {where}: response.{field}: {first['msg']}"
        ) from None
    return Exchange(request=step.get("request"), response=response)


def _choose_target(records: list[Record], wanted: str | None, source: str) -> str | None:
    targets = sorted({r.target for r in records}, key=lambda t: t or "")
    if wanted is not None:
        if wanted not in targets:
            raise UserError(f"{source}: no records for target '{wanted}' (has: {_names(targets)})")
        return wanted
    if len(targets) > 1:
        raise UserError(
            f"{source}: records of several targets ({_names(targets)}); pick one with '#TARGET'"
        )
    return targets[0] if targets else None


def _names(targets: list[Any]) -> str:
    return ", ".join(str(t) for t in targets) or "none"

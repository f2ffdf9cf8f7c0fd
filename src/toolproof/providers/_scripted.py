"""A fake model that answers from a script: test a suite with no network.

A script is YAML or JSON, keyed by case id::

    model: scripted-demo          # optional: the model name to report
    default: {text: "Sorry?"}     # optional: the answer for unlisted cases
    cases:
      lookup-exact-id:
        tool_calls:
          - {name: lookup_order, raw_arguments: '{"order_id": "ORD-104821"}'}
      greeting: {text: "Hello! I can look up and cancel orders."}
      flaky:                      # a list answers attempt 0, 1, ... (the last repeats)
        - {text: "first try"}
        - {tool_calls: [{name: lookup_order, arguments: {order_id: "ORD-1"}}]}
      down: {error: server_error, message: "simulated outage"}
      lookup-then-refund:         # multi-step: one answer per step of the agent loop
        steps:
          - {tool_calls: [{name: lookup_order, arguments: {order_id: "ORD-1"}}]}
          - {text: "Order ORD-1 was delivered on 2 September."}

Each answer is a canonical Response (``text``, ``tool_calls`` with
``raw_arguments`` or ``arguments``, ``usage``...), or any shape
:func:`toolproof.run.to_response` accepts. ``steps`` lists the answers of a
multi-step case, one per step: the step is the number of assistant turns after
the last user message of the request (the last entry repeats). ``error`` (an infrastructure
outcome such as ``rate_limited``) makes the call fail like a transport error.
Use ``scripted:PATH`` on the command line, or
``ScriptedProvider.from_dict({...})`` in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.errors import SuiteError, UserError
from toolproof.providers._base import (
    Exchange,
    ModelSettings,
    Provider,
    ProviderRequest,
    TransportError,
)
from toolproof.types import Outcome

if TYPE_CHECKING:
    from toolproof.providers._transport import Transport

__all__ = ["ScriptedProvider", "step_of"]

_META = frozenset({"format", "model", "default", "cases"})


class ScriptedProvider(Provider):
    """Answers each case from a script, by case id and attempt."""

    name = "scripted"
    cacheable = False

    def __init__(
        self,
        model: str,
        settings: ModelSettings | None = None,
        transport: Transport | None = None,
        *,
        script: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.settings = settings or ModelSettings()
        source = model
        if script is None:
            from toolproof.suite._yaml import read_mapping

            script = read_mapping(Path(model))
        self._reported, self._default, self._cases = _parse_script(script, source)

    @classmethod
    def from_dict(cls, script: Mapping[str, Any], name: str = "script") -> ScriptedProvider:
        """A scripted model from an in-memory script (same shape as the file)."""
        return cls(name, script=script)

    def model_version(self) -> str | None:
        return self._reported

    async def generate(self, request: ProviderRequest) -> Exchange:
        if request.case_id is None:
            raise TransportError(
                Outcome.rejected,
                "scripted model: the request names no case (run it via toolproof.run)",
            )
        entry = self._entry(request.case_id, request.attempt)
        if isinstance(entry, _Steps):
            entry = entry.at(step_of(request))
        sent = request.model_dump(mode="json", include={"messages", "tools"}, exclude_none=True)
        if isinstance(entry, _ScriptedError):
            raise entry.error(sent)
        return Exchange(request=sent, response=entry.model_copy(deep=True))

    def _entry(self, case_id: str, attempt: int) -> Any:
        entry = self._cases.get(case_id, self._default)
        if entry is None:
            raise TransportError(
                Outcome.rejected, f"scripted model: the script has no answer for case '{case_id}'"
            )
        if isinstance(entry, list):
            if not entry:
                raise TransportError(
                    Outcome.rejected, f"scripted model: empty list for '{case_id}'"
                )
            return entry[min(attempt, len(entry) - 1)]
        return entry


class _Steps:
    """The answers of a multi-step case, one per step."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers

    def at(self, step: int) -> Any:
        return self.answers[min(step, len(self.answers) - 1)]


def step_of(request: ProviderRequest) -> int:
    """The agent loop's step: as the runner numbers it, or else how many assistant turns
    follow the last user message (in a conversation, the step counts from its start)."""
    if request.step is not None:
        return request.step
    step = 0
    for message in reversed(request.messages):
        if message.role == "user":
            break
        step += message.role == "assistant"
    return step


class _ScriptedError:
    def __init__(self, entry: Mapping[str, Any], where: str) -> None:
        try:
            self.outcome = Outcome(entry["error"])
        except ValueError:
            raise UserError(f"{where}: unknown error outcome '{entry['error']}'") from None
        self.message = str(entry.get("message", f"scripted {self.outcome.value}"))
        self.status = entry.get("status")
        self.retry_after = entry.get("retry_after")

    def error(self, sent: Any) -> TransportError:
        return TransportError(
            self.outcome,
            self.message,
            status=self.status,
            retry_after=self.retry_after,
            request=sent,
        )


def _answer(entry: Any, where: str, model: str | None) -> Any:
    from toolproof.providers._normalise import NotAResponse, to_response

    if entry is None:
        return None
    if isinstance(entry, list):
        return [_answer(item, f"{where}[{i}]", model) for i, item in enumerate(entry)]
    if isinstance(entry, Mapping) and "error" in entry:
        return _ScriptedError(entry, where)
    if isinstance(entry, Mapping) and "steps" in entry:
        steps = entry["steps"]
        if set(entry) != {"steps"} or not isinstance(steps, list) or not steps:
            raise UserError(f"{where}: 'steps' must be the only key, with a non-empty list")
        return _Steps([_answer(s, f"{where}.steps[{i}]", model) for i, s in enumerate(steps)])
    try:
        response = to_response(entry)
    except NotAResponse as exc:
        raise UserError(f"{where}: {exc}") from None
    if response.model is None and model is not None:
        response = response.model_copy(update={"model": model})
    return response


def _parse_script(script: Mapping[str, Any], source: str) -> tuple[str | None, Any, dict[str, Any]]:
    if not isinstance(script, Mapping):
        raise SuiteError(source, "a script must be a mapping")
    if "cases" in script:
        unknown = sorted(str(k) for k in set(script) - _META)
        if unknown:
            raise SuiteError(source, f"unknown key '{unknown[0]}'", path=[unknown[0]])
        cases = script["cases"] or {}
    else:
        cases = {k: v for k, v in script.items() if k not in _META}
    if not isinstance(cases, Mapping):
        raise SuiteError(source, "must map case ids to answers", path=["cases"])
    model = str(script["model"]) if script.get("model") is not None else None
    answers = {str(k): _answer(v, f"{source}: cases.{k}", model) for k, v in cases.items()}
    return model, _answer(script.get("default"), f"{source}: default", model), answers

"""Generation settings → request fields, shared by every wire-format adapter.

The adapters differ only in where a setting goes and what it is called, so
each describes that as data (a :class:`SettingsFormat`) and
:func:`put_settings` writes the fields. The order in which fields are written
is fixed (tools, tool choice, parallel calls, then the generation fields in
the order the format lists them), so the same settings give the same bytes.

A setting a format cannot honour is refused with a :class:`Refusal` (a
UserError naming the provider), never dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolproof.errors import UserError
from toolproof.providers._base import ModelSettings

__all__ = ["TOOL_NAME", "Put", "Refusal", "SettingsFormat", "put_settings", "refuse"]

#: Placeholder, in a tool-choice template, for the name of the tool the choice names.
TOOL_NAME = "\x00tool"

Path = tuple[str, ...]


@dataclass(frozen=True)
class Put:
    """Setting ``setting`` goes at ``path`` when set; ``convert`` may change it (None: not sent)."""

    setting: str
    path: Path
    convert: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Refusal:
    """A setting value the format cannot honour; ``message`` may name it as ``{value!r}``."""

    setting: str
    values: frozenset[Any]
    message: str


@dataclass(frozen=True)
class SettingsFormat:
    """Where one wire format puts each setting.

    ``choices`` maps a tool-choice mode (auto, required, none, tool) to the
    value sent at ``tool_choice``; in the ``tool`` value, :data:`TOOL_NAME`
    stands for the tool's name. ``parallel`` is where ``parallel_tool_calls``
    goes (``negate`` sends its opposite; not sent with the modes in
    ``parallel_skip``). Tool choice and parallel calls are sent only with
    tools. ``fields`` are the generation settings, written in this order.
    """

    tool_choice: Path
    choices: Mapping[str, Any]
    parallel: Path | None = None
    negate: bool = False
    parallel_skip: frozenset[str] = frozenset()
    fields: tuple[Put, ...] = ()
    refusals: tuple[Refusal, ...] = field(default=())


def refuse(provider: str, fmt: SettingsFormat, settings: ModelSettings) -> None:
    """Raise a UserError for the first setting ``fmt`` cannot honour."""
    for refusal in fmt.refusals:
        value = getattr(settings, refusal.setting)
        if value is not None and value in refusal.values:
            raise UserError(refusal.message.format(provider=provider, value=value))


def put_settings(
    payload: dict[str, Any], fmt: SettingsFormat, settings: ModelSettings, tools: bool
) -> dict[str, Any]:
    """Write the settings into ``payload`` (in place, and returned).

    A key already in the payload keeps its place and takes the new value, so
    a format may put a field early with its default (Anthropic's required
    ``max_tokens``).
    """
    if tools:
        choice = settings.tool_choice
        value = _with_name(fmt.choices[choice.mode], choice.tool)
        _put(payload, fmt.tool_choice, value)
        parallel = settings.parallel_tool_calls
        if fmt.parallel and parallel is not None and choice.mode not in fmt.parallel_skip:
            _put(payload, fmt.parallel, (not parallel) if fmt.negate else parallel)
    for put in fmt.fields:
        value = getattr(settings, put.setting)
        if value is not None and put.convert is not None:
            value = put.convert(value)
        if value is not None:
            _put(payload, put.path, value)
    return payload


def _put(payload: dict[str, Any], path: Path, value: Any) -> None:
    target = payload
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


def _with_name(template: Any, name: str | None) -> Any:
    if template == TOOL_NAME:
        return name
    if isinstance(template, dict):
        return {k: _with_name(v, name) for k, v in template.items()}
    if isinstance(template, list):
        return [_with_name(v, name) for v in template]
    return copy.copy(template)

"""MCP tool definitions (``tools/list`` entries) to toolproof tools, annotations included.

MCP annotations are hints, and their defaults are the cautious ones: an
absent ``readOnlyHint`` counts as false, an absent ``destructiveHint`` and
``openWorldHint`` as true. They map to ``effect`` and a suggested ``risk``:

    readOnly  destructive  openWorld   effect       risk
    true      -            -           read         low
    false     false        false       write        medium
    false     false        true        write        high
    false     true         false       destructive  high
    false     true         true        destructive  critical

``idempotentHint: true`` lowers the risk one step, never below medium.
"""

from __future__ import annotations

from typing import Any

from toolproof.types import Effect, Risk

_ORDER = [Risk.low, Risk.medium, Risk.high, Risk.critical]
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def effect_and_risk(annotations: dict[str, Any] | None) -> tuple[Effect, Risk]:
    """The effect and suggested risk of an MCP tool with these annotations."""
    hints = annotations or {}
    if hints.get("readOnlyHint") is True:
        return Effect.read, Risk.low
    destructive = hints.get("destructiveHint") is not False
    open_world = hints.get("openWorldHint") is not False
    effect = Effect.destructive if destructive else Effect.write
    if destructive:
        risk = Risk.critical if open_world else Risk.high
    else:
        risk = Risk.high if open_world else Risk.medium
    if hints.get("idempotentHint") is True and risk.rank > Risk.medium.rank:
        risk = _ORDER[risk.rank - 1]
    return effect, risk


def describe_hints(annotations: dict[str, Any] | None) -> str:
    """``readOnlyHint=false, destructiveHint=true (absent: default)`` for a YAML comment."""
    hints = annotations or {}
    parts = []
    for key in HINTS:
        if key in hints:
            parts.append(f"{key}={_json(hints[key])}")
    return ", ".join(parts) if parts else "none (the cautious defaults apply)"


def _json(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return repr(value)

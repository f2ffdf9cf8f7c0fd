"""Per-model settings: suite ``settings:``, then the config file, then flags.

The config file (``toolproof.yaml``) looks like::

    models:
      "*": {max_retries: 4}                  # every model
      openai:gpt-4.1-mini: {temperature: 0, concurrency: 8, rpm: 500}
      anthropic:claude-sonnet-4-5: {tool_choice: auto}
    pricing:
      my-finetune: {input: 1.0, output: 2.0}

A suite's ``settings:`` mapping has the same ``models:`` shape (the
``models:`` level may be left out). Every layer is checked on its own, so an
unknown key is reported with the file and key that hold it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof.errors import SuiteError, UserError
from toolproof.providers import ModelSettings

__all__ = ["RunConfig", "load_config", "read_mapping", "resolve_settings"]

_CONFIG_KEYS = frozenset({"models", "pricing"})
ALL_MODELS = "*"


@dataclass(frozen=True, slots=True)
class RunConfig:
    """A parsed config file."""

    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    pricing: dict[str, Any] | None = None
    source: str = "toolproof.yaml"


def read_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML or JSON file that must hold a mapping."""
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except OSError as exc:
        raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        if p.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except ValueError as exc:  # json.JSONDecodeError and yaml.YAMLError
        raise UserError(f"{p}: not valid {p.suffix.lstrip('.') or 'YAML'}: {exc}") from None
    except Exception as exc:
        raise UserError(f"{p}: not valid YAML: {exc}".splitlines()[0]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SuiteError(str(p), "the file must hold a mapping")
    return data


def load_config(path: str | Path) -> RunConfig:
    """Read and check a config file."""
    data = read_mapping(path)
    source = str(path)
    for key in data:
        if key not in _CONFIG_KEYS:
            raise SuiteError(source, f"unknown key '{key}' (expected: models, pricing)", path=[key])
    models = _models_of(data.get("models") or {}, source, ["models"])
    pricing = data.get("pricing")
    if pricing is not None and not isinstance(pricing, dict):
        raise SuiteError(source, "must be a mapping of model to {input, output}", path=["pricing"])
    return RunConfig(models=models, pricing=pricing, source=source)


def _models_of(data: Any, source: str, path: list[str]) -> dict[str, dict[str, Any]]:
    if not isinstance(data, Mapping):
        raise SuiteError(source, "must be a mapping of model spec to settings", path=path)
    out: dict[str, dict[str, Any]] = {}
    for spec, value in data.items():
        value = value or {}
        if not isinstance(value, Mapping):
            raise SuiteError(source, "settings must be a mapping", path=[*path, str(spec)])
        _check(dict(value), source, [*path, str(spec)])
        out[str(spec)] = dict(value)
    return out


def _check(values: dict[str, Any], source: str, path: list[str]) -> None:
    try:
        ModelSettings.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        if err["type"] == "extra_forbidden":
            message = f"unknown setting '{loc[-1]}'" if loc else "unknown setting"
            raise SuiteError(source, message, path=[*path, *loc[:-1]]) from None
        raise SuiteError(source, err["msg"], path=[*path, *loc]) from None


def suite_models(settings: Mapping[str, Any], source: str) -> dict[str, dict[str, Any]]:
    """The per-model layer of a suite's ``settings:`` mapping."""
    if not settings:
        return {}
    if "models" in settings:
        extra = sorted(set(settings) - {"models"})
        if extra:
            raise SuiteError(source, f"unknown key '{extra[0]}'", path=["settings", extra[0]])
        return _models_of(settings["models"] or {}, source, ["settings", "models"])
    return _models_of(settings, source, ["settings"])


def resolve_settings(
    spec: str,
    *,
    suite: Mapping[str, Mapping[str, Any]] | None = None,
    config: RunConfig | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> ModelSettings:
    """Merge the layers for one target: suite < config file < command-line flags."""
    merged: dict[str, Any] = {}
    for layer in (suite or {}, config.models if config else {}):
        merged.update(layer.get(ALL_MODELS, {}))
        merged.update(layer.get(spec, {}))
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    _check(given, "command line", [])
    merged.update(given)
    return ModelSettings.model_validate(merged)

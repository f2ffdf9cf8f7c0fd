"""Per-model settings: suite ``settings:``, then the config file, then flags.

The config file (``toolproof.yaml``) looks like::

    models:
      "*": {max_retries: 4}                  # every model
      openai:gpt-4.1-mini: {temperature: 0, concurrency: 8, rpm: 500}
      anthropic:claude-sonnet-4-5: {tool_choice: auto}
    pricing:
      my-finetune: {input: 1.0, output: 2.0}
    allow_code: false      # true: run suites' own code (environment tools, MCP servers)
    max_file_mib: 16       # largest file a suite may name
    trusted_commands:      # MCP servers a suite may start although they run code from
      - npx -y @modelcontextprotocol/server-memory   # outside its folder (exact command)

A suite's ``settings:`` mapping has the same ``models:`` shape (the
``models:`` level may be left out), without the settings that choose where
requests and keys go (:data:`toolproof.trust.ROUTING_SETTINGS`): those come
only from the config file and the command line. Every layer is checked on its
own, so an unknown key is reported with the file and key that hold it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof.errors import SuiteError
from toolproof.providers import ModelSettings
from toolproof.suite._yaml import read_mapping
from toolproof.trust import DEFAULT_MAX_FILE_BYTES, ROUTING_SETTINGS, Trust

__all__ = ["RunConfig", "load_config", "read_mapping", "resolve_settings", "trust_from"]

_CONFIG_KEYS = frozenset(
    {"models", "pricing", "allow_code", "max_file_mib", "trusted_commands", "redact"}
)
ALL_MODELS = "*"


@dataclass(frozen=True, slots=True)
class RunConfig:
    """A parsed config file."""

    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    pricing: dict[str, Any] | None = None
    source: str = "toolproof.yaml"
    allow_code: bool = False
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    trusted_commands: frozenset[tuple[str, ...]] = frozenset()
    #: Whether the file set ``max_file_mib`` (else ``max_file_bytes`` is the default).
    max_file_given: bool = False
    #: ``redact``: the user's redaction rules for imported traces (checked by toolproof.traces).
    redact: dict[str, Any] | None = None


def untrusted_part(config: RunConfig) -> tuple[RunConfig, list[str]]:
    """What a config in the working tree may set, and the names of what it set but may not.

    It may not grant trust (``allow_code``, ``trusted_commands``), choose where
    requests and keys go (:data:`toolproof.trust.ROUTING_SETTINGS`), nor set how
    imported traces are redacted (``redact``: an allow-list there would let personal
    data through).
    """
    ignored: list[str] = []
    if config.allow_code:
        ignored.append("allow_code")
    if config.trusted_commands:
        ignored.append("trusted_commands")
    if config.redact:
        ignored.append("redact")
    models: dict[str, dict[str, Any]] = {}
    for spec, values in config.models.items():
        for key in sorted(set(values) & ROUTING_SETTINGS):
            ignored.append(f"models.{spec}.{key}")
        models[spec] = {k: v for k, v in values.items() if k not in ROUTING_SETTINGS}
    kept = RunConfig(
        models=models,
        pricing=config.pricing,
        source=config.source,
        max_file_bytes=config.max_file_bytes,
        max_file_given=config.max_file_given,
    )
    return kept, ignored


def combined(own: RunConfig | None, local: RunConfig) -> RunConfig:
    """The user's own config with a working tree's (see :func:`untrusted_part`) on top.

    The working tree's settings and prices replace the user's one by one; its
    ``max_file_mib`` can only lower the limit.
    """
    if own is None:
        if local.max_file_given and local.max_file_bytes > DEFAULT_MAX_FILE_BYTES:
            local = replace(local, max_file_bytes=DEFAULT_MAX_FILE_BYTES)
        return local
    models = {spec: dict(values) for spec, values in own.models.items()}
    for spec, values in local.models.items():
        models.setdefault(spec, {}).update(values)
    pricing = {**(own.pricing or {}), **(local.pricing or {})} or None
    limit = own.max_file_bytes
    if local.max_file_given:
        limit = min(limit, local.max_file_bytes)
    return replace(own, models=models, pricing=pricing, max_file_bytes=limit)


def trust_from(config: RunConfig | None, allow_code: bool = False) -> Trust:
    """The trust policy of a command: its ``--allow-code`` flag and the user's config."""
    if allow_code:
        source: str | None = "--allow-code"
    elif config is not None and config.allow_code:
        source = config.source
    else:
        source = None
    return Trust(
        allow_code=source is not None,
        max_file_bytes=config.max_file_bytes if config else DEFAULT_MAX_FILE_BYTES,
        code_source=source,
        commands=config.trusted_commands if config else frozenset(),
    )




def load_config(path: str | Path) -> RunConfig:
    """Read and check a config file."""
    data = read_mapping(path)
    source = str(path)
    for key in data:
        if key not in _CONFIG_KEYS:
            known = ", ".join(sorted(_CONFIG_KEYS))
            raise SuiteError(source, f"unknown key '{key}' (expected: {known})", path=[key])
    models = _models_of(data.get("models") or {}, source, ["models"])
    pricing = data.get("pricing")
    if pricing is not None and not isinstance(pricing, dict):
        raise SuiteError(source, "must be a mapping of model to {input, output}", path=["pricing"])
    allow_code = data.get("allow_code", False)
    if not isinstance(allow_code, bool):
        raise SuiteError(source, "must be true or false", path=["allow_code"])
    mib = data.get("max_file_mib", DEFAULT_MAX_FILE_BYTES / (1 << 20))
    if isinstance(mib, bool) or not isinstance(mib, int | float) or not 0 < mib <= 4096:
        raise SuiteError(
            source, "must be a number of MiB, above 0 and at most 4096", path=["max_file_mib"]
        )
    return RunConfig(
        trusted_commands=_commands_of(data.get("trusted_commands"), source),
        models=models,
        pricing=pricing,
        source=source,
        allow_code=allow_code,
        max_file_bytes=int(mib * (1 << 20)),
        max_file_given="max_file_mib" in data,
        redact=_redact_of(data.get("redact"), source),
    )


def _redact_of(data: Any, source: str) -> dict[str, Any] | None:
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise SuiteError(source, "must be a mapping with 'allow' and 'rules'", path=["redact"])
    return dict(data)


def _commands_of(data: Any, source: str) -> frozenset[tuple[str, ...]]:
    """``trusted_commands``: command lines, each split into words as a shell would."""
    if data is None:
        return frozenset()
    if not isinstance(data, list):
        raise SuiteError(source, "must be a list of command lines", path=["trusted_commands"])
    out: set[tuple[str, ...]] = set()
    for i, line in enumerate(data):
        try:
            # written as the suite writes it ("stdio:python server.py") or without the prefix
            text = line.strip().removeprefix("stdio:") if isinstance(line, str) else ""
            words = tuple(shlex.split(text))
        except ValueError as exc:
            raise SuiteError(source, f"cannot split: {exc}", path=["trusted_commands", i]) from None
        if not words:
            raise SuiteError(source, "must be a command line", path=["trusted_commands", i])
        out.add(words)
    return frozenset(out)


def _models_of(
    data: Any, source: str, path: list[str], *, suite: bool = False
) -> dict[str, dict[str, Any]]:
    if not isinstance(data, Mapping):
        raise SuiteError(source, "must be a mapping of model spec to settings", path=path)
    out: dict[str, dict[str, Any]] = {}
    for spec, value in data.items():
        value = value or {}
        if not isinstance(value, Mapping):
            raise SuiteError(source, "settings must be a mapping", path=[*path, str(spec)])
        if suite:
            for key in value:
                if key in ROUTING_SETTINGS:
                    raise SuiteError(
                        source,
                        f"'{key}' chooses where requests and keys go, so a suite may not set it; "
                        "put it in your own toolproof.yaml or the file you pass with --config",
                        path=[*path, str(spec), str(key)],
                    )
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
        return _models_of(settings["models"] or {}, source, ["settings", "models"], suite=True)
    return _models_of(settings, source, ["settings"], suite=True)


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

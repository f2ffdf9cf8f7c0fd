"""The options every command that reads a suite shares: --config and --allow-code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from toolproof.run import RunConfig
    from toolproof.trust import Trust

DEFAULT_CONFIG = "toolproof.yaml"

ALLOW_CODE_HELP = (
    "Let the suite run its own code (environment tools, gold-action replay, MCP servers). "
    "Never for untrusted pull requests."
)


#: The shared options, as module-level defaults of each command's parameters.
ALLOW_CODE: Any = typer.Option(False, "--allow-code", help=ALLOW_CODE_HELP)
CONFIG: Any = typer.Option(
    None, "--config", help=f"Your settings file (default: ./{DEFAULT_CONFIG} if present)."
)


def load_user_config(config: Path | None) -> RunConfig | None:
    """The user's config: --config, else ./toolproof.yaml when present, else none."""
    from toolproof.run import load_config

    if config is None and Path(DEFAULT_CONFIG).is_file():
        config = Path(DEFAULT_CONFIG)
    return load_config(config) if config is not None else None


def trust_for(config: Path | None, allow_code: bool) -> tuple[Trust, RunConfig | None]:
    """The trust policy from the command line and the user's config (never the suite)."""
    from toolproof.run import trust_from

    loaded = load_user_config(config)
    return trust_from(loaded, allow_code), loaded

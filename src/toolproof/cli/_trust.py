"""The options every command that reads a suite shares: --config and --allow-code.

Where the user's settings come from. A config file can grant trust
(``allow_code``, ``trusted_commands``) and route keys (``base_url``,
``api_key_env`` and the other :data:`toolproof.trust.ROUTING_SETTINGS`), so
only the user's own files count for those:

1. ``--config FILE``, else
2. ``$TOOLPROOF_CONFIG``, else
3. the user's config folder (``$XDG_CONFIG_HOME/toolproof/toolproof.yaml``, else
   ``~/.config/toolproof/toolproof.yaml``) together with ``./toolproof.yaml``.

``./toolproof.yaml`` is part of the working tree, which a pull request can
change: it is read for everything else (settings, pricing, a lower
``max_file_mib``), and a setting of it that would grant trust or route keys
is ignored, with one warning saying where to put it instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from toolproof.run import RunConfig
    from toolproof.trust import Trust

DEFAULT_CONFIG = "toolproof.yaml"
CONFIG_ENV = "TOOLPROOF_CONFIG"

ALLOW_CODE_HELP = (
    "Let the suite run its own code (environment tools, gold-action replay, MCP servers). "
    "Never for untrusted pull requests."
)


#: The shared options, as module-level defaults of each command's parameters.
ALLOW_CODE: Any = typer.Option(False, "--allow-code", help=ALLOW_CODE_HELP)
CONFIG: Any = typer.Option(
    None,
    "--config",
    help=(
        f"Your settings file (default: ${CONFIG_ENV}, else your config folder's "
        f"toolproof/{DEFAULT_CONFIG}, with ./{DEFAULT_CONFIG} for settings that grant no trust)."
    ),
)

#: Working-tree files already warned about in this process (the warning is said once).
_warned: set[str] = set()


def user_config_file() -> Path:
    """The config file of the user's config folder (it may not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    folder = Path(base) if base else Path.home() / ".config"
    return folder / "toolproof" / DEFAULT_CONFIG


def load_user_config(config: Path | None) -> RunConfig | None:
    """The user's config: see the module's docstring for where it comes from."""
    from toolproof.run import load_config
    from toolproof.run._settings import combined, untrusted_part

    if config is not None:
        return load_config(config)
    env = os.environ.get(CONFIG_ENV, "").strip()
    if env:
        return load_config(env)
    own_file = user_config_file()
    own = load_config(own_file) if own_file.is_file() else None
    if not Path(DEFAULT_CONFIG).is_file():
        return own
    local, ignored = untrusted_part(load_config(DEFAULT_CONFIG))
    if ignored and DEFAULT_CONFIG not in _warned:
        _warned.add(DEFAULT_CONFIG)
        print(
            f"warning: ./{DEFAULT_CONFIG}: ignoring {', '.join(ignored)}: a config in the "
            "working tree may not grant trust or choose where requests and keys go; put it "
            f"in {own_file}, pass --config FILE or set {CONFIG_ENV}",
            file=sys.stderr,
        )
    return combined(own, local)


def trust_for(config: Path | None, allow_code: bool) -> tuple[Trust, RunConfig | None]:
    """The trust policy from the command line and the user's config (never the suite)."""
    from toolproof.run import trust_from

    loaded = load_user_config(config)
    return trust_from(loaded, allow_code), loaded

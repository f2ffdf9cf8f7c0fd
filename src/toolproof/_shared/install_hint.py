"""How to install an extra of toolproof, said the way that works where the user stands.

toolproof is not on the package index, so ``pip install 'toolproof[local]'``
does not work. When toolproof was installed from a checkout (``pip install -e
.``), pip records the folder in ``direct_url.json``; the hint names it.
Otherwise the hint says to install from the checkout.
"""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["install_hint", "source_folder"]


def source_folder() -> Path | None:
    """The folder toolproof was installed from (a checkout), when pip recorded one."""
    try:
        text = metadata.distribution("toolproof").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        url = json.loads(text).get("url", "")
    except (ValueError, AttributeError):
        return None
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    folder = Path(unquote(parsed.path))
    return folder if (folder / "pyproject.toml").is_file() else None


def install_hint(extra: str) -> str:
    """``pip install -e '/path/to/toolproof[local]'``, or how to get there."""
    folder = source_folder()
    if folder is not None:
        editable = "-e " if _editable() else ""
        return f"pip install {editable}{shlex.quote(f'{folder}[{extra}]')}"
    return f"pip install -e '.[{extra}]' in the toolproof checkout (it is not on PyPI)"


def _editable() -> bool:
    try:
        text = metadata.distribution("toolproof").read_text("direct_url.json") or "{}"
        return bool(json.loads(text).get("dir_info", {}).get("editable"))
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return False

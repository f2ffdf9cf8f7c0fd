"""Keep the keys toolproof loaded out of everything it writes.

Every API key toolproof reads (from the environment variable a provider or
``api_key_env`` names) is remembered here with :func:`remember_secret`. The
:class:`Redactor` built from them replaces each one, wherever it appears in a
string (a provider echoing ``Incorrect API key provided: sk-…`` in a 401 body,
a URL in an error message, a model repeating it), with :data:`PLACEHOLDER`.
It is applied once, where records, cache entries and manifests are
serialised and where the command line prints an error, so every report built
from them is clean too.

Beyond the keys toolproof loads, every value of a secret-shaped environment
variable is redacted too (:func:`environment_secrets`): a name ending in
``_KEY``, ``_TOKEN``, ``_SECRET``, ``_PASSWORD`` (and the like), or a value
starting with a known provider's key prefix. Code a suite runs with
``--allow-code`` can read them all (an MCP server reads its parent's
``/proc/<pid>/environ``), and its answers end up in records.

Values shorter than :data:`MIN_LENGTH` characters are not treated as keys:
local servers take placeholders such as ``EMPTY``, and replacing those
everywhere would corrupt records without protecting anything.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

from toolproof._shared.json_escapes import decode, unescaped
from toolproof._shared.json_text import dump_model

__all__ = [
    "MIN_LENGTH",
    "PLACEHOLDER",
    "Redactor",
    "environment_secrets",
    "redactor",
    "remember_secret",
]

PLACEHOLDER = "[redacted]"
MIN_LENGTH = 8

M = TypeVar("M", bound=BaseModel)

_lock = threading.Lock()
_known: set[str] = set()
_current: Redactor | None = None
_from_env: frozenset[str] = frozenset()

#: Names of environment variables that hold secrets: ``OPENAI_API_KEY``,
#: ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``PGPASSWORD``, ``NPM_AUTH``...
SECRET_NAME = re.compile(
    r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH|PAT|COOKIE|SESSION)"
    r"(?:_|$)|(?:KEY|TOKEN|SECRET|PASSWORD)S?$|^(?:PG|MYSQL_)PASSWORD$",
    re.IGNORECASE,
)
#: Values that are keys whatever their variable is called (known providers' prefixes).
SECRET_VALUE = re.compile(
    r"^(?:sk-|sk_live_|rk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|"
    r"AKIA|ASIA|AIza|hf_|r8_|gsk_|pplx-|npm_|pypi-|dop_v1_|SG\.|shpat_)"
)
#: Variables that are never secrets, whatever the rule says (paths and settings).
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "XAUTHORITY"})


def environment_secrets(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The values of the secret-shaped variables of ``environ`` (default: this process's)."""
    env = os.environ if environ is None else environ
    out = set()
    for name, value in env.items():
        if len(value) < MIN_LENGTH or name in _NOT_SECRET:
            continue
        if SECRET_NAME.search(name) or SECRET_VALUE.match(value):
            out.add(value)
    return frozenset(out)


def remember_secret(value: str | None) -> None:
    """Redact ``value`` from everything written from now on (in this process)."""
    global _current
    if value is None or len(value) < MIN_LENGTH:
        return
    with _lock:
        if value not in _known:
            _known.add(value)
            _current = None


def redactor() -> Redactor:
    """The redactor of every key loaded so far, and of the secrets in the environment."""
    global _current, _from_env
    env = environment_secrets()
    with _lock:
        if _current is None or env != _from_env:
            _from_env = env
            _current = Redactor(_known | env)
        return _current


class Redactor:
    """Replaces known secret values with a placeholder, in text and in JSON-like data."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # longest first, so a key that contains another is replaced whole
        self.secrets = sorted(
            {s for s in secrets if len(s) >= MIN_LENGTH}, key=lambda s: (-len(s), s)
        )
        needles = set(self.secrets)
        needles |= {json.dumps(s, ensure_ascii=False)[1:-1] for s in self.secrets}
        needles |= {json.dumps(s)[1:-1] for s in self.secrets}
        self._needles = sorted(needles)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def found_in(self, text: str) -> bool:
        """Whether ``text`` (plain or JSON) holds a secret: written as it is, as JSON
        writes it, or spelled with ``\\u`` escapes (in JSON text inside JSON text, too)."""
        if any(n in text for n in self._needles):
            return True
        view = text
        for _ in range(3):  # JSON text, a string in it that holds JSON text, and one more
            if "\\" not in view:
                return False
            view = decode(view)
            if any(s in view for s in self.secrets):
                return True
        return False

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, PLACEHOLDER)
        if "\\" in text:  # JSON escapes inside the text may spell a secret
            text = self._escaped(text)
        return text

    def _escaped(self, text: str) -> str:
        """``text`` with each secret that its JSON escapes spell (``sk\\u002d…``, a
        quoted object inside a string) replaced where it stands."""
        if not any(s in decode(text) for s in self.secrets):
            return text
        view = unescaped(text)
        if view is None:
            return text
        decoded, at = view
        spans: list[tuple[int, int]] = []
        for secret in self.secrets:
            start = decoded.find(secret)
            while start >= 0:
                spans.append((at[start], at[start + len(secret)]))
                start = decoded.find(secret, start + len(secret))
        if not spans:
            return text
        out, pos = [], 0
        for start, end in sorted(spans):
            if start < pos:
                continue
            out += [text[pos:start], PLACEHOLDER]
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def value(self, data: Any) -> Any:
        """``data`` with every string (mapping keys too) redacted; containers are copied."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.value(k): self.value(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(v) for v in data]
        return data

    def model(self, obj: M) -> M:
        """``obj`` itself when it holds no secret, else a redacted copy of it."""
        if not self.secrets:
            return obj
        text = dump_model(obj)
        if not self.found_in(text):
            return obj
        data = json.loads(text)
        redacted = self.value(data)
        return obj if redacted == data else type(obj).model_validate(redacted)

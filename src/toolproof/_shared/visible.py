"""Text from outside shown as text: every character that could act is escaped visibly.

The one rule for model output, tool names and other untrusted text written to
a terminal, a file comment or a report: C0 and C1 controls, DEL,
bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
U+061C), the line and paragraph separators, lone surrogates and the
noncharacters U+FFFE and U+FFFF become ``\\x1b``, ``\\u202e`` and the like.
:mod:`toolproof.report._escape` builds each output format's escaping on it.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _show(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep: str = "") -> str:
    """``text`` with every control, bidi control and unencodable character escaped visibly.

    Characters in ``keep`` (for example ``"\\n"``) are left as they are.
    """
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _show(m.group()), text)

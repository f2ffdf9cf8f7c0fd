"""Text with JSON string escapes in it, read as the characters they stand for.

Text often holds JSON that is not a whole JSON value: a trace attribute that
quotes a tool's arguments, a truncated body, a model's answer that embeds an
object. There ``alice\\u0040example.com`` is an e-mail address and
``sk\\u002dproj…`` a key, though neither appears as such. :func:`unescaped`
gives the text with its escapes decoded, and where each decoded character came
from, so that a finding in the decoded text can be replaced in the original.
"""

from __future__ import annotations

import re

__all__ = ["decode", "unescaped"]

_ESCAPE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|(["\\/bfnrt]))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _one(m: re.Match[str]) -> str:
    code = m.group(1)
    return chr(int(code, 16)) if code is not None else _SIMPLE[m.group(2)]


def decode(text: str) -> str:
    """``text`` with each JSON escape decoded (:func:`unescaped` without the positions)."""
    return _ESCAPE.sub(_one, text) if "\\" in text else text


def unescaped(text: str) -> tuple[str, list[int]] | None:
    """``(decoded, where)``: ``text`` with each JSON escape (``\\uXXXX``, ``\\"``, ``\\n``…)
    decoded, and for each position of ``decoded`` (and its end) the position in ``text``
    it came from; a match ``decoded[i:j]`` is ``text[where[i]:where[j]]``. None when
    ``text`` holds no escape."""
    if "\\" not in text:
        return None
    pieces: list[str] = []
    where: list[int] = []
    pos = 0
    for m in _ESCAPE.finditer(text):
        start = m.start()
        pieces.append(text[pos:start])
        where.extend(range(pos, start))
        code, simple = m.group(1), m.group(2)
        pieces.append(chr(int(code, 16)) if code is not None else _SIMPLE[simple])
        where.append(start)
        pos = m.end()
    if not where and pos == 0:
        return None
    pieces.append(text[pos:])
    where.extend(range(pos, len(text) + 1))
    return "".join(pieces), where

"""Make model output safe to embed in Markdown, HTML and XML."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MENTION = re.compile(r"(?<!\w)@(?=\w)")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#!|~:])")


def xml_text(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (the writer escapes the rest)."""
    return _CONTROL.sub("\ufffd", text)


def md_text(text: str, limit: int = 200) -> str:
    """Inline text for Markdown: no HTML, no formatting, no links, one line."""
    text = _CONTROL.sub("", text).replace("\r", " ").replace("\n", " ")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MENTION.sub("@\u200b", text)  # no @-mentions from model output


def html_text(text: str, limit: int = 200) -> str:
    """Inline text inside an HTML element (``<summary>``): entities only, one line."""
    import html

    text = _CONTROL.sub("", text).replace("\r", " ").replace("\n", " ")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MENTION.sub("@\u200b", html.escape(text, quote=True))


def md_code_block(text: str, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside, so the text cannot close it."""
    text = _CONTROL.sub("", text)
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"

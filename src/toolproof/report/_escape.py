"""Make model output safe to show: in a terminal, Markdown, HTML and XML.

Model output, case IDs, tags and target names are untrusted text. Every
character that could act rather than show is written as a visible escape
(``\\x1b``, ``\\r``, ``\\u202e``):

- C0 and C1 control characters and DEL: ESC starts terminal sequences (CSI
  clears the screen, OSC 8 makes links), U+009B is CSI on its own, ``\\r``
  returns to the start of the line to overwrite it;
- bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
  U+061C), which reorder what is shown, and the line and paragraph
  separators U+2028 and U+2029;
- lone surrogates and the noncharacters U+FFFE and U+FFFF, which UTF-8
  cannot encode or XML 1.0 cannot hold.

Newlines and tabs are escaped too, except where a format keeps them (a
Markdown code block, an XML text node).
"""

from __future__ import annotations

import re

from rich.markup import escape as _rich_escape

from toolproof._shared.visible import visible

__all__ = ["html_text", "md_code_block", "md_text", "term_text", "visible", "xml_text"]

_MENTION = re.compile(r"(?<!\w)@(?=\w)")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#!|~:])")


def term_text(text: str) -> str:
    """One line for a rich console: controls escaped visibly, markup escaped."""
    return _rich_escape(visible(text))


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold: forbidden and control characters escaped visibly.

    Newlines and tabs stay (the writer escapes ``<``, ``&`` and quotes).
    """
    return visible(text, keep="\n\t")


def _one_line(text: str, limit: int) -> str:
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    text = visible(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def md_text(text: str, limit: int = 200) -> str:
    """Inline text for Markdown: no HTML, no formatting, no links, one line."""
    text = _one_line(text, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MENTION.sub("@\u200b", text)  # no @-mentions from model output


def html_text(text: str, limit: int = 200) -> str:
    """Inline text inside an HTML element (``<summary>``): entities only, one line."""
    import html

    return _MENTION.sub("@\u200b", html.escape(_one_line(text, limit), quote=True))


def md_code_block(text: str, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside, so the text cannot close it."""
    text = visible(text, keep="\n\t")
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"

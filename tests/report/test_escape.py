"""Model output is shown, never obeyed: terminal, Markdown and XML escaping."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from toolproof.report._escape import html_text, md_code_block, md_text, term_text, visible, xml_text

ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))

HOSTILE = [
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear the screen, cursor home
    ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "\\x1b]8;;http://evil\\x1b\\link"),  # OSC 8
    ("\x9b2J", "\\x9b2J"),  # C1 CSI
    ("ok\r✓ passed", "ok\\r✓ passed"),
    ("a\nb", "a\\nb"),
    ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override
    ("\u2066x\u2069", "\\u2066x\\u2069"),
    ("x\ud800", "x\\ud800"),
    ("\ufffe\uffff", "\\ufffe\\uffff"),
    ("\x00\x07\x7f", "\\x00\\x07\\x7f"),
]


@pytest.mark.parametrize(("raw", "shown"), HOSTILE)
def test_visible_escapes_what_could_act(raw: str, shown: str) -> None:
    assert shown in visible(raw)


def test_plain_text_is_unchanged() -> None:
    text = "Objednávka ORD-1 — 99 € ✓ 日本"
    assert visible(text) == text and term_text(text) == text


@settings(max_examples=500)
@given(ANY_TEXT)
def test_terminal_output_holds_no_control_characters(text: str) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80, color_system=None)
    console.print(term_text(text), highlight=False, soft_wrap=True)
    printed = out.getvalue()
    assert printed.endswith("\n") and "\n" not in printed[:-1]  # one line: no fake lines
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in printed[:-1])
    assert not any(c in printed for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    printed.encode("utf-8")


def test_rich_markup_in_model_text_is_not_interpreted() -> None:
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(term_text("[bold]x[/bold]"))
    assert "[bold]x[/bold]" in out.getvalue()


@settings(max_examples=500)
@given(ANY_TEXT)
def test_junit_text_always_parses_back(text: str) -> None:
    root = ET.Element("t", name=xml_text(text))
    root.text = xml_text(text)
    ET.fromstring(ET.tostring(root, encoding="unicode").encode("utf-8"))


@settings(max_examples=300)
@given(ANY_TEXT)
def test_markdown_pieces_are_encodable_and_one_line(text: str) -> None:
    for piece in (md_text(text), html_text(text)):
        piece.encode("utf-8")
        assert "\n" not in piece and "\r" not in piece
    block = md_code_block(text)
    block.encode("utf-8")
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in block)

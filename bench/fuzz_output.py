"""Fuzz what toolproof writes and shows with hostile model text (hypothesis).

Every example is text drawn from the whole of Unicode (lone surrogates,
C0/C1 controls, escape sequences, bidi controls, U+FFFE/U+FFFF) plus JSON
values with NaN and ±Infinity. For each, it checks:

- records: the line a RecordWriter writes is valid UTF-8 JSON with no NaN,
  and reads back as the same record (NaN and ±Infinity as null);
- JSON reports: ``dumps`` output is valid UTF-8 JSON with no NaN;
- terminal: the printed text is one line with no control or bidi character;
- Markdown: inline text is one line, and every piece encodes as UTF-8;
- JUnit: a gate result whose case ID, reasons and diff are the text parses back.

    python bench/fuzz_output.py [--examples 100000]

Prints the examples tried and the failures of each check (target: 0).
"""

from __future__ import annotations

import argparse
import io
import json
import time
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from toolproof._shared.json_text import dump_model, dumps, finite
from toolproof.records._read import _parse_line
from toolproof.report._escape import html_text, md_code_block, md_text, term_text, xml_text
from toolproof.types import Record, Response

TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
HOSTILE = st.sampled_from(
    ["\x1b[2J", "\x1b]8;;http://x\x1b\\", "\r✓ passed", "\n✓ passed", "\u202e", "\ud800", "\ufffe"]
)
PIECE = st.lists(TEXT | HOSTILE, max_size=4).map("".join)
VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | PIECE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(PIECE, inner, max_size=3),
    max_leaves=8,
)
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

failures: Counter[str] = Counter()
#: The first few failing examples of each check, printed at the end to be looked at.
failing: dict[str, list[str]] = {}
current: list[str] = [""]
tried = 0


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, parse_constant=refuse)


def _fail(name: str, why: str) -> None:
    failures[name] += 1
    kept = failing.setdefault(name, [])
    if len(kept) < 3:
        kept.append(f"{why}: {current[0]}")


def _check(name: str, ok: bool) -> None:
    if not ok:
        _fail(name, "check failed")


def _safe(fn: Any, name: str) -> None:
    try:
        _check(name, bool(fn()))
    except Exception as exc:
        _fail(name, f"{type(exc).__name__}: {exc}"[:300])


def _records(text: str, value: Any) -> bool:
    record = Record(case_id=text or "c", request=value, response=Response(text=text))
    line = dump_model(record, exclude_none=True)
    line.encode("utf-8")
    _strict(line)
    back = _parse_line("fuzz.jsonl", 1, line + "\n")
    # the same record, with every NaN and ±Infinity read back as null (None)
    return back == Record.model_validate(finite(record.model_dump()))


def _terminal(text: str) -> bool:
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(
        term_text(text), highlight=False, soft_wrap=True
    )
    shown = out.getvalue()[:-1]
    shown.encode("utf-8")
    return "\n" not in shown and not any(
        ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in BIDI for c in shown
    )


def _markdown(text: str) -> bool:
    pieces = [md_text(text), html_text(text)]
    for p in [*pieces, md_code_block(text)]:
        p.encode("utf-8")
    return all("\n" not in p for p in pieces)


def _junit(text: str) -> bool:
    root = ET.Element("testsuites", name=xml_text(text))
    case = ET.SubElement(root, "testcase", name=xml_text(text))
    ET.SubElement(case, "failure", message=xml_text(text)).text = xml_text(text)
    ET.fromstring(ET.tostring(root, encoding="unicode").encode("utf-8"))
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000)
    args = parser.parse_args()

    @settings(
        max_examples=args.examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(PIECE, VALUE)
    def fuzz(text: str, value: Any) -> None:
        global tried
        tried += 1
        current[0] = ascii((text, value))[:400]
        _safe(lambda: _records(text, value), "records round trip")
        _safe(lambda: (s := dumps(value)) and (s.encode("utf-8"), _strict(s)), "JSON report")
        _safe(lambda: _terminal(text), "terminal")
        _safe(lambda: _markdown(text), "markdown")
        _safe(lambda: _junit(text), "junit")

    started = time.perf_counter()
    fuzz()
    elapsed = time.perf_counter() - started
    print(f"examples tried: {tried} in {elapsed:.0f} s")
    for name in ("records round trip", "JSON report", "terminal", "markdown", "junit"):
        print(f"  {name:<20} failures: {failures[name]}")
    for name, kept in failing.items():
        print(f"first failures of {name}:")
        for line in kept:
            print(f"  {line}")


if __name__ == "__main__":
    main()

"""Regex engines for untrusted patterns and input: Python's re, google-re2, regex with a timeout.

Suite patterns (the `regex` matcher, schema `pattern`, mock rules) come from
pull requests, and the text they are matched against comes from a model. A
backtracking engine can take exponential time on patterns like ``(a+)+$``.
This script prints, for each engine:

- compile time and match time on the patterns of ordinary suites;
- the time of a pathological pattern on a growing input (re is capped at a
  small size, since it grows exponentially);
- whether the engine accepts the Python-only syntax suites may use.

    pip install regex   # the engine compared here; toolproof itself does not need it
    python bench/regex_engines.py [--reps 20000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

ORDINARY = [
    (r"^ORD-[0-9]{6}$", "ORD-104821"),
    (r"[A-Z]{2}\d{3} ?\d{2}", "CZ110 00"),
    (r"(?i)refund(ed)? .* order", "Refunded the ORDER"),
    (r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?", "2026-09-19T10:00"),
    (r"[\w.+-]+@[\w-]+\.[\w.]+", "petra.horakova@example.cz"),
]
SYNTAX = {
    "backreference": r"(a)\1",
    "lookahead": r"a(?=b)",
    "possessive": r"a++b",
    "unicode class": r"\w+",
    "named group (?P<n>)": r"(?P<n>a)",
}
EVIL = r"(a+)+$"


def _time(fn: Callable[[], Any], reps: int) -> float:
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps * 1e6  # µs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20000)
    args = parser.parse_args()

    import re

    import re2  # type: ignore[import-not-found]
    import regex  # type: ignore[import-not-found]

    engines: dict[str, tuple[Callable[[str], Any], Callable[[Any, str], Any]]] = {
        "re": (re.compile, lambda p, s: p.fullmatch(s)),
        "re2": (re2.compile, lambda p, s: p.fullmatch(s)),
        "regex+timeout": (regex.compile, lambda p, s: p.fullmatch(s, timeout=0.1)),
    }
    print(f"ordinary suite patterns, mean of {args.reps} calls (µs)")
    print(f"{'engine':<15}{'compile':>10}{'match':>10}")
    for name, (comp, match) in engines.items():
        c = sum(_time(lambda pat=pat, comp=comp: comp(pat), args.reps // 10) for pat, _ in ORDINARY)
        compiled = [(comp(pat), text) for pat, text in ORDINARY]
        m = sum(_time(lambda p=p, t=t, match=match: match(p, t), args.reps) for p, t in compiled)
        print(f"{name:<15}{c / len(ORDINARY):>10.2f}{m / len(ORDINARY):>10.2f}")
        if name == "re":
            re.purge()  # so that re's cache does not hide its compile time next round

    print(f"\npathological {EVIL!r} against 'a'*n + 'b' (seconds; 'timeout' = stopped by the 0.1 s budget)")
    print(f"{'n':>6}" + "".join(f"{name:>16}" for name in engines))
    for n in (16, 20, 22, 24, 10_000, 1_000_000):
        text = "a" * n + "b"
        row = f"{n:>6}"
        for name, (comp, match) in engines.items():
            if name == "re" and n > 24:
                row += f"{'(skipped)':>16}"
                continue
            p = comp(EVIL)
            start = time.perf_counter()
            try:
                match(p, text)
                row += f"{time.perf_counter() - start:>16.4f}"
            except TimeoutError:
                row += f"{'timeout ' + format(time.perf_counter() - start, '.3f'):>16}"
        print(row)

    print("\nsyntax accepted")
    for label, pat in SYNTAX.items():
        row = f"{label:<22}"
        for comp, _ in engines.values():
            try:
                comp(pat)
                row += f"{'yes':>16}"
            except Exception:
                row += f"{'no':>16}"
        print(row)


if __name__ == "__main__":
    main()

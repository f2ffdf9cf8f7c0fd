"""The YAML reader: libyaml's fast path gives what the pure reader gives, and the bounds hold.

``load_yaml`` composes with libyaml when PyYAML has it and falls back to the
pure reader for anything libyaml refuses or that nests too deep. These tests
read the same texts both ways: wherever the fast path gives an answer, it is
the pure reader's answer (same data, same types, same positions); wherever
the pure reader refuses a text, the fast path leaves it to the pure reader,
so the one located error is the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.security.corpus import ENTRIES, billion_laughs
from toolproof.errors import SuiteError
from toolproof.suite import _yaml
from toolproof.suite._yaml import load_yaml
from toolproof.trust import DEFAULT_TRUST, Trust

ROOT = Path(__file__).resolve().parents[2]

needs_libyaml = pytest.mark.skipif(_yaml._CLoader is None, reason="PyYAML without libyaml")


def _pure(text: str, trust: Trust = DEFAULT_TRUST) -> tuple[str, Any]:
    try:
        data, positions = _yaml._load_pure(text, "f.yaml", trust)
    except SuiteError as exc:
        return "error", str(exc)
    return "ok", (repr(data), positions)  # repr: 1, 1.0 and True differ; NaN equals itself


def _fast(text: str, trust: Trust = DEFAULT_TRUST) -> tuple[str, Any] | None:
    """The fast path's answer, or None when it hands the text to the pure reader."""
    got = _yaml._load_c(text, "f.yaml", trust)
    if got is None:
        return None
    data, positions = got
    return "ok", (repr(data), positions)


def _same(text: str, trust: Trust = DEFAULT_TRUST) -> tuple[str, Any]:
    """Both readers on ``text``; the fast one must agree or step aside. The pure answer."""
    pure = _pure(text, trust)
    fast = _fast(text, trust)
    if pure[0] == "error":
        assert fast is None, f"libyaml accepted what the pure reader refuses: {pure[1]}"
    elif fast is not None:
        assert fast == pure
    # and load_yaml itself says what the pure reader says
    try:
        data, positions = load_yaml(text, "f.yaml", trust)
    except SuiteError as exc:
        assert pure == ("error", str(exc))
    else:
        assert pure == ("ok", (repr(data), positions))
    return pure


def _repo_yaml() -> list[Path]:
    skip = {".venv", ".git", "node_modules", "runs"}
    return sorted(
        p
        for pattern in ("*.yaml", "*.yml")
        for p in ROOT.rglob(pattern)
        if not skip.intersection(p.relative_to(ROOT).parts)
    )


@needs_libyaml
def test_the_example_suite_is_read_the_same_both_ways() -> None:
    text = (ROOT / "examples" / "support" / "suite.yaml").read_text("utf-8")
    assert _fast(text) is not None  # the fast path is taken
    assert _same(text)[0] == "ok"


@needs_libyaml
@pytest.mark.parametrize("path", _repo_yaml(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_of_the_project_is_read_the_same_both_ways(path: Path) -> None:
    _same(path.read_text("utf-8"))


@needs_libyaml
@pytest.mark.parametrize("entry", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_hostile_suites_are_read_the_same_both_ways(entry: Any, tmp_path: Path) -> None:
    _, build, _ = entry
    root, outside = tmp_path / "suite", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    build(root, outside)
    for path in sorted(root.rglob("*.yaml")):
        _same(path.read_text("utf-8"))


TRICKY = [
    # YAML 1.2 core schema, not 1.1
    "a: 12:30\nb: 0777\nc: 0o17\nd: 0x1F\ne: 1_000\nf: 0b101\ng: 1e-6\nh: yes\ni: 2026-09-20\n",
    "a: .inf\nb: -.Inf\nc: .NaN\nd: ~\ne: null\nf:\ng: TRUE\nh: +12\ni: -0.5\nj: 1.\n",
    "a: !!str 12\nb: !!int '7'\nc: !!float '1'\nd: !!bool yes\ne: !!null ''\n",
    "a: !!binary aGVsbG8=\nb: !!timestamp 2026-09-20\n",
    "x: !custom 1\n",
    "x: !!python/name:os.system\n",
    # keys
    "1: a\n2.5: b\ntrue: c\n~: d\n",
    "? [a, b]\n: c\n",
    "? {a: 1}\n: c\n",
    "a: 1\na: 2\n",
    "'1': a\n1: b\n",
    # anchors, aliases, merges
    "base: &b {x: 1, y: 2}\nuse: {<<: *b, y: 3}\n",
    "a: &a {x: 1}\nb: &b {y: 2}\nc: {<<: [*a, *b], z: 3}\n",
    "c: {<<: {inline: 1}, z: 3}\n",
    "a: &x [1, 2]\nb: *x\nc: [*x, *x]\n",
    "a: *nothing\n",
    "a: &x 1\nb: &x 2\nc: *x\n",
    "x: &x [*x]\n",
    "x: &x {k: *x}\n",
    billion_laughs(),
    "a: &a {<<: {k: 1}}\nb: {<<: *a}\n",
    # scalars and styles
    "a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\nc: |-\n  keep\n\nd: |+\n  tail\n\n",
    "a: 'it''s'\nb: \"tab\\there \\u00e9 \\x41\"\nc: plain text: with colon\n",
    'a: "multi\n  line\n\n  quoted"\nb: plain\n  continued\n',
    "a: [a:1, b: 2, 'c':3]\nb: {a:1}\nc: [a?b, ?x]\n",
    "- a\n- - b\n  - c\n- k: v\n  w: x\n",
    "a: é ü ☃ 😀\nb: '😀😀': 1\n",
    "k: v # comment\n# only a comment\n",
    # line breaks, BOM, whitespace
    "a: 1\r\nb:\r\n  - x\r\n  - y\r\n",
    "\ufeffa: 1\nb: 2\n",
    "a: 1\x85b: 2\n",
    "a: x\u2028y\nb: 2\n",
    "a:\tb\n",
    "a:\n\t- b\n",
    "a: 1\n  b: 2\n",
    "a: [1, 2\n",
    "a: {b: 1\n",
    "a: 'open\n",
    "- a\nb: c\n",
    "",
    "# nothing\n",
    "---\n",
    "--- 1\n--- 2\n",
    "---\na: 1\n...\n",
    "%YAML 1.2\n---\na: 1\n",
    "%YAML 1.1\n---\na: 1\n",
    "%YAML 2.0\n---\na: 1\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!thing 1\n",
    "%FOO bar\n---\na: 1\n",
    "a: 1\x07\n",
    "a: \x00\n",
    "a: @reserved\n",
    "a: `reserved\n",
    "a: !<tag:yaml.org,2002:str> 5\n",
    "&anchor a: 1\n",
    "a: & 1\n",
    "[1, 2]: x\n",
    "'" + "k" * 1100 + "': 1\n",
    "k" * 1100 + ": 1\n",
    "a: " + "x" * 100_000 + "\n",
    "just a scalar\n",
    "42\n",
    "- 1\n- 2\n",
]


@needs_libyaml
@pytest.mark.parametrize("text", TRICKY, ids=[repr(t[:30]) for t in TRICKY])
def test_tricky_texts_are_read_the_same_both_ways(text: str) -> None:
    _same(text)


def _flow(depth: int) -> str:
    """A document nested ``depth`` levels (the root mapping is level 1) in flow style."""
    return "a: " + "[" * (depth - 2) + "1" + "]" * (depth - 2) + "\n"


def _block(depth: int) -> str:
    """A document nested ``depth`` levels in block style."""
    return "".join("  " * i + f"k{i}:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "v\n"


@needs_libyaml
@pytest.mark.parametrize("shape", [_flow, _block])
@pytest.mark.parametrize("limit", [5, 100])
def test_depth_bound_holds_on_the_fast_path(shape: Any, limit: int) -> None:
    trust = Trust(max_depth=limit)
    at_limit = shape(limit)
    assert _fast(at_limit, trust) is not None  # read in C
    assert _same(at_limit, trust)[0] == "ok"
    beyond = shape(limit + 1)
    assert _fast(beyond, trust) is None  # handed to the pure reader, which locates it
    status, message = _same(beyond, trust)
    assert status == "error"
    assert f"invalid YAML: nested deeper than {limit} levels" in message
    assert message.startswith("f.yaml:")


@needs_libyaml
def test_an_alias_counts_where_it_is_written_not_where_its_anchor_is() -> None:
    trust = Trust(max_depth=5)
    # the alias at level 5, its anchor's content at level 3: read, and in C
    at_limit = "a: &x [1]\nb: [[[*x]]]\n"
    assert _fast(at_limit, trust) is not None
    assert _same(at_limit, trust)[0] == "ok"
    # the anchor deep, the alias shallow
    shallow = "a: [[&x [1]]]\nb: *x\n"
    assert _fast(shallow, trust) is not None
    assert _same(shallow, trust)[0] == "ok"
    # the alias itself written one level too deep
    deep = "a: &x 1\nb: [[[[*x]]]]\n"
    assert _fast(deep, trust) is None
    assert _same(deep, trust)[0] == "error"


@needs_libyaml
def test_alias_and_merge_bounds_hold_on_the_fast_path() -> None:
    bomb = billion_laughs()
    status, message = _same(bomb)
    assert status == "error" and "aliases expand to more than 100000 values" in message
    small = Trust(max_alias_nodes=3)
    aliases = "a: &a [1, 2]\nb: [*a, *a]\n"
    assert _same(aliases, small)[0] == "error"
    assert _same(aliases)[0] == "ok"
    merges = "b: {<<: [{x: 1}, {y: 2}, {z: 3}, {w: 4}, {v: 5}]}\n"  # no alias: the merge bound
    assert _fast(merges) is not None
    status, message = _same(merges, small)
    assert status == "error" and "merge keys ('<<') expand to more than 3 entries" in message


@needs_libyaml
def test_located_errors_name_the_line_and_column_as_before() -> None:
    assert _same("a: [1, 2\n") == (
        "error",
        "f.yaml:2:1: invalid YAML: expected ',' or ']', but got '<stream end>'",
    )
    assert _same("a: 1\na: 2\n") == ("error", "f.yaml:2:1: duplicate key 'a'")


def test_a_control_character_is_one_located_error_not_a_traceback() -> None:
    with pytest.raises(SuiteError) as caught:
        load_yaml("a: 1\nb: 'x\x07'\n", "f.yaml")
    assert str(caught.value) == "f.yaml:2:6: invalid YAML: character #x0007 is not allowed"


PIECES = [
    "a", "1", "0x1", "1e3", " ", "  ", "\n", "\n  ", "\n- ", ":", ": ", "- ", "?", "? ", ",", "[",
    "]", "{", "}", "'", '"', "#", " #", "&x ", "*x", "!", "!!str ", "|", "|-\n  ", ">", "\t",
    "%YAML 1.1\n", "---", "...", "\\", "@", "\r\n", "~", "<<: ", "\u2028", "\x85", "é", "\ufeff",
    "k: v\n", "'q' ", '"d\\n" ', "a?b", "x:y", ".inf", "12:30",
]  # fmt: skip


@needs_libyaml
def test_random_texts_are_read_the_same_both_ways() -> None:
    import random

    rng = random.Random(12)
    fast = 0
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 16)))
        _same(text)
        fast += _fast(text) is not None
    assert fast > 500  # the fast path did answer many of them


def test_the_fast_path_leaves_every_character_the_pure_reader_refuses_to_it() -> None:
    from yaml.reader import Reader

    extra = set("\t\ufeff\x85\u2028\u2029")
    differ = [
        hex(code)
        for code in range(0x110000)
        if bool(_yaml._ONLY_PURE_CHARACTER.match(chr(code)))
        != (bool(Reader.NON_PRINTABLE.match(chr(code))) or chr(code) in extra)
    ]
    assert differ == []

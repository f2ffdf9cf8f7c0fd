"""toolproof.trust: paths inside the suite folder, capped reads, bounded JSON."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given as for_all
from hypothesis import strategies as st

from toolproof.trust import (
    TooDeep,
    UnsafePath,
    check_command,
    has_long_digits,
    loads_json,
    read_capped,
    resolve_inside,
)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("/etc/passwd", "absolute"),
        ("~/.netrc", "absolute"),
        ("C:/x", "absolute"),
        ("../x", "'..'"),
        ("a/../../x", "'..'"),
        ("a\\..\\..\\x", "'..'"),
        ("", "empty"),
        ("a\x00b", "NUL"),
    ],
)
def test_unsafe_names_are_refused(tmp_path: Path, name: str, reason: str) -> None:
    with pytest.raises(UnsafePath, match=reason):
        resolve_inside(tmp_path, name)


def test_links_may_point_inside_but_not_out(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.txt").write_text("a")
    os.symlink(root / "data" / "a.txt", root / "inside.txt")
    os.symlink(tmp_path, root / "up")
    assert resolve_inside(root, "inside.txt") == root / "inside.txt"
    assert resolve_inside(root, "data/a.txt") == root / "data" / "a.txt"
    (tmp_path / "secret.txt").write_text("s")
    with pytest.raises(UnsafePath, match="symbolic link"):
        resolve_inside(root, "up/secret.txt")
    # a link out and back in again ends inside, which is allowed
    assert resolve_inside(root, "up/suite/data/a.txt") == root / "up/suite/data/a.txt"


def test_reads_are_capped_and_regular_files_only(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 10)
    assert read_capped(tmp_path / "f", 10) == b"x" * 10
    with pytest.raises(UnsafePath, match="larger than the limit of 9 bytes"):
        read_capped(tmp_path / "f", 9)
    os.mkfifo(tmp_path / "p")
    with pytest.raises(UnsafePath, match="not a regular file"):
        read_capped(tmp_path / "p", 10)  # refused before open: a FIFO would block
    with pytest.raises(UnsafePath, match="folder"):
        read_capped(tmp_path, 10)


def test_proc_files_that_report_size_zero_are_still_capped() -> None:
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc here")
    assert os.stat(status).st_size == 0
    with pytest.raises(UnsafePath, match="larger than the limit"):
        read_capped(status, 10)


def test_json_depth_is_bounded_without_recursion_error() -> None:
    assert loads_json("[[1]]", 2) == [[1]]
    with pytest.raises(TooDeep):
        loads_json("[[[1]]]", 2)
    with pytest.raises(TooDeep):
        loads_json("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        "[1e400, -0, -0.0, 0.1e-400, 1.0, 12345678901234567890123]",
        '["\\ud800", "\\ud83d\\ude00", NaN, Infinity]',
        '{"deep": ' + "[" * 60 + "]" * 60 + "}",
    ],
)
def test_loads_json_reads_what_json_loads_reads(text: str) -> None:
    expected = json.loads(text)
    for given in (text, text.encode("utf-8"), text.encode("utf-16")):
        value = loads_json(given)
        assert repr(value) == repr(expected)  # NaN, -0.0 and int/float kinds included


def test_json_depth_is_checked_whatever_the_brackets_inside_strings() -> None:
    # more brackets than the limit, but shallow: accepted
    assert loads_json('["' + "[" * 200 + '"]', 2) == ["[" * 200]
    # deep, with the brackets counted exactly at the limit and one more
    assert loads_json("[" * 5 + "]" * 5, 5) == [[[[[]]]]]
    with pytest.raises(TooDeep):
        loads_json("[" * 6 + "]" * 6, 5)
    with pytest.raises(TooDeep):
        loads_json(("[" * 6 + "]" * 6).encode("utf-16"), 5)


@pytest.mark.parametrize(
    "argv",
    [
        ("python", "server.py"),
        ("python", "-u", "server.py", "--port=0"),
        ("./run.sh",),
        ("node", "dist/server.js", "--root", "data"),
    ],
)
def test_commands_that_run_the_folders_own_files_pass(tmp_path: Path, argv: tuple[str]) -> None:
    for name in ("server.py", "run.sh", "dist/server.js"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "data").mkdir()
    check_command(tmp_path, argv)


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (("python", "-m", "some_module"), "-m runs code given on the command line"),
        (("npx", "-y", "@scope/server"), "does not run a file of the suite's folder"),
        (("python", "/srv/server.py"), "absolute path"),
        (("python", "../server.py"), "goes up with '..'"),
        (("python", "server.py", "--root=/etc"), "absolute path"),
        (("/usr/bin/python3", "server.py"), "absolute path"),
        (("~/bin/server",), "absolute path"),
        (("./missing.sh",), "not a file in the suite's folder"),
        ((), "empty"),
    ],
)
def test_commands_that_reach_outside_are_refused(
    tmp_path: Path, argv: tuple[str, ...], reason: str
) -> None:
    (tmp_path / "server.py").write_text("")
    with pytest.raises(UnsafePath, match=reason):
        check_command(tmp_path, argv)


def test_a_command_file_that_links_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "server.py").symlink_to(outside)
    with pytest.raises(UnsafePath, match="outside the suite's folder"):
        check_command(tmp_path / "suite", ("python", "server.py"))


_DIGIT_RUN = re.compile("[0-9]{19}")


@for_all(st.text(alphabet=st.sampled_from("0123456789a ١😀\ud800\x00"), max_size=60))
def test_long_digit_runs_are_found_as_a_regular_expression_finds_them(text: str) -> None:
    expected = _DIGIT_RUN.search(text) is not None
    assert has_long_digits(text) is expected
    assert has_long_digits(text.encode("utf-8", "surrogatepass")) is expected
    raw = text.encode("utf-16", "surrogatepass")  # bytes are searched as they are
    assert has_long_digits(raw) is (re.search(b"[0-9]{19}", raw) is not None)


def test_a_file_checked_once_for_long_digits_reads_each_line_alike() -> None:
    lines = ['{"n": 12345678901234567890123}', '{"n": 1.5, "s": "ž"}', "[1, 2]"]
    checked = not has_long_digits("\n".join(lines))
    for line in lines:
        assert repr(loads_json(line, digits_checked=checked)) == repr(json.loads(line))
    assert repr(loads_json(lines[1], digits_checked=True)) == repr(json.loads(lines[1]))

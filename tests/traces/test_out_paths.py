"""traces import --out: a user's file or folder is never overwritten, and a bad path is a located error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.traces import Redactor, import_traces

FIXTURES = Path(__file__).parent / "fixtures"
TRACES = FIXTURES / "openinference.spans.jsonl"


def _import(sources: list[Path], out: Path, **kw: object) -> object:
    return import_traces(sources, out, label="t", redactor=Redactor(), **kw)  # type: ignore[arg-type]


def test_force_never_deletes_the_traces_being_imported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(TRACES, data / "a.jsonl")
    with pytest.raises(UserError, match="being imported"):
        _import([data], data, force=True)
    assert (data / "a.jsonl").read_bytes() == TRACES.read_bytes()
    # a source file named inside the out folder, too
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(TRACES, out / "b.jsonl")
    with pytest.raises(UserError, match="being imported"):
        _import([out / "b.jsonl"], out, force=True)
    assert (out / "b.jsonl").exists()


def test_an_out_under_a_file_is_refused_before_reading(tmp_path: Path) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("keep")
    with pytest.raises(UserError, match="is a file"):
        _import([TRACES], mine / "out")
    assert mine.read_text() == "keep"


def test_force_replaces_a_folder_but_never_a_users_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("keep")
    for force in (False, True):
        with pytest.raises(UserError, match="is a file, not a folder"):
            _import([TRACES], mine, force=force)
    assert mine.read_text() == "keep"
    old = tmp_path / "old"
    old.mkdir()
    (old / "stale.txt").write_text("x")
    _import([TRACES], old, force=True)
    assert not (old / "stale.txt").exists() and (old / "cases.jsonl").exists()


def test_force_replaces_a_link_not_the_folder_it_points_to(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "mine.txt").write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(target)
    _import([TRACES], link, force=True)
    assert (target / "mine.txt").read_text() == "keep"
    assert not link.is_symlink() and (link / "cases.jsonl").exists()
    broken = tmp_path / "broken"
    broken.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UserError, match="broken symbolic link"):
        _import([TRACES], broken)


def test_force_never_deletes_the_working_folder_or_one_above_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "work" / "here"
    here.mkdir(parents=True)
    (here / "precious.txt").write_text("keep")
    monkeypatch.chdir(here)
    for out in (Path("."), Path(".."), here):
        with pytest.raises(UserError, match="working folder"):
            _import([TRACES], out, force=True)
    assert (here / "precious.txt").read_text() == "keep"

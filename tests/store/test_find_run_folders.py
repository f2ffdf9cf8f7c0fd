"""find_run_folders: the runs of a run's judges (under its folder) are not runs of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import UserError
from toolproof.store._store import find_run_folders


def _run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{}")
    (folder / "records.jsonl").write_text("")
    return folder


def test_a_judge_run_inside_a_run_folder_is_left_to_its_run(tmp_path: Path) -> None:
    a = _run(tmp_path / "runs" / "a")
    _run(a / "judges" / "judge-20261204T000000Z")
    b = _run(tmp_path / "runs" / "nested" / "b")
    assert find_run_folders([tmp_path / "runs"]) == [a, b]


def test_a_run_folder_given_by_name_is_taken_as_it_is(tmp_path: Path) -> None:
    judge = _run(_run(tmp_path / "a") / "judges" / "judge-1")
    assert find_run_folders([judge]) == [judge]


def test_a_folder_with_no_run_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no run folder"):
        find_run_folders([tmp_path / "empty"])

"""Writing an output file where the user named a folder or an unwritable place is a
one-line error naming the path, never a traceback, and nothing there is changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolproof._shared.safe_io import UnsafePath, open_write, save
from toolproof.errors import UserError


def test_open_write_refuses_a_folder_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    with pytest.raises(UnsafePath, match="is a folder, not a regular file"):
        open_write(folder)
    assert folder.is_dir() and not any(folder.iterdir())


def test_save_to_a_folder_is_a_user_error(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    with pytest.raises(UserError, match=r"reports: '.*reports' is a folder, not a regular file"):
        save(folder, "## report\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file permissions")
def test_save_into_a_read_only_folder_is_a_user_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(UserError, match="cannot write: Permission denied"):
            save(folder / "report.md", "## report\n")
    finally:
        folder.chmod(0o700)


def test_save_to_a_full_device_is_a_user_error() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(UserError, match="/dev/full"):
        save("/dev/full", "x")


def test_a_report_is_never_written_over_a_run_folders_own_files(tmp_path: Path) -> None:
    from toolproof._shared.safe_io import save_report

    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    (run / "records.jsonl").write_text("kept\n")
    for name in ("records.jsonl", "manifest.json", "events.jsonl"):
        with pytest.raises(UserError, match="a file of the run folder"):
            save_report(run / name, "<html>")
    assert (run / "records.jsonl").read_text() == "kept\n"
    assert (run / "manifest.json").read_text() == "{}"
    assert not (run / "events.jsonl").exists()
    save_report(run / "report.html", "<html>")  # a report of its own in the folder is fine
    loose = tmp_path / "records.jsonl"  # no manifest beside it: not a run's file
    save_report(loose, "x")
    assert loose.read_text() == "x"

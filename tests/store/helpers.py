"""Run folders made from the example suite's recorded answers, without running a model."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from toolproof.run import Manifest
from toolproof.run._manifest import (
    TargetEntry,
    system_fingerprint,
    tools_fingerprint,
    write_manifest,
)
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Suite

ROOT = Path(__file__).resolve().parents[2]
SUITE_DIR = ROOT / "examples" / "support"
RECORDS_A = SUITE_DIR / "records.jsonl"  # recorded:demo-model, 76 attempts
RECORDS_B = SUITE_DIR / "records-b.jsonl"  # recorded:demo-model-b, 69 attempts
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CODE = Trust(allow_code=True)  # the example suite replays gold actions through its Python


@cache
def suite() -> Suite:
    return load_suite(SUITE_DIR, CODE)


def run_folder(
    where: Path,
    name: str,
    records: Path = RECORDS_A,
    *,
    started: datetime = T0,
    days: int = 0,
) -> Path:
    """A run folder holding ``records`` with a manifest started ``days`` after ``started``."""
    s = suite()
    folder = where / name
    folder.mkdir(parents=True)
    shutil.copyfile(records, folder / "records.jsonl")
    target = "recorded:demo-model" if records == RECORDS_A else "recorded:demo-model-b"
    begin = started + timedelta(days=days)
    write_manifest(
        folder,
        Manifest(
            run_id=name,
            toolproof_version="0.1.0",
            suite_name=s.name,
            suite_version=s.version,
            suite_source=str(SUITE_DIR / "suite.yaml"),
            suite_fingerprint=s.fingerprint(),
            tools_fingerprint=tools_fingerprint(s),
            system_fingerprint=system_fingerprint(s),
            targets=[TargetEntry(spec=target)],
            repeats=1,
            started_at=begin,
            ended_at=begin + timedelta(minutes=3),
            status="complete",
            git_commit="0123456789abcdef0123456789abcdef01234567",
        ),
    )
    return folder

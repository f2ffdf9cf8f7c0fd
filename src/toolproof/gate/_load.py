"""Load a run for the gate: a run folder or a records file, with its suite."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolproof.errors import UserError
from toolproof.types import Record, Suite, Verdict

if TYPE_CHECKING:
    from toolproof.run import Manifest
    from toolproof.stats import Summary


@dataclass
class TargetRun:
    """One target's records, verdicts and summary within a run."""

    target: str
    records: list[Record]
    verdicts: list[Verdict]
    summary: Summary


@dataclass
class LoadedRun:
    """A run ready for the gate: its suite, manifest (if any) and targets."""

    source: Path
    suite: Suite
    manifest: Manifest | None
    targets: dict[str, TargetRun] = field(default_factory=dict)

    def fingerprint(self) -> dict[str, str | int | None]:
        """What the run was measured against, apart from the targets and their settings."""
        from toolproof.run._manifest import system_fingerprint, tools_fingerprint

        m = self.manifest
        attempts = max((r.attempt for t in self.targets.values() for r in t.records), default=0)
        return {
            "suite name": m.suite_name if m else self.suite.name,
            "suite version": m.suite_version if m else self.suite.version,
            "suite fingerprint": m.suite_fingerprint if m else self.suite.fingerprint(),
            "tool schemas": m.tools_fingerprint if m else tools_fingerprint(self.suite),
            "system prompt": m.system_fingerprint if m else system_fingerprint(self.suite),
            "repeats": m.repeats if m else attempts + 1,
            "toolproof version": m.toolproof_version if m else None,
        }


def load_run(path: str | Path, suite: str | Path | None = None, k: int | None = None) -> LoadedRun:
    """Load a run folder (records.jsonl + manifest.json) or a records file.

    The suite comes from ``suite`` or, failing that, from the manifest's
    ``suite_source`` (a manifest beside a records file counts too).
    """
    from toolproof._api import read_records_for
    from toolproof.run._records import latest_records

    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such run folder or records file")
    folder = p if p.is_dir() else p.parent
    records_path = p / "records.jsonl" if p.is_dir() else p
    manifest = _manifest(folder) if (folder / "manifest.json").is_file() else None
    if p.is_dir() and manifest is None:
        _refuse_unmanifested(p)
    loaded_suite = _suite(p, suite, manifest)
    # toolproof.records' reader: it also parses calls given only as raw argument text
    records = latest_records(read_records_for(loaded_suite, [records_path]))
    return run_from_records(loaded_suite, records, records_path, manifest=manifest, k=k)


def run_from_records(
    suite: Suite,
    records: list[Record],
    source: str | Path = "records",
    *,
    manifest: Manifest | None = None,
    k: int | None = None,
) -> LoadedRun:
    """Score records in memory into a run the gate can judge.

    Records without a target are grouped under the stem of ``source``.
    """
    run = LoadedRun(source=Path(source), suite=suite, manifest=manifest)
    _score(run, records, Path(source).stem, k)
    return run


def _refuse_unmanifested(folder: Path) -> None:
    """A folder without manifest.json is not a run toolproof wrote: never adopt its records."""
    raise UserError(
        f"{folder}: not a run folder: manifest.json is missing, so nothing says what was run "
        "or whether it finished; give a records file explicitly to score it"
    )


def _manifest(folder: Path) -> Manifest:
    from toolproof.run import read_manifest

    return read_manifest(folder)


def _suite(path: Path, suite: str | Path | None, manifest: Manifest | None) -> Suite:
    from toolproof.suite import load_suite

    if suite is not None:
        return load_suite(suite)
    source = manifest.suite_source if manifest is not None else None
    if source is None:
        raise UserError(f"{path}: give the suite with --suite (no manifest names it)")
    if not Path(source).exists():
        raise UserError(
            f"{path}: the manifest's suite {source} is not found from here; give --suite"
        )
    return load_suite(source)


def _score(run: LoadedRun, records: list[Record], stem: str, k: int | None) -> None:
    from toolproof.grade import Scorer
    from toolproof.stats import summarize

    known = {c.id for c in run.suite.cases}
    scorer = Scorer(run.suite)
    grouped: dict[str, list[Record]] = {}
    for r in records:
        if r.case_id not in known:
            raise UserError(f"{run.source}: record for unknown case '{r.case_id}'")
        grouped.setdefault(r.target or stem, []).append(r)
    for target, recs in grouped.items():
        verdicts = [v for v in (scorer.grade(r) for r in recs) if v is not None]
        for v in verdicts:
            v.target = target
        summary = summarize(run.suite, recs, verdicts, target=target, k=k)
        run.targets[target] = TargetRun(target, recs, verdicts, summary)
    if not run.targets:
        raise UserError(f"{run.source}: no records")

"""evaluate(): the only place where scoring meets I/O."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolproof.errors import SuiteError, UserError
from toolproof.grade import Scorer
from toolproof.judges import JUDGEMENTS_FILE, Judgement, read_judgements
from toolproof.judges._store import latest_judgements
from toolproof.records import iter_records
from toolproof.run import Manifest, read_manifest
from toolproof.run._manifest import system_fingerprint, tools_fingerprint
from toolproof.stats import Summary, summarize
from toolproof.suite import load_suite
from toolproof.types import Record, Suite, Verdict

#: The target of a record that names none and was not read from a file.
UNNAMED = "(unnamed)"
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"

RecordSource = str | Path | Record


@dataclass(frozen=True)
class TargetEvaluation:
    """One target's latest records, their verdicts and the summary of both."""

    target: str
    records: list[Record]
    verdicts: list[Verdict]
    summary: Summary


@dataclass
class Evaluation:
    """A suite's records, graded and summarised per target."""

    suite: Suite
    source: Path | None = None
    manifest: Manifest | None = None
    targets: dict[str, TargetEvaluation] = field(default_factory=dict)
    superseded: int = 0
    """Records replaced by a later record of the same case, target and attempt."""
    judgements: list[Judgement] = field(default_factory=list)
    """What LLM judges said about these records (a run folder's judgements.jsonl)."""

    @property
    def summaries(self) -> dict[str, Summary]:
        return {name: t.summary for name, t in self.targets.items()}

    @property
    def records(self) -> list[Record]:
        return [r for t in self.targets.values() for r in t.records]

    def fingerprint(self) -> dict[str, str | int | None]:
        """What the run was measured against, apart from the targets and their settings."""
        m = self.manifest
        attempts = max((r.attempt for r in self.records), default=0)
        return {
            "suite name": m.suite_name if m else self.suite.name,
            "suite version": m.suite_version if m else self.suite.version,
            "suite fingerprint": m.suite_fingerprint if m else self.suite.fingerprint(),
            "tool schemas": m.tools_fingerprint if m else tools_fingerprint(self.suite),
            "system prompt": m.system_fingerprint if m else system_fingerprint(self.suite),
            "repeats": m.repeats if m else attempts + 1,
            "toolproof version": m.toolproof_version if m else None,
        }


def evaluate(
    suite: Suite,
    records: Iterable[RecordSource] | RecordSource,
    *,
    manifest: Manifest | None = None,
    expected_states: Mapping[str, Any] | None = None,
    k: int | None = None,
    source: str | Path | None = None,
    targets: Iterable[str] = (),
) -> Evaluation:
    """Grade and summarise records against a suite.

    ``records`` are records files (paths) or :class:`Record` objects, in the
    order they were written. For each (case, target, attempt) only the last
    record counts. A record whose case the suite lacks is refused, with its
    file and line. A record that names no target takes the stem of the file it
    was read from, or :data:`UNNAMED` when it was handed over in memory.
    ``targets`` fixes the order of the targets in the result (others follow in
    order of appearance); ``k`` is the k of pass@k and pass^k.
    """
    del expected_states  # resolved by the scorer until it takes them as data
    latest: dict[tuple[str, str, int], Record] = {}
    total = 0
    for record in _read(suite, records):
        total += 1
        assert record.target is not None
        latest[(record.case_id, record.target, record.attempt)] = record
    grouped: dict[str, list[Record]] = {t: [] for t in targets}
    for record in latest.values():
        grouped.setdefault(record.target or UNNAMED, []).append(record)
    scorer = Scorer(suite)
    ev = Evaluation(
        suite=suite,
        source=Path(source) if source is not None else None,
        manifest=manifest,
        superseded=total - len(latest),
    )
    for target, recs in grouped.items():
        verdicts = [v for v in (scorer.grade(r) for r in recs) if v is not None]
        for v in verdicts:
            v.target = target
        summary = summarize(suite, recs, verdicts, target=target, k=k)
        ev.targets[target] = TargetEvaluation(target, recs, verdicts, summary)
    return ev


def _read(suite: Suite, sources: Iterable[RecordSource] | RecordSource) -> Iterator[Record]:
    known = {c.id for c in suite.cases}
    if isinstance(sources, str | Path | Record):
        sources = [sources]
    for item in sources:
        if isinstance(item, Record):
            if item.case_id not in known:
                raise UserError(f"record for unknown case '{item.case_id}'")
            yield item if item.target else item.model_copy(update={"target": UNNAMED})
            continue
        path = Path(item)
        for number, record in iter_records(path):
            if record.case_id not in known:
                raise SuiteError(
                    str(path),
                    f"record for unknown case '{record.case_id}'",
                    line=number,
                    path=("case_id",),
                )
            yield record if record.target else record.model_copy(update={"target": path.stem})


def records_path(path: str | Path) -> Path:
    """The records file of a run folder, or the file itself."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such run folder or records file")
    if p.is_dir():
        if not (p / RECORDS_FILE).is_file():
            raise UserError(f"{p}: not a run folder (no {RECORDS_FILE})")
        return p / RECORDS_FILE
    return p


def load_run(
    path: str | Path, suite: str | Path | Suite | None = None, *, k: int | None = None
) -> Evaluation:
    """Evaluate a run folder (records.jsonl + manifest.json) or a records file.

    The suite is ``suite`` or, failing that, the one the run's manifest names
    (a manifest beside a records file counts too).
    """
    file = records_path(path)
    manifest = read_manifest(file.parent) if (file.parent / MANIFEST_FILE).is_file() else None
    loaded = suite if isinstance(suite, Suite) else _suite(Path(path), suite, manifest)
    order = [t.spec for t in manifest.targets] if manifest is not None else []
    ev = evaluate(loaded, [file], manifest=manifest, k=k, source=file, targets=order)
    if not any(t.records for t in ev.targets.values()):
        raise UserError(f"{file}: no records")
    ev.targets = {n: t for n, t in ev.targets.items() if t.records}
    if (file.parent / JUDGEMENTS_FILE).is_file():
        ev.judgements = latest_judgements(read_judgements(file.parent / JUDGEMENTS_FILE))
    return ev


def _suite(path: Path, suite: str | Path | None, manifest: Manifest | None) -> Suite:
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

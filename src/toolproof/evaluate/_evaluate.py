"""evaluate(): the only place where scoring meets I/O."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolproof.errors import SuiteError, UserError
from toolproof.grade import (
    CaseCheck,
    ExpectedState,
    MissingExpectedState,
    Scorer,
    UngradableRecord,
    recovered_calls,
)
from toolproof.judges import JUDGEMENTS_FILE, Judgement, read_judgements
from toolproof.judges._store import latest_judgements
from toolproof.match import Embeddings, MissingEmbeddings
from toolproof.providers import TextEmbedder, load_embedder
from toolproof.records import iter_keys, iter_records
from toolproof.run import Manifest, read_manifest
from toolproof.run._manifest import system_fingerprint, tools_fingerprint, with_run_tools
from toolproof.stats import Summary, repaired_figures, summarize
from toolproof.suite import load_suite
from toolproof.trust import DEFAULT_TRUST, Trust
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
    repaired: TargetEvaluation | None = None
    """The same target with calls recovered from text counted as calls (semantic
    repair); None when no call was. ``verdicts`` and ``summary`` are raw."""


@dataclass
class Evaluation:
    """A suite's records, graded and summarised per target."""

    suite: Suite
    source: Path | None = None
    manifest: Manifest | None = None
    targets: dict[str, TargetEvaluation] = field(default_factory=dict)
    superseded: int = 0
    """Records replaced by a later record of the same case, target and attempt."""
    warnings: list[str] = field(default_factory=list)
    """Problems that change no figure but need a look (gold actions that failed)."""
    origins: dict[tuple[str, str, int], tuple[str, int]] = field(default_factory=dict)
    """(target, case, attempt) → (records file, line) of each record read from a file."""
    judgements: list[Judgement] = field(default_factory=list)
    """What LLM judges said about these records (a run folder's judgements.jsonl)."""
    scorer: Scorer | None = None
    """The scorer the verdicts came from: it renders their diffs (:meth:`diff`)."""

    def diff(self, verdict: Verdict) -> str:
        """Expected against actual for a failed verdict ("" for a pass)."""
        return self.scorer.diff(verdict) if self.scorer is not None else ""

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
            "tools from": _tools_from(m.tools_source if m else self.suite.tools_source),
            "system prompt": m.system_fingerprint if m else system_fingerprint(self.suite),
            "repeats": m.repeats if m else attempts + 1,
            "toolproof version": m.toolproof_version if m else None,
        }


def _tools_from(source: str | None) -> str:
    return "the suite" if source is None else f"--tools {source}"


def evaluate(
    suite: Suite,
    records: Iterable[RecordSource] | RecordSource,
    *,
    manifest: Manifest | None = None,
    expected_states: Mapping[str, ExpectedState] | None = None,
    k: int | None = None,
    source: str | Path | None = None,
    targets: Iterable[str] = (),
    keep_raw: bool = True,
    checks: Sequence[tuple[CaseCheck, frozenset[str] | None]] | None = None,
    trust: Trust = DEFAULT_TRUST,
) -> Evaluation:
    """Grade and summarise records against a suite.

    ``checks`` are the suite's own checks, loaded with the user's consent
    (``toolproof.run.load_checks(suite, allow_code=True)``); without them a
    declared check is noted as not run on each verdict it applies to.

    ``records`` are records files (paths) or :class:`Record` objects, in the
    order they were written. For each (case, target, attempt) only the last
    record counts. A record whose case the suite lacks is refused, with its
    file and line. A record that names no target takes the stem of the file it
    was read from, or :data:`UNNAMED` when it was handed over in memory.
    ``targets`` fixes the order of the targets in the result (others follow in
    order of appearance); ``k`` is the k of pass@k and pass^k. Expected end
    states computed from gold actions run the suite's Python, so they need
    ``trust.allow_code``.

    Files are read twice: first only each record's identity, to find the
    latest record of every attempt, then the latest records in full, one at a
    time. With ``keep_raw=False`` the records kept in the result lose their
    raw payloads (request, provider response, steps, end state) once graded,
    so memory does not grow with their size; :attr:`Evaluation.origins` says
    where each one can be read again.
    """
    from toolproof.run import expected_states as compute_states
    from toolproof.run import load_checks
    from toolproof.run._env import code_not_allowed

    if expected_states is None:
        # the gold actions are the suite's Python: run only with the user's consent
        expected_states = compute_states(suite, trust) if trust.allow_code else {}
    if checks is None and trust.allow_code:
        checks = load_checks(suite, allow_code=True)
    sources = [records] if isinstance(records, str | Path | Record) else list(records)
    winners, total = _latest(suite, sources)
    scorer = Scorer(suite, expected_states, checks)
    ev = Evaluation(
        suite=suite,
        source=Path(source) if source is not None else None,
        manifest=manifest,
        superseded=total - sum(len(w) for w in winners),
        warnings=[w for state in expected_states.values() for w in state.warnings],
        scorer=scorer,
    )
    embedder = _Embedder()
    grouped: dict[str, tuple[list[Record], list[Verdict]]] = {t: ([], []) for t in targets}
    repairs: dict[str, _Repairs] = {}
    for record, origin in _winning_records(sources, winners):
        target = record.target or UNNAMED  # always set by _winning_records
        try:
            verdict = _grade(scorer, record, embedder)
            raw = _grade(scorer, record, embedder, native=True) if verdict is not None else None
        except MissingExpectedState as exc:
            raise code_not_allowed(suite, f"case {exc.case_id}'s gold actions") from None
        except UngradableRecord as exc:
            if origin is None:
                raise
            raise SuiteError(origin[0], str(exc), line=origin[1]) from None
        recovered = recovered_calls(record) if raw is not None else 0
        if not keep_raw:
            record = _without_raw(record, owned=origin is not None)
        recs, verdicts = grouped.setdefault(target, ([], []))
        recs.append(record)
        if verdict is not None:
            # the headline is raw: a call printed as text counts as no call
            verdicts.append((raw or verdict)._replace(target=target))
            if raw is not None:
                rep = repairs.setdefault(target, _Repairs())
                rep.verdicts[len(verdicts) - 1] = verdict._replace(target=target)
                rep.calls += recovered
        if origin is not None:
            ev.origins[(target, record.case_id, record.attempt)] = origin
    for target, (recs, verdicts) in grouped.items():
        summary = summarize(suite, recs, verdicts, target=target, k=k, scorer=scorer)
        repaired = None
        if target in repairs:
            rep = repairs[target]
            fixed = [rep.verdicts.get(i, v) for i, v in enumerate(verdicts)]
            fixed_summary = summarize(suite, recs, fixed, target=target, k=k, scorer=scorer)
            repaired = TargetEvaluation(target, recs, fixed, fixed_summary)
            figures = repaired_figures(fixed_summary, rep.calls, len(rep.verdicts))
            summary = summary.model_copy(update={"repaired": figures})
        ev.targets[target] = TargetEvaluation(target, recs, verdicts, summary, repaired)
    return ev


@dataclass
class _Repairs:
    """A target's verdicts with semantic repair, where they differ from the raw ones."""

    verdicts: dict[int, Verdict] = field(default_factory=dict)
    """Index in the target's verdicts → the repaired verdict."""
    calls: int = 0


class _Embedder:
    """Sentence embeddings for the semantic matcher, loaded on the first need."""

    def __init__(self) -> None:
        self._embedder: TextEmbedder | None = None

    def fill(self, table: Embeddings, texts: Sequence[str]) -> None:
        if self._embedder is None:
            self._embedder = load_embedder()
        self._embedder.fill(table, texts)


def _grade(
    scorer: Scorer, record: Record, embedder: _Embedder, *, native: bool = False
) -> Verdict | None:
    """The record's verdict; texts compared by meaning are embedded first, here at the edge.

    ``native``: the raw verdict (calls recovered from text count as no call), or
    None when no call was recovered.
    """
    grade = scorer.grade_native if native else scorer.grade
    while True:
        try:
            return grade(record)
        except MissingEmbeddings as exc:
            before = len(scorer.embeddings.vectors)
            embedder.fill(scorer.embeddings, exc.texts)
            if len(scorer.embeddings.vectors) == before:  # pragma: no cover - a bug, not input
                raise


_Key = tuple[str, str, int]


def _latest(suite: Suite, sources: list[RecordSource]) -> tuple[list[set[int]], int]:
    """For each source, the positions (line numbers, or list indexes) of the latest records."""
    known = {c.id for c in suite.cases}
    latest: dict[_Key, tuple[int, int]] = {}
    total = 0
    for index, item in enumerate(sources):
        if isinstance(item, Record):
            if item.case_id not in known:
                raise UserError(f"record for unknown case '{item.case_id}'")
            latest[(item.case_id, item.target or UNNAMED, item.attempt)] = (index, 0)
            total += 1
            continue
        path = Path(item)
        for number, case_id, target, attempt in iter_keys(path):
            if case_id not in known:
                raise SuiteError(
                    str(path),
                    f"record for unknown case '{case_id}'",
                    line=number,
                    path=("case_id",),
                )
            latest[(case_id, target or path.stem, attempt)] = (index, number)
            total += 1
    winners: list[set[int]] = [set() for _ in sources]
    for index, position in latest.values():
        winners[index].add(position)
    return winners, total


def _winning_records(
    sources: list[RecordSource], winners: list[set[int]]
) -> Iterator[tuple[Record, tuple[str, int] | None]]:
    for item, wanted in zip(sources, winners, strict=True):
        if isinstance(item, Record):
            if wanted:
                yield (item if item.target else item.model_copy(update={"target": UNNAMED})), None
            continue
        path = Path(item)
        for number, record in iter_records(path, only=wanted):
            if not record.target:
                record = record.model_copy(update={"target": path.stem})
            yield record, (str(path), number)


def _without_raw(record: Record, *, owned: bool) -> Record:
    """The record without its raw payloads. One read from a file here is changed in place."""
    response = record.response
    if owned:
        record.request = record.steps = record.end_state = record.transcript = None
        if response is not None:
            response.raw = None
        return record
    return record.model_copy(
        update={
            "request": None,
            "steps": None,
            "end_state": None,
            "transcript": None,
            "response": response.model_copy(update={"raw": None}) if response else None,
        }
    )


def records_path(path: str | Path) -> Path:
    """The records file of a run folder, or the file itself."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such run folder or records file")
    if p.is_dir():
        if not (p / RECORDS_FILE).is_file():
            raise UserError(f"{p}: not a run folder (no {RECORDS_FILE})")
        if not (p / MANIFEST_FILE).is_file():
            # never adopt a folder's records: nothing says what was run or whether it finished
            raise UserError(
                f"{p}: not a run folder: {MANIFEST_FILE} is missing, so nothing says what was "
                f"run or whether it finished; name {p / RECORDS_FILE} itself to score it"
            )
        return p / RECORDS_FILE
    return p


def load_run(
    path: str | Path,
    suite: str | Path | Suite | None = None,
    *,
    k: int | None = None,
    keep_raw: bool = True,
    trust: Trust = DEFAULT_TRUST,
) -> Evaluation:
    """Evaluate a run folder (records.jsonl + manifest.json) or a records file.

    The suite is ``suite`` or, failing that, the one the run's manifest names
    (a manifest beside a records file counts too). When the run's tools
    replaced the suite's (``run --tools``), the tools it kept in its folder
    replace them again, so the records are graded against what was sent.
    """
    file = records_path(path)
    manifest = read_manifest(file.parent) if (file.parent / MANIFEST_FILE).is_file() else None
    loaded = suite if isinstance(suite, Suite) else _suite(Path(path), suite, manifest, trust)
    if manifest is not None:  # a run made with --tools is scored against the tools it sent
        loaded = with_run_tools(loaded, file.parent, manifest, trust)
    order = [t.spec for t in manifest.targets] if manifest is not None else []
    ev = evaluate(
        loaded,
        [file],
        manifest=manifest,
        k=k,
        source=file,
        targets=order,
        keep_raw=keep_raw,
        trust=trust,
    )
    if not any(t.records for t in ev.targets.values()):
        raise UserError(f"{file}: no records")
    ev.targets = {n: t for n, t in ev.targets.items() if t.records}
    if (file.parent / JUDGEMENTS_FILE).is_file():
        ev.judgements = latest_judgements(read_judgements(file.parent / JUDGEMENTS_FILE))
    return ev


def with_sent_tools(suite: Suite, files: Sequence[Path], trust: Trust = DEFAULT_TRUST) -> Suite:
    """The suite to grade these records files with: with the tools their run sent.

    A records file whose run replaced the suite's tools (``run --tools``) is
    graded against the tools kept in its run folder. Records of runs that
    sent different tools cannot be graded together: they are refused.
    """
    runs = [
        (file, read_manifest(file.parent) if (file.parent / MANIFEST_FILE).is_file() else None)
        for file in files
    ]
    replaced = [(file, m) for file, m in runs if m is not None and m.tools_source is not None]
    if not replaced:
        return suite
    fingerprints = {m.tools_fingerprint if m is not None else None for _, m in runs}
    if len(runs) > 1 and len(fingerprints) > 1:
        raise UserError(
            f"{replaced[0][0].parent}: its run sent other tools (--tools) than the other "
            "records given; score them one at a time"
        )
    file, manifest = replaced[0]
    return with_run_tools(suite, file.parent, manifest, trust)


def _suite(path: Path, suite: str | Path | None, manifest: Manifest | None, trust: Trust) -> Suite:
    if suite is not None:
        return load_suite(suite, trust)
    source = manifest.suite_source if manifest is not None else None
    if source is None:
        raise UserError(f"{path}: give the suite with --suite (no manifest names it)")
    if not Path(source).exists():
        raise UserError(
            f"{path}: the manifest's suite {source} is not found from here; give --suite"
        )
    return load_suite(source, trust)

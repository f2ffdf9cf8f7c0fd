"""evaluate(): the only place where scoring meets I/O."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolproof.errors import SuiteError, UserError
from toolproof.evaluate._failures import FailureLog, FileRecords, FileVerdicts, Segment
from toolproof.grade import (
    CaseCheck,
    ExpectedState,
    MissingExpectedState,
    Scorer,
    UngradableRecord,
    recovered_calls,
)
from toolproof.judges import (
    JUDGEMENTS_FILE,
    Calibration,
    Judgement,
    argument_decisions,
    read_judgements,
    suite_calibrations,
)
from toolproof.judges._file import latest_judgements
from toolproof.match import Embeddings, MissingEmbeddings
from toolproof.providers import TextEmbedder, load_embedder
from toolproof.records import iter_keys, iter_records
from toolproof.run import Manifest, read_manifest
from toolproof.run._manifest import system_fingerprint, tools_fingerprint, with_run_tools
from toolproof.stats import Summary, SummaryBuilder, repaired_figures
from toolproof.suite import load_suite
from toolproof.trust import DEFAULT_TRUST, Trust
from toolproof.types import Record, Suite, Verdict

#: The target of a record that names none and was not read from a file.
UNNAMED = "(unnamed)"
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"

RecordSource = str | Path | Record
#: Told of each latest record as it is graded: the record, its verdict, its file and line.
AttemptObserver = Callable[[Record, Verdict | None, tuple[str, int] | None], None]
#: A suite's own checks, each with the cases it applies to (None: every case).
Checks = Sequence[tuple[CaseCheck, frozenset[str] | None]]


@dataclass(frozen=True)
class EvaluationOptions:
    """How :func:`evaluate` (and :class:`EvaluationStream`) grades and keeps records.

    Each field is the keyword of the same name of :func:`evaluate`, where it is
    described; ``EvaluationOptions()`` is what no keyword gives. Give either the
    object (``options=``) or the keywords, not both.
    """

    manifest: Manifest | None = None
    expected_states: Mapping[str, ExpectedState] | None = None
    k: int | None = None
    source: str | Path | None = None
    targets: Sequence[str] = ()
    keep_raw: bool = True
    checks: Checks | None = None
    trust: Trust = DEFAULT_TRUST
    keep_records: bool = True
    judgements: Sequence[Judgement] = ()
    on_attempt: AttemptObserver | None = None

    def given(self, keywords: EvaluationOptions) -> EvaluationOptions:
        """These options, or ``keywords`` when these are the defaults; a TypeError when
        both were given (the object and some keyword)."""
        if keywords == _DEFAULTS:
            return self
        if self == _DEFAULTS:
            return keywords
        raise TypeError("give evaluate() its options either as options= or as keywords, not both")


_DEFAULTS = EvaluationOptions()


@dataclass(frozen=True)
class TargetEvaluation:
    """One target's latest records, their verdicts and the summary of both.

    From ``evaluate(..., keep_records=False)``, ``records`` and ``verdicts``
    are read (and graded) again from the records files each time they are
    iterated, and the summary's failures are kept in a temporary file.
    """

    target: str
    records: Sequence[Record]
    verdicts: Sequence[Verdict]
    summary: Summary
    repaired: TargetEvaluation | None = None
    """The same target with calls recovered from text counted as calls (semantic
    repair); None when no call was. ``verdicts`` and ``summary`` are raw."""
    rounds: int | None = None
    """An adaptive schedule's full rounds: the gate reads its rates over these attempt
    numbers only (None: every attempt)."""

    @property
    def gated(self) -> Sequence[Verdict]:
        """The verdicts the gate's rates read: those of the full rounds."""
        if self.rounds is None:
            return self.verdicts
        rounds = self.rounds
        return [v for v in self.verdicts if v.attempt < rounds]

    def pairs(self) -> Iterator[tuple[Record, Verdict | None]]:
        """Each record with its verdict (None for an unanswered attempt), one at a time."""
        if isinstance(self.verdicts, FileVerdicts):
            yield from self.verdicts.pairs()
            return
        by_attempt = {(v.case_id, v.attempt): v for v in self.verdicts}
        for r in self.records:
            yield r, by_attempt.get((r.case_id, r.attempt))


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
    max_attempt: int | None = None
    """The highest attempt number of any record (None: none was read)."""
    calibrations: list[Calibration] | None = None
    """The judge calibration records the suite names (``judge.calibration``), read with
    the records; the gate decides with them. None: not read."""

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
        attempts = (
            self.max_attempt
            if self.max_attempt is not None
            else max((r.attempt for r in self.records), default=0)
        )
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
    options: EvaluationOptions = _DEFAULTS,
    manifest: Manifest | None = None,
    expected_states: Mapping[str, ExpectedState] | None = None,
    k: int | None = None,
    source: str | Path | None = None,
    targets: Iterable[str] = (),
    keep_raw: bool = True,
    checks: Checks | None = None,
    trust: Trust = DEFAULT_TRUST,
    keep_records: bool = True,
    judgements: Sequence[Judgement] = (),
    on_attempt: AttemptObserver | None = None,
) -> Evaluation:
    """Grade and summarise records against a suite.

    ``on_attempt`` is told of each latest record as it is graded: the record,
    its headline verdict (None: not scored) and where it was read (file and
    line; None for a record handed over in memory). A history store notes
    its rows so, and reads no record again.

    ``judgements`` are what LLM judges said about these records; the answers of
    the ``argument_meaning`` judge decide ``{semantic: TEXT, judge: true}``
    arguments (without them such arguments are left undecided).

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

    Each target's summary is built as the records are graded, from counts.
    With ``keep_records=False`` nothing grows with the number of records but
    a few bytes per attempt: the result holds no records or verdicts (each
    target's ``records`` and ``verdicts`` read the files again when iterated),
    the failures wait in a temporary file, and :attr:`Evaluation.origins`
    stays empty.

    ``options``: all of the above as one :class:`EvaluationOptions`, instead of
    the keywords.
    """
    opts = options.given(
        EvaluationOptions(
            manifest=manifest, expected_states=expected_states, k=k, source=source,
            targets=tuple(targets), keep_raw=keep_raw, checks=checks, trust=trust,
            keep_records=keep_records, judgements=tuple(judgements), on_attempt=on_attempt,
        )
    )  # fmt: skip
    sources = [records] if isinstance(records, str | Path | Record) else list(records)
    winners, total = _latest(suite, sources)
    stream = EvaluationStream._made(suite, _prepared(suite, opts), opts)
    stream.ev.superseded = total - sum(_count(w) for w in winners)
    for record, origin in _winning_records(sources, winners, raw=opts.keep_raw):
        stream.add(record, origin)
    del winners  # the identities of every record: not needed once all are graded
    return stream.finish()


@dataclass(frozen=True)
class _Prepared:
    """What grading needs beside the records: expected states, checks, the initial state."""

    expected_states: Mapping[str, ExpectedState]
    checks: Checks | None
    initial: Any


def _warnings(states: Mapping[str, ExpectedState]) -> list[str]:
    """The failed gold actions of the expected states (of those computed, for stored ones)."""
    from toolproof.run._expected import StoredStates

    if isinstance(states, StoredStates):
        return states.warnings
    return [w for state in states.values() for w in state.warnings]


def _prepared(suite: Suite, options: EvaluationOptions) -> _Prepared:
    """What grading needs beside the records: expected states, checks, the initial state."""
    from toolproof.run import expected_states as compute_states
    from toolproof.run import load_checks
    from toolproof.run._env import load_initial_state

    expected_states, checks, trust = options.expected_states, options.checks, options.trust
    gold = any(c.end_state is not None and c.end_state.actions is not None for c in suite.cases)
    if expected_states is None and trust.allow_code and gold:
        # computed when a case is scored, and kept: see toolproof.run._expected
        from toolproof.run._expected import StoredStates, default_expected_dir

        stored = StoredStates(suite, trust, folder=default_expected_dir())
        if checks is None:
            checks = load_checks(suite, allow_code=True)
        return _Prepared(stored, checks, stored.initial())
    if expected_states is None:
        # the gold actions are the suite's Python: run only with the user's consent; an
        # empty list keeps the starting state, read as data
        unchanged = [
            c.id for c in suite.cases if c.end_state is not None and c.end_state.actions == []
        ]
        cases = None if trust.allow_code else unchanged
        expected_states = compute_states(suite, trust, cases=cases)
    # what records' state changes apply to; the expected states carry it when there are some
    initial = None
    if not any(s.initial is not None for s in expected_states.values()):
        initial = load_initial_state(suite, trust)
    if checks is None and trust.allow_code:
        checks = load_checks(suite, allow_code=True)
    return _Prepared(expected_states, checks, initial)


class EvaluationStream:
    """:func:`evaluate`, fed one record at a time: a run grades each record as it is written.

    The records given to :meth:`add` must be the latest of their attempts, each
    (case, target, attempt) once (a new run's records are): nothing here finds
    which record supersedes which. :meth:`finish` builds the summaries; the
    result is what :func:`evaluate` gives for the same records in the same order.
    The arguments are :func:`evaluate`'s; with ``load_embeddings=False``, a
    record whose grading needs sentence embeddings raises
    :class:`~toolproof.match.MissingEmbeddings` from :meth:`add` rather than
    loading the embedding model (the caller then evaluates the records after
    all, with :func:`evaluate`).
    """

    def __init__(
        self,
        suite: Suite,
        *,
        options: EvaluationOptions = _DEFAULTS,
        manifest: Manifest | None = None,
        expected_states: Mapping[str, ExpectedState] | None = None,
        k: int | None = None,
        source: str | Path | None = None,
        targets: Iterable[str] = (),
        keep_raw: bool = True,
        checks: Checks | None = None,
        trust: Trust = DEFAULT_TRUST,
        keep_records: bool = True,
        judgements: Sequence[Judgement] = (),
        on_attempt: AttemptObserver | None = None,
        load_embeddings: bool = True,
    ) -> None:
        opts = options.given(
            EvaluationOptions(
                manifest=manifest, expected_states=expected_states, k=k, source=source,
                targets=tuple(targets), keep_raw=keep_raw, checks=checks, trust=trust,
                keep_records=keep_records, judgements=tuple(judgements), on_attempt=on_attempt,
            )
        )  # fmt: skip
        self._open(suite, _prepared(suite, opts), opts, load_embeddings=load_embeddings)

    @classmethod
    def _made(
        cls, suite: Suite, prepared: _Prepared, options: EvaluationOptions
    ) -> EvaluationStream:
        stream = cls.__new__(cls)
        stream._open(suite, prepared, options)
        return stream

    def _open(
        self,
        suite: Suite,
        prepared: _Prepared,
        options: EvaluationOptions,
        *,
        load_embeddings: bool = True,
    ) -> None:
        manifest, k, expected_states = options.manifest, options.k, prepared.expected_states
        self.suite = suite
        self.code_allowed = options.trust.allow_code
        self.states = expected_states
        schedule = manifest.schedule if manifest is not None else None
        #: an adaptive run: pass^k at its most repeats, rates over its full rounds
        self.k = k if k is not None or schedule is None else schedule.max_repeats
        # at least the min repeats, as coverage counts them: a manifest saying 0 full
        # rounds must not leave the rates with nothing to read
        self.rounds: dict[str, int] = (
            {t.spec: max(t.full_rounds, schedule.min_repeats, 1) for t in schedule.targets}
            if schedule is not None
            else {}
        )
        self.adaptive = schedule is not None
        self.repeating: dict[str, frozenset[str]] = (
            {t.spec: frozenset(t.repeating) for t in schedule.targets}
            if schedule is not None
            else {}
        )
        self.keep_raw = options.keep_raw
        self.keep_records = options.keep_records
        self.on_attempt = options.on_attempt
        self.scorer = Scorer(
            suite,
            expected_states,
            prepared.checks,
            initial_state=prepared.initial,
            decisions=argument_decisions(options.judgements),
        )
        self.ev = Evaluation(
            suite=suite,
            source=Path(options.source) if options.source is not None else None,
            manifest=manifest,
            warnings=_warnings(expected_states),
            scorer=self.scorer,
            judgements=list(options.judgements),
            calibrations=suite_calibrations(suite),
        )
        self.embedder = _Embedder(load=load_embeddings)
        self.grouped: dict[str, _Target] = {t: _Target(self._builder(t)) for t in options.targets}
        self._known = {c.id for c in suite.cases}

    def _builder(self, target: str) -> SummaryBuilder:
        sink = None if self.keep_records else FailureLog()
        return SummaryBuilder(
            self.suite,
            target,
            k=self.k,
            scorer=self.scorer,
            failures=sink,
            rounds=self.rounds.get(target),
            adaptive=self.adaptive,
            repeating=self.repeating.get(target, frozenset()),
        )

    def add(self, record: Record, origin: tuple[str, int] | None = None) -> None:
        """Grade one record and count it; ``origin``: the file and line it was read from."""
        if origin is None and not record.target:
            record = record.model_copy(update={"target": UNNAMED})
        if record.case_id not in self._known:
            raise UserError(f"record for unknown case '{record.case_id}'")
        scorer, embedder, ev = self.scorer, self.embedder, self.ev
        target = record.target or UNNAMED  # always set by _winning_records
        try:
            verdict = _grade(scorer, record, embedder)
            # a raw verdict differs only when a call was recovered from text
            recovered = recovered_calls(record) if verdict is not None else 0
            raw = _grade(scorer, record, embedder, native=True) if recovered else None
        except MissingExpectedState as exc:
            if self.code_allowed:  # not a matter of consent: say what is missing
                raise
            from toolproof.run._env import code_not_allowed

            raise code_not_allowed(self.suite, f"case {exc.case_id}'s gold actions") from None
        except UngradableRecord as exc:
            if origin is None:
                raise
            raise SuiteError(origin[0], str(exc), line=origin[1]) from None
        into = self.grouped.get(target)
        if into is None:
            into = self.grouped[target] = _Target(self._builder(target))
        # the headline is raw: a call printed as text counts as no call
        scored = raw or verdict
        if scored is not None and scored.target != target:
            scored = scored._replace(target=target)
        if raw is not None:
            into.recovered_calls += recovered
            into.recovered_attempts += 1
        into.summary.add_record(record)
        if scored is not None:
            into.summary.add_verdict(scored)
        if self.on_attempt is not None:
            self.on_attempt(record, scored, origin)
        if ev.max_attempt is None or record.attempt > ev.max_attempt:
            ev.max_attempt = record.attempt
        if self.keep_records:
            if not self.keep_raw:
                record = _without_raw(record, owned=origin is not None)
            into.records.append(record)
            if scored is not None:
                into.verdicts.append(scored)
                if raw is not None and verdict is not None:
                    into.repaired[len(into.verdicts) - 1] = verdict._replace(target=target)
            if origin is not None:
                ev.origins[(target, record.case_id, record.attempt)] = origin
        else:
            into.where(record, origin)

    def finish(self) -> Evaluation:
        """The evaluation of the records added: every target's summary built."""
        scorer, embedder, ev = self.scorer, self.embedder, self.ev
        keep_records, keep_raw, builder = self.keep_records, self.keep_raw, self._builder
        for target, into in self.grouped.items():
            summary = into.summary.build()
            records_of: Sequence[Record]
            verdicts_of: Sequence[Verdict]
            if keep_records:
                records_of, verdicts_of = into.records, into.verdicts
            else:
                again = FileRecords(
                    into.segments, summary.attempts, _prepare(keep_raw), raw=keep_raw
                )
                records_of = again
                verdicts_of = FileVerdicts(
                    again, summary.scored, _regrade(scorer, target, embedder, native=True)
                )
            repaired = None
            if into.recovered_attempts:
                fixed: Sequence[Verdict]
                if keep_records:
                    fixed = [into.repaired.get(i, v) for i, v in enumerate(into.verdicts)]
                else:
                    assert isinstance(records_of, FileRecords)
                    fixed = FileVerdicts(
                        records_of, summary.scored, _regrade(scorer, target, embedder)
                    )
                # the repaired figures: a second pass, only for a target where a call was recovered
                second = builder(target)
                pending = TargetEvaluation(target, records_of, fixed, summary)
                for record, verdict in pending.pairs():
                    second.add_record(record)
                    if verdict is not None:
                        second.add_verdict(verdict)
                fixed_summary = second.build()
                repaired = TargetEvaluation(target, records_of, fixed, fixed_summary)
                figures = repaired_figures(
                    fixed_summary, into.recovered_calls, into.recovered_attempts
                )
                summary = summary.model_copy(update={"repaired": figures})
            rounds = self.rounds.get(target)
            if repaired is not None and rounds is not None:
                repaired = replace(repaired, rounds=rounds)
            ev.targets[target] = TargetEvaluation(
                target, records_of, verdicts_of, summary, repaired, rounds
            )
        ev.warnings = _warnings(self.states)  # stored states: those the records needed
        return ev


class AttemptGrader:
    """:func:`attempt_grader`'s callable: ``grader(record)`` is the verdict, ``scorer``
    the scorer it grades with (its compiled cases, for whoever needs them too)."""

    def __init__(self, scorer: Scorer, grade: Callable[[Record], Verdict | None]) -> None:
        self.scorer = scorer
        self._grade = grade

    def __call__(self, record: Record) -> Verdict | None:
        return self._grade(record)


def attempt_grader(suite: Suite, trust: Trust = DEFAULT_TRUST) -> AttemptGrader:
    """Grade one record at a time, as :func:`evaluate` grades it for the headline (raw).

    What an adaptive schedule asks of each attempt as it finishes; the verdict
    is the one the run's evaluation will give the same record (no judge answers
    yet: judge-decided arguments are undecided).
    """
    prepared = _prepared(suite, EvaluationOptions(trust=trust))
    scorer = Scorer(
        suite, prepared.expected_states, prepared.checks, initial_state=prepared.initial
    )
    embedder = _Embedder()

    def grade(record: Record) -> Verdict | None:
        try:
            verdict = _grade(scorer, record, embedder)
            if verdict is not None and recovered_calls(record):
                verdict = _grade(scorer, record, embedder, native=True) or verdict
        except MissingExpectedState as exc:
            from toolproof.run._env import code_not_allowed

            raise code_not_allowed(suite, f"case {exc.case_id}'s gold actions") from None
        return verdict

    return AttemptGrader(scorer, grade)


class _Embedder:
    """Sentence embeddings for the semantic matcher, loaded on the first need
    (with ``load=False``, the need is raised instead: :class:`MissingEmbeddings`)."""

    def __init__(self, *, load: bool = True) -> None:
        self._embedder: TextEmbedder | None = None
        self._load = load

    def fill(self, table: Embeddings, texts: Sequence[str]) -> None:
        if self._embedder is None:
            if not self._load:
                raise MissingEmbeddings(list(texts))
            self._embedder = load_embedder()
        self._embedder.fill(table, texts)


def _grade(
    scorer: Scorer, record: Record, embedder: _Embedder, *, native: bool = False
) -> Verdict | None:
    """The record's verdict; texts compared by meaning are embedded first, here at the edge.

    ``native``: the raw verdict (calls recovered from text count as no call), or
    None when no call was recovered.
    """
    grade = scorer.grade_raw if native else scorer.grade
    while True:
        try:
            return grade(record)
        except MissingEmbeddings as exc:
            before = len(scorer.embeddings.vectors)
            embedder.fill(scorer.embeddings, exc.texts)
            if len(scorer.embeddings.vectors) == before:  # pragma: no cover - a bug, not input
                raise


def _count(wanted: bool | _Wanted) -> int:
    if isinstance(wanted, _Wanted):
        return wanted.count
    return 1 if wanted else 0


class _Target:
    """One target's summary in the making, and its records or where they are."""

    def __init__(self, summary: SummaryBuilder) -> None:
        self.summary = summary
        self.records: list[Record] = []
        self.verdicts: list[Verdict] = []
        self.segments: list[Segment] = []
        self._file = ""
        self.recovered_calls = 0
        self.recovered_attempts = 0
        self.repaired: dict[int, Verdict] = {}
        """Index in ``verdicts`` → the verdict with calls recovered from text (kept records)."""

    def where(self, record: Record, origin: tuple[str, int] | None) -> None:
        last = self.segments[-1] if self.segments else None
        if origin is None:
            if not isinstance(last, list):
                last = []
                self.segments.append(last)
            last.append(record)
            return
        if isinstance(last, tuple) and self._file == origin[0]:
            last[1].append(origin[1])
        else:
            self._file = origin[0]
            self.segments.append((Path(origin[0]), array("q", [origin[1]])))


def _prepare(keep_raw: bool) -> Callable[[Record, Path | None], Record]:
    def prepare(record: Record, path: Path | None) -> Record:
        if path is None:  # kept as _winning_records gave it: its target is set
            return record if keep_raw else _without_raw(record, owned=False)
        if not record.target:
            record = record.model_copy(update={"target": path.stem})
        return record if keep_raw else _without_raw(record, owned=True)

    return prepare


def _regrade(
    scorer: Scorer, target: str, embedder: _Embedder, *, native: bool = False
) -> Callable[[Record], Verdict | None]:
    """Grade a record read again; ``native``: the raw verdict (the headline's)."""

    def grade(record: Record) -> Verdict | None:
        verdict = _grade(scorer, record, embedder)
        if native and verdict is not None and recovered_calls(record):
            verdict = _grade(scorer, record, embedder, native=True) or verdict
        if verdict is None or verdict.target == target:
            return verdict
        return verdict._replace(target=target)

    return grade


class _Wanted:
    """The winning lines of one records file, and the identity each had when its key was read."""

    def __init__(
        self,
        latest: _Latest | None,
        entry_of_line: Sequence[int],
        count: int = 0,
        *,
        every: bool = False,
    ) -> None:
        self._latest = latest
        self._entry = entry_of_line
        self.count = count
        """How many lines win."""
        self.lines: Container[int] = range(1, len(entry_of_line)) if every else self
        """The winning lines: when every record of the file wins, every non-blank line up
        to the last record's (a range answers ``in`` at once; a torn last line is past it)."""

    def read_as(self, number: int, case_id: str, target: str | None, attempt: int) -> bool:
        """Was the identity of this winning line read as this when its key was read?"""
        latest = self._latest
        if latest is None:
            return False
        entry = int(self._entry[number])
        return (
            latest.attempt[entry] == attempt
            and latest.case_ids[latest.cases[entry]] == case_id
            and latest.target_names[latest.target[entry]] == target
        )

    def __contains__(self, number: object) -> bool:
        entry = self._entry
        return isinstance(number, int) and 0 <= number < len(entry) and entry[number] >= 0


class _Latest:
    """Which record of each (case, target, attempt) is the latest, found with a few
    bytes per record (numbers in arrays, not a dictionary of keys)."""

    def __init__(self, suite: Suite) -> None:
        self.case_ids = [c.id for c in suite.cases]
        self.known = {c: i for i, c in enumerate(self.case_ids)}
        self.targets: dict[str, int] = {}
        self.target_names: list[str] = []
        # case and target indexes, and sources, in C ints: half the bytes of the others
        self.cases: array[int] = array("i")
        self.target: array[int] = array("i")
        self.attempt: array[int] = array("q")
        self.source: array[int] = array("i")
        self.line: array[int] = array("q")

    def add(self, source: int, line: int, case: int, target: str, attempt: int) -> None:
        index = self.targets.get(target)
        if index is None:
            index = self.targets[target] = len(self.target_names)
            self.target_names.append(target)
        self.attempt.append(attempt)  # first: the one that can overflow
        self.cases.append(case)
        self.target.append(index)
        self.source.append(source)
        self.line.append(line)

    def winners(self, sources: list[RecordSource]) -> list[bool | _Wanted]:
        """Per source: for a record, whether it wins; for a file, its winning lines."""
        import numpy as np

        out: list[bool | _Wanted] = [False] * len(sources)
        total = len(self.cases)
        if not total:
            return out
        cases, target, attempt = (_numbers(a) for a in (self.cases, self.target, self.attempt))
        # a stable sort: the records of one attempt stay in reading order, the latest last
        order = np.lexsort((attempt, target, cases))
        last = np.ones(total, dtype=bool)
        for key in (cases, target, attempt):
            ordered = key[order]
            last[:-1] &= ordered[1:] == ordered[:-1]
        del ordered
        last[:-1] = ~last[:-1]  # the last record of each attempt: the next one differs
        if last.all():  # no record replaced: every one wins, in reading order
            del order, last
            win = np.arange(total)
        else:
            win = order[last]
            del order, last
            win.sort()  # entries in reading order: by source, then line
        # how many records each source holds: a file whose records all win is read whole
        held = np.bincount(_numbers(self.source), minlength=len(sources))
        win_source = _numbers(self.source)[win]
        lines = _numbers(self.line)
        present, starts = np.unique(win_source, return_index=True)
        del win_source
        ends = [*starts[1:], len(win)]
        for index, begin, end in zip(present.tolist(), starts.tolist(), ends, strict=True):
            chosen = win[begin:end]
            if isinstance(sources[index], Record):
                out[index] = True
                continue
            numbers = lines[chosen]
            entry_of_line = np.full(int(numbers.max()) + 1, -1, dtype=np.int64)
            entry_of_line[numbers] = chosen
            del numbers
            # a memoryview, not numpy: indexing it one line at a time is several times faster
            out[index] = _Wanted(
                self, entry_of_line.data, count=len(chosen), every=len(chosen) == held[index]
            )
        self.source = self.line = array("q")  # where each record was: no longer needed
        return out


def _numbers(values: array[int]) -> Any:
    """An array's numbers as a numpy array, without a copy."""
    import numpy as np

    return np.frombuffer(values, dtype=np.dtype(f"i{values.itemsize}"))


def _latest(suite: Suite, sources: list[RecordSource]) -> tuple[list[bool | _Wanted], int]:
    """For each source, whether it (a record) or which of its lines (a file) are latest."""
    latest = _Latest(suite)
    known = latest.known
    for index, item in enumerate(sources):
        if isinstance(item, Record):
            case = known.get(item.case_id)
            if case is None:
                raise UserError(f"record for unknown case '{item.case_id}'")
            latest.add(index, 0, case, item.target or UNNAMED, item.attempt)
            continue
        path = Path(item)
        stem = path.stem
        for number, case_id, target, attempt in iter_keys(path):
            case = known.get(case_id)
            if case is None:
                raise SuiteError(
                    str(path),
                    f"record for unknown case '{case_id}'",
                    line=number,
                    path=("case_id",),
                )
            try:
                latest.add(index, number, case, target or stem, attempt)
            except OverflowError:
                raise SuiteError(
                    str(path), "attempt number too large", line=number, path=("attempt",)
                ) from None
    return latest.winners(sources), len(latest.cases)


def _winning_records(
    sources: list[RecordSource], winners: list[bool | _Wanted], *, raw: bool = True
) -> Iterator[tuple[Record, tuple[str, int] | None]]:
    """The latest record of each attempt; ``raw=False``: read from a file without its raw
    payloads (nothing that grades or counts reads them)."""
    for item, wanted in zip(sources, winners, strict=True):
        if isinstance(item, Record):
            if wanted:
                yield (item if item.target else item.model_copy(update={"target": UNNAMED})), None
            continue
        if not isinstance(wanted, _Wanted):
            # no line wins (an empty file): still read it, for its errors
            wanted = _Wanted(None, ())
        path = Path(item)
        file = str(path)
        read_as = wanted.read_as
        for number, record in iter_records(path, only=wanted.lines, check_skipped=True, raw=raw):
            if not record.target:
                record = record.model_copy(update={"target": path.stem})
            if not read_as(number, record.case_id, record.target, record.attempt):
                raise SuiteError(
                    file,
                    "case_id, target or attempt read two ways (is a key given twice?)",
                    line=number,
                )
            yield record, (file, number)


def _without_raw(record: Record, *, owned: bool) -> Record:
    """The record without its raw payloads. One read from a file here is changed in place."""
    response = record.response
    if owned:
        record.request = record.steps = record.end_state = record.transcript = None
        record.state_changes = None
        if response is not None:
            response.raw = None
        return record
    return record.model_copy(
        update={
            "request": None,
            "steps": None,
            "end_state": None,
            "state_changes": None,
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
    judged = file.parent / JUDGEMENTS_FILE
    judgements = latest_judgements(read_judgements(judged)) if judged.is_file() else []
    ev = evaluate(
        loaded,
        [file],
        manifest=manifest,
        k=k,
        source=file,
        targets=order,
        keep_raw=keep_raw,
        trust=trust,
        judgements=judgements,
    )
    if not any(t.records for t in ev.targets.values()):
        raise UserError(f"{file}: no records")
    ev.targets = {n: t for n, t in ev.targets.items() if t.records}
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

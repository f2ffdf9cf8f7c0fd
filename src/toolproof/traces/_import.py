"""``toolproof traces import``: trace files → a redacted replay suite and production's records.

One replay case per chat span that carries its conversation. The folder holds
``suite.yaml``, ``tools.json``, ``cases.jsonl``, ``provenance.jsonl``,
``decisions.jsonl`` (every chat span, with or without content: what drift
reads) and the run folder ``runs/prod-LABEL/`` (production's answers as the
records of target ``prod:LABEL``, and a manifest). Every string is redacted
before it is written.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from toolproof.errors import UserError
from toolproof.suite import expected_args_problems, tool_problems
from toolproof.traces._drift import argument_summary
from toolproof.traces._dumps import (
    call_record,
    datetime_json,
    json_value,
    message_case,
    message_record,
)
from toolproof.traces._index import Index, IndexedSpan, TraceInfo
from toolproof.traces._read import SHAPE_ERRORS, Problem, Problems, iter_rows, source_files
from toolproof.traces._redact import Redactor
from toolproof.traces._shapes import Decision, ToolRun, decision_of, tool_run_of
from toolproof.traces._values import clip
from toolproof.types import Message, SuiteTool, ToolCall
from toolproof.types._record import RECORD_FORMAT

#: ``json.dumps(value, ensure_ascii=False)``, with one encoder made once.
_dumps = json.JSONEncoder(ensure_ascii=False).encode

__all__ = ["NOT_RECORDED", "ImportReport", "import_traces"]

#: What a replayed tool answers when production never made the call.
NOT_RECORDED = "not recorded: production made no call to this tool with these arguments"
#: The most steps a replay case may take.
MAX_REPLAY_STEPS = 10


@dataclass
class ImportReport:
    files: int = 0
    spans: int = 0
    log_records: int = 0
    traces: int = 0
    chat_spans: int = 0
    tool_spans: int = 0
    cases: int = 0
    without_content: int = 0
    without_conversation: int = 0
    layouts: Counter[str] = field(default_factory=Counter)
    tools_from: Counter[str] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    call_errors: int = 0
    calls_with_outcome: int = 0
    orphans: int = 0
    clock_skew: int = 0
    problems: list[Problem] = field(default_factory=Problems)
    redaction: dict[str, Any] = field(default_factory=dict)
    out: str | None = None
    target: str = ""
    duplicates: int = 0
    similar_duplicates: int = 0
    similar_threshold: float | None = None
    unoffered_calls: int = 0
    outside_window: int = 0
    not_negative: int = 0
    restored_calls: int = 0
    sampled: dict[str, list[int]] | None = None

    def problem_counts(self) -> dict[str, int]:
        if isinstance(self.problems, Problems):  # every problem counted, the first ones held
            return dict(self.problems.counts.most_common())
        return dict(Counter(p.kind for p in self.problems).most_common())

    def as_json(self, redactor: Redactor) -> dict[str, Any]:
        return {
            "format": "toolproof.traces-import/1",
            "target": self.target,
            "files": self.files,
            "spans": self.spans,
            "log_records": self.log_records,
            "traces": self.traces,
            "chat_spans": self.chat_spans,
            "tool_spans": self.tool_spans,
            "replay_cases": self.cases,
            "chat_spans_without_content": self.without_content,
            "chat_spans_without_conversation": self.without_conversation,
            "layouts": dict(self.layouts),
            "tools_from": dict(self.tools_from),
            "decisions": dict(self.decisions),
            "calls": self.calls,
            "calls_with_outcome": self.calls_with_outcome,
            "call_errors": self.call_errors,
            "outside_time_window": self.outside_window,
            "without_negative_feedback": self.not_negative,
            "near_duplicates_removed": self.duplicates + self.similar_duplicates,
            # only with --dedup-similar: how each method removed them
            **(
                {
                    "near_duplicates_by": {
                        "normalised text": self.duplicates,
                        f"embeddings (cosine >= {self.similar_threshold:g})": (
                            self.similar_duplicates
                        ),
                    }
                }
                if self.similar_threshold is not None
                else {}
            ),
            "cases_calling_an_unoffered_tool": self.unoffered_calls,
            # only where an instrumentation dropped them (openlit): absent otherwise
            **({"assistant_turns_restored": self.restored_calls} if self.restored_calls else {}),
            "sampled_by_stratum": self.sampled,
            "spans_without_parent_in_input": self.orphans,
            "spans_starting_before_parent": self.clock_skew,
            "skipped": self.problem_counts(),
            "problems": [_shown_problem(p, redactor) for p in self.problems[:200]],
            "redaction": self.redaction,
        }


def _case_id(trace: str, span: str) -> str:
    raw = f"{trace[:12]}-{span}"
    if re.fullmatch(r"[A-Za-z0-9._-]{1,80}", raw):
        return raw
    return "t" + hashlib.sha256(f"{trace}\0{span}".encode()).hexdigest()[:20]


def _iso(ns: int | None) -> str | None:
    if ns is None:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")


def _tool(defn: dict[str, Any]) -> SuiteTool | None:
    try:
        return SuiteTool(
            name=defn["name"],
            description=defn.get("description", ""),
            parameters=defn["parameters"],
        )
    except (ValueError, KeyError):
        return None


#: Kinds of problem an import reports for what it leaves out of a case (not a span).
INVALID_TOOL = "invalid tool definition"
ARGS_AGAINST_SCHEMA = "arguments against the tool's schema"


def _checked_tool(defn: Any) -> tuple[SuiteTool | None, str | None]:
    """A trace's tool definition as a case writes it (its parameters as JSON: NaN and
    infinities are null), with what ``validate`` would find wrong with it (None: nothing)."""
    if not isinstance(defn, dict) or not isinstance(defn.get("name"), str):
        return None, "the definition has no name"
    params = defn.get("parameters")
    if not isinstance(params, dict):
        return None, "parameters: the parameters schema must be a mapping"
    try:
        tool = SuiteTool(
            name=defn["name"],
            description=defn.get("description", ""),
            parameters=json_value(params),
        )
    except ValidationError as exc:  # without the input: pydantic cuts it in the middle
        err = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        return None, clip(f"{where}: {err['msg']}" if where else err["msg"], 160)
    except (ValueError, RecursionError) as exc:
        return None, clip((str(exc).splitlines()[:3] or ["not a tool definition"])[-1].strip(), 160)
    problems = tool_problems(tool)
    if problems:
        path, message = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return None, f"{_path(path)}: {message}{more}"
    return tool, None


def _path(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _offered(
    found: list[Any],
    span: IndexedSpan,
    called: set[str],
    tools_file: list[SuiteTool] | None,
    report: ImportReport,
    seen_defs: dict[str, tuple[SuiteTool | None, str | None]],
) -> list[SuiteTool]:
    """The tools a trace's definitions offer a case, each checked as ``validate`` checks it.

    A definition ``validate`` would refuse is left out, named in the report (file:line,
    span, tool, problem), and the tool is offered as a trace without definitions offers
    it: the --tools file's definition of that name, else (when production called it) its
    name alone. A second definition of the same name is left out too."""
    by_file = {t.name: t for t in tools_file or ()}
    out: list[SuiteTool] = []
    names: set[str] = set()
    for defn in found:
        key = _dumps(defn) if isinstance(defn, dict) else repr(defn)
        checked = seen_defs.get(key)
        if checked is None:
            if len(seen_defs) >= 4096:
                seen_defs.clear()
            checked = seen_defs[key] = _checked_tool(defn)
        tool, why = checked
        name = defn.get("name") if isinstance(defn, dict) else None
        if tool is not None and tool.name in names:
            why = "a second definition of this name"
        if why is None and tool is not None:
            out.append(tool)
            names.add(tool.name)
            continue
        shown = name if isinstance(name, str) else "?"
        if isinstance(name, str) and name in names:
            instead = "the first definition of this name offered"
        elif isinstance(name, str) and name in by_file:
            instead = f"the definition of --tools {shown!r} offered in its place"
            out.append(by_file[name])
            names.add(name)
        elif isinstance(name, str) and name in called:
            instead = "offered by the name production called"
            fallback = _tool({"name": name, "parameters": {"type": "object"}})
            if fallback is not None:
                out.append(fallback)
                names.add(name)
        else:
            instead = "not offered"
        report.problems.append(
            Problem(
                INVALID_TOOL,
                span.file,
                span.line,
                f"tool '{clip(shown, 80)}': {why}; its definition is left out, {instead}",
                span.span,
            )
        )
    return out


@dataclass(frozen=True)
class Selection:
    """Which chat spans an import keeps.

    ``since`` / ``until``: the span's start time (both decisions and cases).
    ``only_negative``: only traces with negative feedback (a score below or at 0,
    or 'negative', 'thumbs_down', 'down', 'bad', 'escalated').
    ``sample``: keep about this share of the replay cases, stratified by production's
    tools ("no call" included): each case is kept when its hash (with ``seed``) falls
    under the share, and a stratum that would keep none keeps its lowest hash.
    ``dedup``: drop replay cases whose normalised conversation and called tools repeat
    an earlier case's (rapidfuzz's default normalisation, digits folded).
    ``similar``: also drop a replay case whose user turns' sentence embedding (the
    ``semantic`` extra's model) has at least this cosine similarity to one of the
    last :data:`SIMILAR_WINDOW` kept cases that called the same tools.
    """

    since: datetime | None = None
    until: datetime | None = None
    only_negative: bool = False
    sample: float | None = None
    seed: int = 0
    dedup: bool = False
    similar: float | None = None


_NEGATIVE = frozenset({"negative", "thumbs_down", "thumbs-down", "down", "bad", "escalated"})


def negative_feedback(value: Any) -> bool:
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int | float):
        return value <= 0
    if isinstance(value, str):
        return value.strip().lower() in _NEGATIVE
    if isinstance(value, dict):
        return any(
            negative_feedback(value.get(k)) for k in ("value", "score", "label") if k in value
        )
    if isinstance(value, list):
        return any(negative_feedback(v) for v in value)
    return False


def _dedup_key(d: Decision) -> bytes:
    from rapidfuzz.utils import default_process

    text = "\n".join(f"{m.role}:{m.content or ''}" for m in d.messages)
    calls = ",".join(sorted(c.name for c in d.calls))
    folded = re.sub(r"[0-9]+", "0", default_process(text))
    return hashlib.sha256(f"{folded}\0{calls}".encode()).digest()[:16]


#: How many kept cases of the same tools a new case is compared with (--dedup-similar):
#: memory and time stay bounded however many cases stream past.
SIMILAR_WINDOW = 5000
#: Cases embedded at once (--dedup-similar).
_SIMILAR_BATCH = 64


def _similar_text(d: Decision) -> str:
    """What --dedup-similar compares: the conversation's user turns, the last first (the
    model reads a bounded number of tokens; a shared system prompt would make every
    conversation look alike)."""
    users = [m.content for m in d.messages if m.role == "user" and m.content]
    return "\n".join(reversed(users))


class _Similar:
    """The embeddings of the last :data:`SIMILAR_WINDOW` kept cases, by production's tools."""

    def __init__(self, threshold: float) -> None:
        from toolproof.providers import load_embedder

        self.threshold = threshold
        self.embedder = load_embedder()
        self.kept: dict[str, Any] = {}

    def duplicates(self, items: list[tuple[str, str]]) -> list[bool]:
        """For each (stratum, text) in order: whether it repeats a kept case (or an earlier
        item of the same list that was kept)."""
        import numpy as np

        texts = [t for _, t in items if t]
        vectors = iter(self.embedder.encode_once(texts))
        out = []
        for stratum, text in items:
            if not text:
                out.append(False)
                continue
            v = np.asarray(next(vectors), dtype=np.float32)
            kept = self.kept.get(stratum)
            if kept is not None and float((kept @ v).max()) >= self.threshold:
                out.append(True)
                continue
            row = v[None, :]
            kept = row if kept is None else np.concatenate([kept[-(SIMILAR_WINDOW - 1) :], row])
            self.kept[stratum] = kept
            out.append(False)
        return out


class _Selector:
    """Writes the kept replay cases (redacted); sampling and de-duplication decide which."""

    def __init__(
        self,
        out: _Out,
        selection: Selection,
        redactor: Redactor,
        report: ImportReport,
        db: Any,
        similar: _Similar | None = None,
    ) -> None:
        self.out, self.sel, self.redactor, self.report, self.db = (
            out,
            selection,
            redactor,
            report,
            db,
        )
        self.dedup = selection.dedup
        self.similar = similar
        self.pending: list[tuple[str, str, str, tuple[Any, Any, Any]]] = []
        if selection.similar is not None:
            report.similar_threshold = selection.similar
        self.kept: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.fallback: dict[str, tuple[float, tuple[Any, Any, Any]]] = {}
        if self.dedup:
            db.execute("CREATE TABLE IF NOT EXISTS seen (h BLOB PRIMARY KEY)")

    def offer(
        self,
        case_id: str,
        stratum: str,
        key: bytes | None,
        parts: tuple[Any, Any, Any],
        text: str = "",
    ) -> None:
        if key is not None:
            cur = self.db.execute("INSERT OR IGNORE INTO seen VALUES (?)", (key,))
            if cur.rowcount == 0:
                self.report.duplicates += 1
                return
        if self.similar is not None:
            self.pending.append((case_id, stratum, text, parts))
            if len(self.pending) >= _SIMILAR_BATCH:
                self._flush()
            return
        self._admit(case_id, stratum, parts)

    def _flush(self) -> None:
        """Decide the pending cases, in the order they came (embedded as one batch)."""
        if self.similar is None or not self.pending:
            return
        pending, self.pending = self.pending, []
        repeats = self.similar.duplicates([(s, t) for _, s, t, _ in pending])
        for (case_id, stratum, _, parts), repeat in zip(pending, repeats, strict=True):
            if repeat:
                self.report.similar_duplicates += 1
            else:
                self._admit(case_id, stratum, parts)

    def _admit(self, case_id: str, stratum: str, parts: tuple[Any, Any, Any]) -> None:
        self.seen[stratum] += 1
        if self.sel.sample is None:
            self._write(stratum, parts)
            return
        digest = hashlib.sha256(f"{self.sel.seed}\0{case_id}".encode()).digest()
        h = int.from_bytes(digest[:8], "big") / 2**64
        if h < self.sel.sample:
            self._write(stratum, parts)
        elif not self.kept[stratum]:
            best = self.fallback.get(stratum)
            if best is None or h < best[0]:
                self.fallback[stratum] = (h, parts)

    def _write(self, stratum: str, parts: tuple[Any, Any, Any]) -> None:
        data, rec, prov = parts
        r = self.redactor
        case = r.value(data, "cases")
        self._redacted_args(data, case, prov)
        lines = (_dumps(case), r.line(rec, "records"), _line_keeping_ids(r, prov, "provenance"))
        for name, line, part in zip(("cases", "records", "provenance"), lines, parts, strict=True):
            try:
                line.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate: the case is not written
                file, _, at = str(prov["source"]).rpartition(":")
                field = _surrogate_field(part) or "?"
                self.report.problems.append(
                    Problem(
                        "unusable span",
                        file,
                        int(at) if at.isdigit() else 0,
                        f"skipped: {name}.{field}: {exc.reason} ({exc.object[exc.start]!r}): "
                        "not writable as UTF-8",
                        prov["span_id"],
                    )
                )
                return
        self.out.cases.write(lines[0] + "\n")
        self.out.records.write(lines[1] + "\n")
        self.out.provenance.write(lines[2] + "\n")
        self.kept[stratum] += 1
        self.report.cases += 1

    def _redacted_args(self, data: dict[str, Any], case: dict[str, Any], prov: Any) -> None:
        """Expected arguments that redaction changed, checked again against their tool's
        schema (a placeholder may be longer than a ``maxLength``, or miss a ``pattern``):
        where they break it now, the expectation keeps the call without them, named."""
        calls = case.get("expect", {}).get("calls")
        if not calls:
            return
        before = data["expect"]["calls"]
        for j, c in enumerate(calls):
            args = c.get("args")
            if not args or args == before[j].get("args"):
                continue
            tool: Any = next(
                (t for t in case["tools"] if isinstance(t, dict) and t.get("name") == c["tool"]),
                None,
            )
            try:
                tool = SuiteTool(**tool) if tool is not None else self.out.tools.get(c["tool"])
            except ValueError:
                tool = None
            problems = expected_args_problems(tool, args) if tool is not None else []
            if problems:
                path, message = problems[0]
                calls[j] = {"tool": c["tool"]}
                file, _, at = str(prov["source"]).rpartition(":")
                self.report.problems.append(
                    Problem(
                        ARGS_AGAINST_SCHEMA,
                        file,
                        int(at) if at.isdigit() else 0,
                        f"expect.calls[{j}].args.{_path(path)} (as redacted): {message}; the "
                        f"redacted arguments are left out of the case's expectation (the call "
                        f"of '{c['tool']}' is kept)",
                        prov["span_id"],
                    )
                )

    def finish(self) -> None:
        self._flush()
        for stratum, (_, parts) in sorted(self.fallback.items()):
            if not self.kept[stratum]:
                self._write(stratum, parts)
        if self.sel.sample is not None:
            self.report.sampled = {s: [self.kept[s], n] for s, n in sorted(self.seen.items())}


def _surrogate_field(value: Any, path: str = "") -> str | None:
    """The path of the first string (a key or a value) in ``value`` that holds a lone
    surrogate (a ``\\udXXX`` escape in the trace that pairs with nothing)."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return where.lstrip(".") or "(value)"
        elif isinstance(item, dict):
            for k, v in reversed(list(item.items())):
                stack.append((f"{where}.{k}", v))
                stack.append((f"{where}.{k} (the key)", k))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


@dataclass
class _Out:
    cases: IO[str]
    provenance: IO[str]
    decisions: IO[str]
    records: IO[str]
    tools: dict[str, SuiteTool] = field(default_factory=dict)
    selector: Any = None
    #: Each distinct tool definition of the traces, checked once (see _checked_tool).
    seen_defs: dict[str, tuple[SuiteTool | None, str | None]] = field(default_factory=dict)


def import_traces(
    sources: list[Path],
    out: Path | None,
    *,
    label: str,
    redactor: Redactor,
    tools_file: list[SuiteTool] | None = None,
    tools_source: str | None = None,
    force: bool = False,
    selection: Selection | None = None,
) -> ImportReport:
    """Import ``sources`` into the folder ``out`` (None: a dry run that writes nothing)."""
    report = ImportReport(target=f"prod:{label}")
    for tool in tools_file or ():  # the user's own file: refused whole, as validate would
        problems = tool_problems(tool)
        if problems:
            path, message = problems[0]
            raise UserError(
                f"{tools_source or '--tools'}: tool '{tool.name}': {_path(path)}: {message}"
            )
    sel = selection or Selection()
    # the model is loaded (or its absence said) before any file is read
    similar = _Similar(sel.similar) if sel.similar is not None else None
    files = source_files(sources, report.problems)
    report.files = len(files)
    if out is not None:
        _prepare(out, force, [*sources, *files])
    with tempfile.TemporaryDirectory(prefix="toolproof-traces-") as tmp:
        index = Index(Path(tmp) / "index.db")
        try:
            for row in iter_rows(files, report.problems):
                index.add(row, report.problems)
            index.finish()
            report.spans, report.log_records = index.spans, index.logs
            report.orphans, report.clock_skew = index.orphans(), index.skewed()
            staging = Path(tmp) / "out"
            staging.mkdir()
            with (
                (staging / "cases.jsonl").open("w", encoding="utf-8") as cases,
                (staging / "provenance.jsonl").open("w", encoding="utf-8") as prov,
                (staging / "decisions.jsonl").open("w", encoding="utf-8") as decisions,
                (staging / "records.jsonl").open("w", encoding="utf-8") as records,
            ):
                sink = _Out(cases, prov, decisions, records)
                sink.selector = _Selector(sink, sel, redactor, report, index.db, similar)
                for trace, spans in index.traces():
                    report.traces += len({s.trace for s in spans})
                    _trace(
                        index, trace, spans, sink, report, redactor, tools_file, tools_source, sel
                    )
                sink.selector.finish()
            report.redaction = redactor.report()
            if out is not None:
                _finish(staging, out, sink, report, redactor, label, force)
        finally:
            index.close()
    return report


def _prepare(out: Path, force: bool, sources: list[Path]) -> None:
    """Refuse an ``--out`` that cannot be written, or that ``--force`` must not replace.

    Checked before anything is read; the folder ``--force`` replaces is removed only
    once the import has succeeded (see :func:`_finish`).
    """
    above = out.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise UserError(f"{out}: cannot be a folder: {above} is a file")
    if out.is_symlink() and not out.exists():
        if not force:
            raise UserError(f"{out}: is a broken symbolic link (pass --force to replace it)")
        return
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: is a file, not a folder; --out names the folder to write")
    if not (out.exists() and any(out.iterdir())):
        return
    if not force:
        raise UserError(f"{out}: already exists and is not empty (pass --force to replace it)")
    if out.is_symlink():
        return  # --force replaces the link, never what it points to
    root = out.resolve()
    if Path.cwd().resolve().is_relative_to(root):
        raise UserError(
            f"{out}: holds the working folder; --force would delete it: give another --out folder"
        )
    for source in sources:
        if source.resolve().is_relative_to(root):
            raise UserError(
                f"{out}: holds {source}, which is being imported; --force would delete it: "
                "give another --out folder"
            )


def _replace(out: Path) -> None:
    """Remove what ``--force`` replaces: the link itself, or the folder (not through a link)."""
    if out.is_symlink():
        out.unlink()
    elif out.is_dir() and any(out.iterdir()):
        shutil.rmtree(out)


def _finish(
    staging: Path,
    out: Path,
    sink: _Out,
    report: ImportReport,
    redactor: Redactor,
    label: str,
    force: bool,
) -> None:
    if force:
        _replace(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("cases.jsonl", "provenance.jsonl", "decisions.jsonl"):
        shutil.move(staging / name, out / name)
    run = out / "runs" / f"prod-{label}"  # a run folder: score and view read it as one
    run.mkdir(parents=True, exist_ok=True)
    shutil.move(staging / "records.jsonl", run / "records.jsonl")
    tools = redactor.value(
        [t.model_dump(mode="json", exclude_defaults=True) for t in sink.tools.values()], "tools"
    )
    (out / "tools.json").write_text(json.dumps(tools, indent=2, ensure_ascii=False) + "\n", "utf-8")
    name = json.dumps(f"production replay (prod:{label})")
    (out / "suite.yaml").write_text(
        "# Imported by `toolproof traces import`: replay cases from production traces.\n"
        "# Each case's expectation is production's own call (unreviewed): scoring a\n"
        "# candidate against it measures agreement with production, not correctness.\n"
        f"format: 1\nsuite: {name}\ntools: tools.json\ncases_from: cases.jsonl\n",
        "utf-8",
    )
    report.out = str(out)
    _manifest(out, run, label, report)
    (out / "import-report.json").write_text(
        json.dumps(report.as_json(redactor), indent=2, ensure_ascii=False) + "\n", "utf-8"
    )


def _manifest(out: Path, run: Path, label: str, report: ImportReport) -> None:
    """The production run folder's manifest: what was 'run' (production), on which suite."""
    from toolproof._version import __version__
    from toolproof.run._manifest import (
        Manifest,
        TargetEntry,
        system_fingerprint,
        tools_fingerprint,
        write_manifest,
    )
    from toolproof.suite import load_tools_file
    from toolproof.types import Suite

    # The cases are never loaded back (an import may hold millions): the suite's
    # fingerprint here is the hash of the files as written, streamed.
    digest = hashlib.sha256()
    for name in ("suite.yaml", "tools.json", "cases.jsonl"):
        with (out / name).open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    tools_only = Suite(name=f"prod:{label}", tools=load_tools_file(out / "tools.json"), cases=[])
    moment = datetime.now(UTC)
    manifest = Manifest(
        run_id=f"prod-{label}",
        toolproof_version=__version__,
        suite_name=f"production replay (prod:{label})",
        suite_source=str((out / "suite.yaml").resolve()),
        suite_fingerprint=digest.hexdigest()[:16],
        tools_fingerprint=tools_fingerprint(tools_only),
        system_fingerprint=system_fingerprint(tools_only),
        targets=[TargetEntry(spec=report.target, kind="target")],
        repeats=1,
        cache=False,
        started_at=moment,
        ended_at=moment,
        status="complete",
        counts={"ok": report.cases},
        extra={
            "imported_by": "toolproof traces import",
            "suite_fingerprint": "sha256 of suite.yaml, tools.json and cases.jsonl as written",
            "tools_fingerprint": "of tools.json (cases' own definitions not included)",
        },
    )
    write_manifest(run, manifest)


def _trace(
    index: Index,
    trace: str,
    spans: list[IndexedSpan],
    sink: _Out,
    report: ImportReport,
    redactor: Redactor,
    tools_file: list[SuiteTool] | None,
    tools_source: str | None,
    sel: Selection,
) -> None:
    info = index.info(spans[0].trace)
    if sel.only_negative and not negative_feedback(info.feedback):
        report.not_negative += sum(1 for s in spans if s.role == "chat")
        return
    runs: list[tuple[IndexedSpan, ToolRun]] = []
    chats: list[tuple[IndexedSpan, Decision]] = []
    for span in spans:
        if span.role == "tool":
            try:
                run = tool_run_of(span.attrs, span.name, span.status, span.status_message)
            except SHAPE_ERRORS as exc:
                report.problems.append(_unusable(span, exc))
                continue
            runs.append((span, run))
            report.tool_spans += 1
        else:
            try:
                chats.append((span, decision_of(span.attrs, index.logs_of(span.trace, span.span))))
            except SHAPE_ERRORS as exc:
                report.problems.append(_unusable(span, exc))
                continue
            report.chat_spans += 1
    by_id = {run.call_id: run for _, run in runs if run.call_id}
    # tool results production fed back to the model, from later chat spans' inputs
    fed_back: dict[str, Message_] = {}
    for _, d in chats:
        for m in d.messages:
            if m.role == "tool" and m.tool_call_id:
                fed_back[m.tool_call_id] = m
    unmatched = [run for _, run in runs if not run.call_id]
    _infer_calls(chats, runs)
    report.restored_calls += _restore_dropped_calls(chats)
    for i, (span, d) in enumerate(chats):
        if not _in_window(span.start, sel):
            report.outside_window += 1
            continue
        outcomes = [_outcome(c, by_id, unmatched) for c in d.calls]
        schemas = (
            {t["name"]: t["parameters"] for t in d.tools}
            if d.tools
            else {t.name: t.parameters for t in tools_file or ()}
        )
        _decision_line(sink, span, d, outcomes, info, report, redactor, schemas)
        report.layouts[d.layout] += 1
        if not d.has_content:
            report.without_content += 1
            continue
        if not any(m.role in ("user", "system") for m in d.messages):
            report.without_conversation += 1
            continue
        # production's path from here, as far as a replay goes (so a long trace costs
        # each case at most MAX_REPLAY_STEPS steps, not the rest of the trace)
        steps = [dd for _, dd in chats[i : i + MAX_REPLAY_STEPS]]
        try:
            _case(sink, span, d, outcomes, steps, by_id, fed_back, info, report, redactor,
                  tools_file, tools_source)  # fmt: skip
        except SHAPE_ERRORS as exc:  # pydantic's ValidationError is a ValueError
            report.problems.append(_unusable(span, exc))


Message_ = Any


def _unusable(span: IndexedSpan, exc: Exception) -> Problem:
    """A chat span whose content has the wrong shape: skipped, named with where it was."""
    why = clip(str(exc).splitlines()[0], 160) if str(exc) else type(exc).__name__
    return Problem("unusable span", span.file, span.line, f"skipped: {why}", span.span)


def _in_window(start: int | None, sel: Selection) -> bool:
    if sel.since is None and sel.until is None:
        return True
    if start is None:
        return False
    moment = datetime.fromtimestamp(start / 1e9, tz=UTC)
    if sel.since is not None and moment < sel.since:
        return False
    return not (sel.until is not None and moment >= sel.until)


#: Finish reasons that say the model called tools (providers and conventions differ).
TOOL_FINISH = frozenset({"tool_calls", "tool_call", "tool_use", "function_call"})


def _infer_calls(
    chats: list[tuple[IndexedSpan, Decision]], runs: list[tuple[IndexedSpan, ToolRun]]
) -> None:
    """Without content, a call is known from the finish reason; its tools from the tool
    spans that ran before the next chat span (names and IDs only, never arguments)."""
    for i, (span, d) in enumerate(chats):
        if d.calls or d.has_content or str(d.finish_reason) not in TOOL_FINISH:
            continue
        until = chats[i + 1][0].start if i + 1 < len(chats) else None
        for tspan, run in runs:
            after = tspan.start is not None and span.start is not None and tspan.start >= span.start
            before = until is None or (tspan.start is not None and tspan.start < until)
            if after and before:
                d.calls.append(ToolCall(id=run.call_id, name=run.name))
        if not d.calls:
            d.calls.append(ToolCall(name="(unknown tool)"))


def _restore_dropped_calls(chats: list[tuple[IndexedSpan, Decision]]) -> int:
    """Put back an assistant turn that an instrumentation left out of a later input history.

    openlit drops the assistant messages that hold only tool calls from
    ``gen_ai.input.messages``: the next call's history then shows tool results that
    answer no call, which no provider accepts. Where an earlier chat span of the same
    conversation recorded those calls (same call IDs) as its output, that output is
    put back before the first result it answers. Nothing is invented: a result whose
    call no earlier span recorded stays as it was. Returns how many turns were restored.
    """
    restored = 0
    for i, (_, d) in enumerate(chats):
        if not any(m.role == "tool" for m in d.messages):
            continue
        asked = {c.id for m in d.messages if m.role == "assistant" for c in m.tool_calls if c.id}
        out: list[Message] = []
        for m in d.messages:
            if m.role == "tool" and m.tool_call_id and m.tool_call_id not in asked:
                earlier = next(
                    (
                        e
                        for _, e in reversed(chats[:i])
                        if any(c.id == m.tool_call_id for c in e.calls)
                    ),
                    None,
                )
                if earlier is not None:
                    out.append(
                        Message(role="assistant", content=earlier.text, tool_calls=earlier.calls)
                    )
                    asked.update(c.id for c in earlier.calls if c.id)
                    restored += 1
            out.append(m)
        d.messages = out
    return restored


def _outcome(call: ToolCall, by_id: dict[str, ToolRun], unmatched: list[ToolRun]) -> ToolRun | None:
    if call.id and call.id in by_id:
        return by_id[call.id]
    for run in unmatched:
        if run.name == call.name:
            unmatched.remove(run)
            return run
    return None


def _failed(run: ToolRun | None) -> bool | None:
    if run is None:
        return None
    return bool(
        run.status == 2
        or run.error_type
        or (run.http_status is not None and run.http_status >= 400)
    )


def _decision_line(
    sink: _Out,
    span: IndexedSpan,
    d: Decision,
    outcomes: list[ToolRun | None],
    info: TraceInfo,
    report: ImportReport,
    redactor: Redactor,
    schemas: dict[str, Any],
) -> None:
    calls = []
    for call, run in zip(d.calls, outcomes, strict=True):
        failed = _failed(run)
        report.calls += 1
        if failed is not None:
            report.calls_with_outcome += 1
            report.call_errors += failed
        entry: dict[str, Any] = {
            "tool": call.name,
            "outcome": "unknown" if failed is None else ("error" if failed else "ok"),
            "error_type": run.error_type if run else None,
            "http_status": run.http_status if run else None,
        }
        entry.update(argument_summary(call.arguments, schemas.get(call.name)))
        calls.append(entry)
    report.decisions["call" if d.calls else "no call"] += 1
    line = {
        "trace_id": span.trace,
        "span_id": span.span,
        "time": _iso(span.start),
        "has_content": d.has_content,
        "model": d.model,
        "calls": calls,
        "feedback": info.feedback,
    }
    sink.decisions.write(_line_keeping_ids(redactor, line, "decisions") + "\n")


_SPAN_ID = re.compile(r"[0-9a-f]{16}")


def _shown_problem(problem: Problem, redactor: Redactor) -> str:
    """A problem as the report shows it, redacted; a valid span ID is left as it is (decimal
    digits that pass Luhn are no card), the file and the message redacted each."""
    if problem.span is None or not _SPAN_ID.fullmatch(problem.span):
        return redactor.text(problem.render(), "error messages")
    where = redactor.text(problem.file, "error messages")
    where += f":{problem.line}" if problem.line else ""
    return f"{where} (span {problem.span}): {redactor.text(problem.message, 'error messages')}"


#: The trace's own IDs in a provenance or decision line: hex the reader decoded and
#: checked, never text. Kept as read, so the line still names its span: a span ID of
#: decimal digits only that passes Luhn (4111111111111111) is no card, and replacing it
#: broke the link to the trace (the case ID, made of the same IDs, kept them anyway).
_TRACE_ID_FIELDS = ("trace_id", "span_id", "parent_span_id")


def _line_keeping_ids(redactor: Redactor, data: dict[str, Any], where: str) -> str:
    """``redactor.line(data, where)``, with the trace's own ID fields left as they are."""
    ids = {k: data[k] for k in _TRACE_ID_FIELDS if k in data}
    red = redactor.value({k: v for k, v in data.items() if k not in ids}, where)
    return _dumps({k: ids[k] if k in ids else red[k] for k in data})


def _case(
    sink: _Out,
    span: IndexedSpan,
    d: Decision,
    outcomes: list[ToolRun | None],
    steps: list[Decision],
    by_id: dict[str, ToolRun],
    fed_back: dict[str, Any],
    info: TraceInfo,
    report: ImportReport,
    redactor: Redactor,
    tools_file: list[SuiteTool] | None,
    tools_source: str | None,
) -> None:
    later = [c for step in steps for c in step.calls]
    case_id = _case_id(span.trace, span.span)
    if d.tools:
        # the names production called, from here on and in the conversation so far
        called = {c.name for c in later} | {c.name for m in d.messages for c in m.tool_calls}
        defs = _offered(d.tools, span, called, tools_file, report, sink.seen_defs)
        source = "trace"
    elif tools_file is not None:
        defs, source = list(tools_file), f"file:{tools_source}"
    else:
        names = sorted({c.name for c in later if c.name})
        defs = [
            t for t in (_tool({"name": n, "parameters": {"type": "object"}}) for n in names) if t
        ]
        source = "none (only the names production called)"
    report.tools_from[source.split(":")[0] if source.startswith("file") else source] += 1
    mocks = _mocks(defs, later, by_id, fed_back)
    # the case and its record as plain dicts, key for key as Case(...).model_dump(
    # mode="json", exclude_defaults=True, exclude_none=True) and Record(...).model_dump(
    # mode="json", exclude_none=True) write them (see _dumps; tests/traces/test_dumps.py)
    calls: list[dict[str, Any]] = [
        (
            {"tool": c.name, "args": json_value(c.arguments, f"expect.calls[{j}].args")}
            if c.arguments
            else {"tool": c.name}
        )
        if isinstance(c.arguments, dict)
        else {"tool": c.name, "extra_args": True}
        for j, c in enumerate(d.calls)
    ]
    tags = ["from-production", f"tools-from-{source.split(':')[0].split(' ')[0]}"]
    offered = {t.name for t in defs}
    by_name = {t.name: t for t in defs}
    for j, c in enumerate(calls):
        tool = by_name.get(c["tool"])
        if tool is None or not c.get("args"):
            continue
        problems = expected_args_problems(tool, c["args"])
        if problems:
            # production's arguments break its own tool's schema: the case expects the
            # call, not arguments validate would refuse as an expectation
            path, message = problems[0]
            calls[j] = {"tool": c["tool"]}
            report.problems.append(
                Problem(
                    ARGS_AGAINST_SCHEMA,
                    span.file,
                    span.line,
                    f"expect.calls[{j}].args.{_path(path)}: {message}; production's "
                    f"arguments are left out of the case's expectation (the call of "
                    f"'{c['tool']}' is kept)",
                    span.span,
                )
            )
    expect: dict[str, Any] = {"calls": calls, "order": "superset"} if calls else {}
    if any(c.name not in offered for c in d.calls):
        # production called a tool it was not offered (or one no suite may name): the
        # case keeps the decision (that many calls), not an expectation it cannot state
        expect = {"count": len(d.calls)}
        tags.append("production-called-an-unoffered-tool")
        report.unoffered_calls += 1
    data: dict[str, Any] = {
        "id": case_id,
        "messages": [message_case(m) for m in d.messages],
        "tools": [_case_tool(t, sink) for t in defs],
    }
    if expect:
        data["expect"] = expect
    data["reason"] = "production's decision (unreviewed)"
    data["tags"] = tags
    # multi-step only where production's own path goes on in the trace (a decision
    # with nothing after it is compared as one answer: its results are unknown)
    if len(steps) > 1:
        data["max_steps"] = min(MAX_REPLAY_STEPS, len(steps) + (1 if steps[-1].calls else 0))
        if mocks:
            data["mocks"] = mocks
    if not expect:
        data["expect"] = expect  # an empty expectation is written too, last
    last = steps[-1]
    response: dict[str, Any] = {}
    if last.text is not None:
        response["text"] = last.text
    response["tool_calls"] = [call_record(c) for c in last.calls]
    if last.finish_reason is not None:
        response["stop_reason"] = last.finish_reason
    if d.input_tokens is not None or d.output_tokens is not None:
        usage: dict[str, Any] = {}
        if d.input_tokens is not None:
            usage["input_tokens"] = d.input_tokens
        if d.output_tokens is not None:
            usage["output_tokens"] = d.output_tokens
        response["usage"] = usage
    if last.model is not None:
        response["model"] = last.model
    rec: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "case_id": case_id,
        "target": report.target,
        "attempt": 0,
        "outcome": "ok",
        "response": response,
    }
    if len(steps) > 1:
        rec["transcript"] = _transcript(d.messages, steps, by_id, fed_back)
    if span.start:
        rec["started_at"] = datetime_json(datetime.fromtimestamp(span.start / 1e9, tz=UTC))
    if span.end and span.start:
        rec["latency_ms"] = (span.end - span.start) / 1e6
    rec["cached"] = False
    prov = {
        "case_id": case_id,
        "trace_id": span.trace,
        "span_id": span.span,
        "parent_span_id": span.parent,
        "session_id": info.session,
        "user_id": info.user,
        "conversation_id": info.conversation,
        "start": _iso(span.start),
        "end": _iso(span.end),
        "source": f"{span.file}:{span.line}",
        "layout": d.layout,
        "tools_from": source,
        "model": d.model,
        "provider": d.provider,
        "feedback": info.feedback,
        "outcomes": [
            None
            if run is None
            else {
                "tool": run.name,
                "call_id": run.call_id,
                "failed": _failed(run),
                "error_type": run.error_type,
                "status": run.status,
                "status_message": run.status_message,
                "http_status": run.http_status,
                "result": run.result,
            }
            for run in outcomes
        ],
    }
    stratum = ",".join(sorted({c.name for c in d.calls})) or "(no call)"
    key = _dedup_key(d) if sink.selector.dedup else None
    text = _similar_text(d) if sink.selector.similar is not None else ""
    sink.selector.offer(case_id, stratum, key, (data, rec, prov), text)


def _transcript(
    start: list[Message], steps: list[Decision], by_id: dict[str, ToolRun], fed_back: dict[str, Any]
) -> list[dict[str, Any]]:
    """Production's own multi-step path from this decision to the end of its trace (each
    turn as a record's transcript writes it)."""
    out = [_record_message(m) for m in start]
    for step in steps:
        out.append(message_record("assistant", step.text, step.calls))
        for call in step.calls:
            run = by_id.get(call.id or "")
            msg = fed_back.get(call.id or "")
            if msg is not None:
                out.append(_record_message(msg))
            elif run is not None and run.result is not None:
                text = run.result if isinstance(run.result, str) else _dumps(run.result)
                out.append(message_record("tool", text, [], call.id, call.name, bool(_failed(run))))
    return out


def _record_message(m: Message) -> dict[str, Any]:
    return message_record(m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.is_error)


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip()[:1] == "{":
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # untrusted: nested too deeply is text too
            return value
    return value


def _case_tool(tool: SuiteTool, sink: _Out) -> str | dict[str, Any]:
    """The case's entry for a tool: its name, or its own definition where the suite's
    tools.json holds another of that name."""
    known = sink.tools.get(tool.name)
    if known is None:
        sink.tools[tool.name] = tool
        return tool.name
    if known == tool:
        return tool.name
    return tool.model_dump(mode="json", exclude_defaults=True, exclude_none=True)


def _mocks(
    defs: list[SuiteTool],
    later: list[ToolCall],
    by_id: dict[str, ToolRun],
    fed_back: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """Production's recorded result for each call it made; 'not recorded' for anything else
    (each tool's mock as ToolMock(...).model_dump(mode="json", exclude_defaults=True,
    exclude_none=True) writes it)."""
    rules: dict[str, list[dict[str, Any]]] = {t.name: [] for t in defs}
    for call in later:
        run = by_id.get(call.id or "")
        msg = fed_back.get(call.id or "")
        if run is not None and run.result is not None:
            result, failed = run.result, bool(_failed(run))
            message = run.status_message or run.error_type
        elif msg is not None:
            result, failed, message = msg.content, msg.is_error, None
        else:
            continue
        when = call.arguments if isinstance(call.arguments, dict) else None
        at = f"mocks.{call.name}.rules"
        rule: dict[str, Any] = {} if when is None else {"when": json_value(when, f"{at}.when")}
        if failed:
            # the tool's own error payload {"error": X} is what the mock's error fault
            # sends ({"error": X}); any other failed result is sent as the error's text
            parsed = _maybe_json(result)
            if (
                isinstance(parsed, dict)
                and set(parsed) == {"error"}
                and isinstance(parsed["error"], str)
            ):
                text = parsed["error"]
            else:
                text = result if isinstance(result, str) else _dumps(result)
            rule["fault"] = "error"
            if (text or message) is not None:
                rule["message"] = text or message
        elif result is not None:
            rule["result"] = json_value(result, f"{at}.result")
        if call.name in rules:  # a mock only for a tool the case offers
            rules[call.name].append(rule)
    default = {"fault": "error", "message": NOT_RECORDED}
    return {
        name: ({"rules": r, "default": default} if r else {"default": default})
        for name, r in rules.items()
    }

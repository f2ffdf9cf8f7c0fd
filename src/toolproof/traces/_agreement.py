"""Agreement of a candidate's replay with production: the first decision of each case.

No ground truth: production's own first decision is the reference. For each
replay case the candidate answered (outcome ok), compare its first answer
(the first assistant turn after the case's conversation) with production's:

- same decision: both called a tool, or neither did;
- same tool: where both called, the same tools (as a multiset);
- same arguments: where the tools agree, every call's arguments match
  production's (plain values exactly, as the suite's matchers read them);
- tool change: where production called, the candidate called other tools or none.

Calls recovered from the candidate's text by repair are not counted (the raw answer
is what agrees or not; repair is scored separately).

Each rate comes with a Wilson interval. Cases that differ are listed first,
both calls side by side.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolproof.errors import UserError
from toolproof.match import compile_value, context
from toolproof.records import iter_records, latest_records
from toolproof.stats._rates import wilson_interval
from toolproof.suite import load_suite
from toolproof.types import Case, Outcome, Record, Suite, ToolCall

__all__ = ["Agreement", "CaseAgreement", "agreement", "render_agreement"]


@dataclass(frozen=True, slots=True)
class CaseAgreement:
    case_id: str
    production: list[ToolCall]
    candidate: list[ToolCall]
    same_decision: bool
    same_tool: bool | None
    same_arguments: bool | None
    tool_change: bool | None
    not_recorded: int

    @property
    def differs(self) -> bool:
        return not (
            self.same_decision and self.same_tool is not False and self.same_arguments is not False
        )


@dataclass
class Agreement:
    target: str
    cases: list[CaseAgreement] = field(default_factory=list)
    without_answer: int = 0
    #: the selection judge's 'appropriate' verdicts, case → bool, per side (when judged)
    judge_production: dict[str, bool] = field(default_factory=dict)
    judge_candidate: dict[str, bool] = field(default_factory=dict)

    def rate(self, name: str) -> tuple[int, int, tuple[float, float] | None]:
        values = [getattr(c, name) for c in self.cases if getattr(c, name) is not None]
        k, n = sum(bool(v) for v in values), len(values)
        return k, n, (wilson_interval(k, n) if n else None)

    def as_json(self) -> dict[str, Any]:
        def rate(name: str) -> dict[str, Any]:
            k, n, ci = self.rate(name)
            return {"agree": k, "of": n, "rate": k / n if n else None, "interval95": ci}

        return {
            "target": self.target,
            "cases": len(self.cases),
            "without_answer": self.without_answer,
            "same_decision": rate("same_decision"),
            "same_tool": rate("same_tool"),
            "same_arguments": rate("same_arguments"),
            "tool_change": rate("tool_change"),
            "not_recorded_calls": sum(c.not_recorded for c in self.cases),
            "selection_judge": {
                "advisory": True,
                "production_appropriate": _share(self.judge_production),
                "candidate_appropriate": _share(self.judge_candidate),
            },
            "differing": [
                {
                    "case_id": c.case_id,
                    "production": [_call_json(x) for x in c.production],
                    "candidate": [_call_json(x) for x in c.candidate],
                }
                for c in self.cases
                if c.differs
            ],
        }


def _share(verdicts: dict[str, bool]) -> dict[str, int]:
    return {"appropriate": sum(verdicts.values()), "of": len(verdicts)}


def _selection_verdicts(run: Path, target: str | None) -> dict[str, bool]:
    """The selection judge's 'appropriate' per case, from a run folder's judgements."""
    from toolproof.judges._file import JUDGEMENTS_FILE, read_judgements

    folder = run if run.is_dir() else run.parent
    out: dict[str, bool] = {}
    for j in read_judgements(folder / JUDGEMENTS_FILE):
        if j.rubric != "selection" or j.status != "ok" or j.attempt != 0:
            continue
        if target is not None and j.target not in (None, target):
            continue
        value = (j.fields or {}).get("appropriate")
        if isinstance(value, bool):
            out[j.case_id] = value
    return out


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {
        "tool": call.name,
        "arguments": call.arguments if call.parse_error is None else call.raw_arguments,
    }


def _first_answer(record: Record, start: int) -> list[ToolCall]:
    """The first answer's calls as the model made them (calls recovered from its text by
    repair are not counted: repair is scored separately)."""
    calls: list[ToolCall] = []
    if record.transcript is not None:
        for message in record.transcript[start:]:
            if message.role == "assistant":
                calls = list(message.tool_calls)
                break
    elif record.response is not None:
        calls = list(record.response.tool_calls)
    return [c for c in calls if not c.extracted_from_text]


def _not_recorded(record: Record, start: int) -> int:
    from toolproof.traces._import import NOT_RECORDED

    return sum(
        1
        for m in (record.transcript or [])[start:]
        if m.role == "tool" and m.is_error and NOT_RECORDED in (m.content or "")
    )


def _same_args(prod: list[ToolCall], cand: list[ToolCall], suite: Suite) -> bool:
    ctx = context(suite)
    left = list(cand)
    for p in prod:
        spec = p.arguments if p.parse_error is None else p.raw_arguments
        matcher = compile_value(spec, ctx)
        for c in left:
            value = c.arguments if c.parse_error is None else c.raw_arguments
            if c.name == p.name and matcher.check(value) is None:
                left.remove(c)
                break
        else:
            return False
    return not left


def compare_case(case: Case, suite: Suite, prod: Record, cand: Record) -> CaseAgreement:
    start = len(case.conversation(suite.system))
    p, c = _first_answer(prod, start), _first_answer(cand, start)
    same_decision = bool(p) == bool(c)
    same_tool = Counter(x.name for x in p) == Counter(x.name for x in c) if p and c else None
    same_args = _same_args(p, c, suite) if same_tool else None
    change = (not same_tool) if p else None
    return CaseAgreement(
        case.id, p, c, same_decision, same_tool, same_args, change, _not_recorded(cand, start)
    )


def _records(path: Path) -> list[Record]:
    if path.is_dir():
        path = path / "records.jsonl"
    if not path.is_file():
        raise UserError(f"{path}: no records file here")
    return latest_records(r for _, r in iter_records(path))


def agreement(folder: Path, run: Path) -> list[Agreement]:
    """Each candidate target of ``run`` against production's records in the import ``folder``."""
    suite = load_suite(folder)
    prod_files = sorted((folder / "runs").glob("prod-*/records.jsonl"))
    if not prod_files:
        raise UserError(
            f"{folder}: no production records (runs/prod-*/records.jsonl); is it an import?"
        )
    prod = {r.case_id: r for f in prod_files for r in _records(f) if r.attempt == 0}
    prod_judged: dict[str, bool] = {}
    for f in prod_files:
        prod_judged.update(_selection_verdicts(f.parent, None))
    by_id = {c.id: c for c in suite.cases}
    out: dict[str, Agreement] = {}
    for record in _records(run):
        target = record.target or "(unnamed)"
        if target.startswith("prod:") or record.attempt != 0:
            continue
        if target not in out:
            out[target] = Agreement(
                target,
                judge_production=prod_judged,
                judge_candidate=_selection_verdicts(run, target),
            )
        agg = out[target]
        case, reference = by_id.get(record.case_id), prod.get(record.case_id)
        if case is None or reference is None:
            continue
        if record.outcome is not Outcome.ok:
            agg.without_answer += 1
            continue
        agg.cases.append(compare_case(case, suite, reference, record))
    return list(out.values())


def _show(calls: list[ToolCall]) -> str:
    if not calls:
        return "(no call)"
    shown = []
    for c in calls:
        args = c.arguments if c.parse_error is None else c.raw_arguments
        shown.append(f"{c.name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})")
    return "; ".join(shown)


def _verdict(value: bool | None) -> str:
    if value is None:
        return ""
    return "   [judge: appropriate]" if value else "   [judge: not appropriate]"


def render_agreement(results: list[Agreement], limit: int = 20) -> str:
    from toolproof.report._escape import visible

    lines: list[str] = []
    for agg in results:
        lines.append(
            f"agreement with production · {visible(agg.target)} · {len(agg.cases)} case(s)"
        )
        for label, name in (
            ("same decision (call / no call)", "same_decision"),
            ("same tool", "same_tool"),
            ("same arguments", "same_arguments"),
            ("tool-change rate", "tool_change"),
        ):
            k, n, ci = agg.rate(name)
            shown = f"{k / n:6.1%} ({k}/{n}) [{ci[0]:.0%}–{ci[1]:.0%}]" if n and ci else "  –"
            lines.append(f"  {label:32s} {shown}")
        if agg.judge_production or agg.judge_candidate:
            sp, sc = _share(agg.judge_production), _share(agg.judge_candidate)
            lines.append(
                f"  selection judge, 'appropriate' (advisory): production {sp['appropriate']}/"
                f"{sp['of']}, candidate {sc['appropriate']}/{sc['of']}"
            )
        nr = sum(c.not_recorded for c in agg.cases)
        lines.append(f"  calls production never made ('not recorded'): {nr}")
        if agg.without_answer:
            lines.append(f"  without a model answer (not counted): {agg.without_answer}")
        differing = [c for c in agg.cases if c.differs]
        if differing:
            lines.append(f"differing cases ({len(differing)}), production | candidate:")
            for c in differing[:limit]:
                lines.append(f"  {visible(c.case_id)}")
                jp = _verdict(agg.judge_production.get(c.case_id))
                jc = _verdict(agg.judge_candidate.get(c.case_id))
                lines.append(f"    production  {visible(_show(c.production))}{jp}")
                lines.append(f"    candidate   {visible(_show(c.candidate))}{jc}")
            if len(differing) > limit:
                lines.append(f"  ... {len(differing) - limit} more (--json lists all)")
    return "\n".join(lines)

"""``traces promote``: reviewed replay cases into ordinary cases of a golden suite.

Each case is shown in the terminal (every value escaped): the conversation, the
tools offered and production's decision. The reviewer answers:

- ``r`` production was right: its call (or no call) becomes the expectation;
- ``c`` correct it: type the right tool (empty: no call) and its arguments (JSON);
- ``w`` production was wrong, no correction: recorded, not promoted;
- ``s`` skip for now; ``q`` stop (resume later: the reviews are kept).

Reviews are appended to ``DIR/reviews.jsonl`` as they are given, so a session
resumes where it stopped. Cases from traces with negative feedback come first.
A promoted case is an ordinary single-turn case (no mocks, production's
conversation, its own tool definitions) appended to the ``--into`` cases file,
with its provenance in ``<into>.provenance.jsonl`` beside it. Corrections typed
by the reviewer pass through the same redaction as the import.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel

from toolproof.errors import UserError
from toolproof.judges._label_ui import safe
from toolproof.suite import load_suite
from toolproof.traces._import import negative_feedback
from toolproof.traces._redact import Redactor
from toolproof.types import CallSpec, Case, Expect, Kind

__all__ = ["PromoteResult", "promote"]


@dataclass
class PromoteResult:
    promoted: int = 0
    wrong: int = 0
    skipped: int = 0
    left: int = 0
    into: str = ""


class _Stop(Exception):
    pass


def _reviews(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            out[str(r["case_id"])] = r
        except (ValueError, KeyError, TypeError, RecursionError):  # nested too deeply too
            raise UserError(f"{path}:{number}: not a review line") from None
    return out


def _provenance_lines(folder: Path) -> dict[str, dict[str, Any]]:
    """Each case's provenance, by case ID: a located error for a line that is not one."""
    path = folder / "provenance.jsonl"
    if not path.is_file():
        raise UserError(
            f"{folder}: no provenance.jsonl here; give a folder `toolproof traces import` wrote"
        )
    out: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                p = json.loads(line)
                out[str(p["case_id"])] = p
            except (ValueError, KeyError, TypeError, RecursionError):
                raise UserError(f"{path}:{number}: not a provenance line") from None
    return out


def _show(
    console: Console,
    case: Case,
    prod_calls: list[dict[str, Any]],
    prov: dict[str, Any],
    header: str,
) -> None:
    console.rule(safe(header))
    convo = "\n".join(
        f"{m.role}: {safe(m.content or '')}"
        + "".join(f"\n  → {safe(c.name)}({safe(c.raw_arguments or '')})" for c in m.tool_calls)
        for m in case.messages or []
    )
    console.print(Panel(convo or "(empty)", title="conversation"))
    tools = "\n".join(
        f"{safe(t if isinstance(t, str) else t.name)}"
        + ("" if isinstance(t, str) else f": {safe(t.description)}")
        for t in case.tools or []
    )
    console.print(Panel(tools or "(none)", title="tools offered"))
    decision = (
        "\n".join(f"→ {safe(c['tool'])}({safe(c['args'])})" for c in prod_calls) or "(no call)"
    )
    feedback = prov.get("feedback")
    title = "production's decision" + (
        f" · feedback {safe(feedback)}" if feedback is not None else ""
    )
    console.print(Panel(decision, title=title))


def _ask(console: Console, prompt: str) -> str:
    return console.input(prompt).strip()


def _correction(console: Console, ask: Callable[[Console, str], str], redactor: Redactor) -> Expect:
    tool = ask(console, "right tool (empty: no call, q stops):")
    if tool == "q":
        raise _Stop
    if not tool:
        return Expect(kind=Kind.none)
    while True:
        raw = ask(console, 'its arguments as JSON (e.g. {"city": "Paris"}):') or "{}"
        try:
            args = json.loads(raw)
        except ValueError as exc:
            console.print(f"  not JSON ({safe(str(exc))}); try again")
            continue
        if isinstance(args, dict):
            break
        console.print("  the arguments must be a JSON object")
    args = redactor.value(args, "corrections")
    return Expect(calls=[CallSpec(tool=redactor.text(tool, "corrections"), args=args)])


def promote(
    folder: Path,
    into: Path,
    *,
    reviewer: str,
    console: Console,
    redactor: Redactor,
    ask: Callable[[Console, str], str] = _ask,
) -> PromoteResult:
    prov = _provenance_lines(folder)
    suite = load_suite(folder)
    reviews_path = folder / "reviews.jsonl"
    reviews = _reviews(reviews_path)
    target = _target(into)
    order = sorted(
        (c for c in suite.cases if c.id not in reviews),
        key=lambda c: (not negative_feedback(prov.get(c.id, {}).get("feedback")), c.id),
    )
    result = PromoteResult(into=str(target), left=len(order))
    tools = {t.name: t for t in suite.tools}
    for i, case in enumerate(order, 1):
        calls = [c.model_dump(exclude_none=True) for s in case.expect.call_sets() for c in s]
        for c in calls:
            c["args"] = json.dumps(c.get("args", {}), ensure_ascii=False, sort_keys=True)
        _show(console, case, calls, prov.get(case.id, {}), f"{i}/{len(order)} · {case.id}")
        try:
            answer = ""
            while answer not in ("r", "c", "w", "s"):
                answer = ask(
                    console,
                    "production was [r]ight, [c]orrect it, [w]rong, [s]kip, [q]uit (r/c/w/s/q):",
                )
                if answer == "q":
                    raise _Stop
            if answer == "s":
                result.skipped += 1
                result.left -= 1
                continue
            expect = None
            if answer == "r":
                expect = (
                    case.expect.model_copy(update={"order": None})
                    if case.expect.calls
                    else Expect(kind=Kind.none)
                )
            elif answer == "c":
                expect = _correction(console, ask, redactor)
        except _Stop:
            break
        review = redactor.value(  # the reviewer's name too: it goes into every file written
            {
                "case_id": case.id,
                "review": {"r": "right", "c": "corrected", "w": "wrong"}[answer],
                "reviewer": reviewer,
                "at": datetime.now(UTC).isoformat(),
            },
            "reviews",
        )
        if expect is not None:
            _append(target, case, expect, tools, review, prov.get(case.id, {}))
            result.promoted += 1
        else:
            result.wrong += 1
        with reviews_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(review, ensure_ascii=False) + "\n")
        result.left -= 1
    return result


def _target(into: Path) -> Path:
    """The cases file ``--into`` names: a ``.jsonl`` file, else a folder's
    ``production-cases.jsonl`` (the folder made when missing). Checked before any
    question, so that no review is given for a case that cannot be written."""
    if into.is_dir() or (into.suffix.lower() != ".jsonl" and not into.exists()):
        target = into / "production-cases.jsonl"
    elif into.suffix.lower() != ".jsonl":
        raise UserError(
            f"--into {into}: is neither a folder nor a cases file (.jsonl); not written to"
        )
    else:
        target = into
    for path in (target, _provenance(target)):
        if path.exists() and not path.is_file():
            raise UserError(f"--into {into}: {path} is not a file")
    above = target.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise UserError(f"--into {into}: {above} is a file, not a folder")
    return target


def _provenance(target: Path) -> Path:
    return target.with_name(target.stem + ".provenance.jsonl")


def _append(
    target: Path,
    case: Case,
    expect: Expect,
    tools: dict[str, Any],
    review: dict[str, Any],
    prov: dict[str, Any],
) -> None:
    defs = [tools.get(t) if isinstance(t, str) else t for t in case.tools or []]
    promoted = Case(
        id=case.id,
        messages=case.messages,
        tools=[t for t in defs if t is not None],
        expect=expect,
        reason=f"production's decision, reviewed {review['review']} by {review['reviewer']}",
        tags=["from-production", f"reviewed-{review['review']}"],
    )
    data = promoted.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
    data["expect"] = expect.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as f:
        f.write(json.dumps(data, ensure_ascii=False) + "\n")
    with _provenance(target).open("a", encoding="utf-8") as f:
        f.write(json.dumps({**prov, "review": review}, ensure_ascii=False) + "\n")

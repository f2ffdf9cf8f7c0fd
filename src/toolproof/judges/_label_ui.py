"""The terminal labeller: show one transcript, ask for the rubric's fields, append the label."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from toolproof.judges._judge import record_digest
from toolproof.judges._labels import Label, LabelKey, append_label
from toolproof.judges._parse import FieldValue
from toolproof.judges._prompt import ArgumentItem, argument_item, transcript_data
from toolproof.match import Question
from toolproof.types import Case, Record, Rubric, RubricField, Suite

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class _Stop(Exception):
    """The labeller asked to stop."""


def safe(text: Any) -> str:
    """Model output for the terminal: control and bidi characters shown as escapes, no markup."""
    s = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return escape(_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", s))


def show(console: Console, data: dict[str, Any], header: str) -> None:
    console.rule(safe(header))
    if data.get("assistant_instructions"):
        console.print(Panel(safe(data["assistant_instructions"]), title="system prompt"))
    task = "\n".join(
        f"{m['role']}: {safe(m.get('text') or m.get('result') or '')}"
        for m in data["conversation_before_the_assistant"]
    )
    console.print(Panel(task, title="task"))
    tools = [_tool_line(t) for t in data["tools_offered"]]
    tools += [  # the tools a user turn offered later (``offer``), as the judge sees them
        _tool_line(t, f" (offered from user turn {t['offered_from_simulated_user_turn']})")
        for t in data.get("tools_offered_later", ())
    ]
    console.print(Panel("\n".join(tools) or "(none)", title="tools offered"))
    lines = []
    for m in data.get("assistant_turns_and_tool_results", []):
        if m["role"] == "tool":
            flag = " (error)" if m.get("is_error") else ""
            lines.append(f"  ← {safe(m.get('tool'))}{flag}: {safe(m.get('result'))}")
            continue
        for c in m.get("tool_calls", []):
            lines.append(f"→ {safe(c['tool'])}({safe(c['arguments'])})")
        who = "user" if m["role"] == "user" else "assistant"  # a conversation's user too
        if m.get("text"):
            lines.append(f"{who}: {safe(m['text'])}")
        if m.get("offers_the_assistant_tools"):
            offered = ", ".join(safe(n) for n in m["offers_the_assistant_tools"])
            lines.append(f"(offers the assistant: {offered})")
    console.print(Panel("\n".join(lines) or "(nothing)", title="what the model did"))
    if "end_state" in data:
        console.print(Panel(safe(data["end_state"]), title="end state"))
    if "end_state_changes" in data:
        changes = "\n".join(safe(c) for c in data["end_state_changes"])
        console.print(Panel(changes or "(none)", title="end state: changes"))


def _tool_line(t: dict[str, Any], note: str = "") -> str:
    confirm = ", needs confirmation" if t["requires_confirmation"] else ""
    params = json.dumps(t["parameters"].get("properties", {}), ensure_ascii=False)
    return (
        f"{safe(t['name'])} ({t['effect']}{confirm}): {safe(t['description'])}{note}"
        f"\n    {safe(params)}"
    )


def ask_field(console: Console, name: str, spec: RubricField) -> FieldValue:
    """Ask until the answer is valid for the field. ``q`` stops, ``s`` skips the item."""
    if spec.type == "bool":
        hint = "y/n"
    elif spec.type == "int":
        hint = f"integer ≥ {spec.min}" + (f", ≤ {spec.max}" if spec.max is not None else "")
    else:
        hint = " ".join(f"{i + 1}={v}" for i, v in enumerate(spec.values or []))
    while True:
        raw = console.input(Text.assemble((name, "bold"), f" ({hint}): ")).strip()
        if raw == "q":
            raise _Stop
        if raw == "s":
            raise _Skip
        value = _value(raw, spec)
        if value is not None:
            return value
        console.print(f"  not a valid answer; {escape(hint)} (s skips, q stops)")


class _Skip(Exception):
    """Skip this item."""


def _value(raw: str, spec: RubricField) -> FieldValue | None:
    if spec.type == "bool":
        return {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}.get(
            raw.lower()
        )
    if spec.type == "int":
        try:
            v = int(raw)
        except ValueError:
            return None
        if spec.min is not None and v < spec.min:
            return None
        if spec.max is not None and v > spec.max:
            return None
        return v
    values = spec.values or []
    if raw in values:
        return raw
    if raw.isdigit() and 1 <= int(raw) <= len(values):
        return values[int(raw) - 1]
    return None


def _ask_and_keep(
    console: Console,
    rubric: Rubric,
    path: Path,
    rec: Record,
    labeller: str,
    argument: ArgumentItem | None = None,
) -> int | None:
    """Ask the rubric's fields and a note, and append the label at once: 1 when labelled,
    0 when skipped, None when the labeller stops."""
    try:
        fields = {n: ask_field(console, n, s) for n, s in rubric.fields.items()}
        note = console.input(Text("note (optional): ")).strip()
    except _Skip:
        return 0
    except (_Stop, EOFError):
        return None
    append_label(
        path,
        Label(
            case_id=rec.case_id,
            target=rec.target,
            attempt=rec.attempt,
            record=record_digest(rec),
            argument=argument,
            fields=fields,
            labeller=labeller,
            labelled_at=datetime.now(UTC),
            note=note or None,
        ),
    )
    return 1


def label_loop(
    suite: Suite,
    cases: dict[str, Case],
    records: Sequence[Record],
    rubric_name: str,
    rubric: Rubric,
    path: Path,
    labeller: str,
    console: Console,
) -> int:
    """Label records one by one, appending each label as soon as it is given."""
    done = 0
    for i, rec in enumerate(records, start=1):
        case = cases[rec.case_id]
        show(
            console,
            transcript_data(suite, case, rec),
            f"{i}/{len(records)} · {case.id} · {rec.target} · attempt {rec.attempt}",
        )
        console.print(
            f"rubric {escape(rubric_name)}: {escape(rubric.instructions)}", highlight=False
        )
        answered = _ask_and_keep(console, rubric, path, rec, labeller)
        if answered is None:
            break
        done += answered
    return done


# --- judge-decided arguments (rubric argument_meaning) -----------------------------------------


@dataclass(frozen=True)
class ArgumentToLabel:
    """One judge-decided argument of one record: what a label of it carries."""

    record: Record
    argument: ArgumentItem

    @property
    def key(self) -> LabelKey:
        rec = self.record
        return (rec.case_id, rec.target, rec.attempt, self.argument.question().subject)


def argument_items(
    suite: Suite,
    records: Sequence[Record],
    compared: Mapping[tuple[str | None, str, int], Sequence[Question]],
) -> list[ArgumentToLabel]:
    """One item per (record, judge-decided argument compared in it), in record order.

    The argument is described exactly as the judge is shown it at scoring time.
    """
    out = []
    for rec in records:
        for q in compared.get((rec.target, rec.case_id, rec.attempt), ()):
            out.append(ArgumentToLabel(rec, argument_item(suite, q)))
    return out


def show_argument(console: Console, item: ArgumentItem, header: str) -> None:
    console.rule(safe(header))
    tool = safe(item.tool) + (f": {safe(item.tool_description)}" if item.tool_description else "")
    console.print(Panel(tool, title="tool"))
    param = safe(item.parameter)
    if item.parameter_description:
        param += f": {safe(item.parameter_description)}"
    if item.parameter_schema is not None:
        param += f"\n    {safe(item.parameter_schema)}"
    console.print(Panel(param, title="parameter"))
    console.print(Panel(safe(item.expected_text), title="expected text"))
    console.print(Panel(safe(item.value), title="the model's value"))


def label_arguments(
    items: Sequence[ArgumentToLabel],
    rubric_name: str,
    rubric: Rubric,
    path: Path,
    labeller: str,
    console: Console,
) -> int:
    """Label judge-decided arguments one by one, appending each label as soon as it is given."""
    done = 0
    for i, item in enumerate(items, start=1):
        rec = item.record
        show_argument(
            console,
            item.argument,
            f"{i}/{len(items)} · {rec.case_id} · {rec.target} · attempt {rec.attempt} · "
            f"{item.argument.tool}.{item.argument.parameter}",
        )
        console.print(
            f"rubric {escape(rubric_name)}: does the model's value mean the same as the "
            "expected text, for this parameter?",
            highlight=False,
        )
        answered = _ask_and_keep(console, rubric, path, rec, labeller, item.argument)
        if answered is None:
            break
        done += answered
    return done

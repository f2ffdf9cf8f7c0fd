"""The import report as terminal text (every value from the traces escaped)."""

from __future__ import annotations

from typing import Any

__all__ = ["render_import"]


def _esc(value: Any) -> str:
    from toolproof.report._escape import visible

    return visible(str(value))


def render_import(data: dict[str, Any], *, dry_run: bool = False) -> str:
    lines = [
        ("dry run: nothing written. " if dry_run else "")
        + f"{data['files']} file(s): {data['spans']} span(s), {data['log_records']} log record(s), "
        f"{data['traces']} trace(s) with model or tool spans",
        f"chat spans: {data['chat_spans']}  ->  replay cases: {data['replay_cases']}  "
        f"(no content captured: {data['chat_spans_without_content']}, no conversation: "
        f"{data['chat_spans_without_conversation']})",
        "layouts: " + ", ".join(f"{_esc(k)} {v}" for k, v in data["layouts"].items()),
        "tools from: "
        + (", ".join(f"{_esc(k)} {v}" for k, v in data["tools_from"].items()) or "-"),
        f"decisions: {data['decisions'].get('call', 0)} call, "
        f"{data['decisions'].get('no call', 0)} no call; calls {data['calls']}, with a recorded "
        f"outcome {data['calls_with_outcome']}, failed downstream {data['call_errors']}",
        f"production's target: {_esc(data['target'])}",
    ]
    if data.get("outside_time_window") or data.get("without_negative_feedback"):
        lines.append(
            f"left out: {data['outside_time_window']} chat span(s) outside the time window, "
            f"{data['without_negative_feedback']} without negative feedback"
        )
    if data.get("assistant_turns_restored"):
        lines.append(
            f"assistant turns restored: {data['assistant_turns_restored']} (tool calls missing "
            "from a later input history, put back from the span that recorded them)"
        )
    if data.get("near_duplicates_removed") or data.get("near_duplicates_by"):
        by = data.get("near_duplicates_by")
        shown = f" ({', '.join(f'{k} {v}' for k, v in by.items())})" if by else ""
        lines.append(f"near-duplicates removed: {data['near_duplicates_removed']}{shown}")
    if data.get("sampled_by_stratum"):
        lines.append(
            "sampled (kept/of, by production's tools): "
            + ", ".join(f"{_esc(k)} {v[0]}/{v[1]}" for k, v in data["sampled_by_stratum"].items())
        )
    red = data["redaction"]
    kinds = ", ".join(f"{k} {v}" for k, v in red.get("by_kind", {}).items()) or "nothing found"
    lines.append(f"redacted: {kinds}")
    fields = red.get("by_field", {})
    if fields:
        lines.append(
            "  by field: " + ", ".join(f"{_esc(k)} {v}" for k, v in list(fields.items())[:8])
        )
    skipped = data["skipped"]
    if skipped or data["spans_without_parent_in_input"] or data["spans_starting_before_parent"]:
        lines.append(
            "skipped: "
            + (", ".join(f"{_esc(k)} {v}" for k, v in skipped.items()) or "none")
            + f"; spans whose parent is not in the input: {data['spans_without_parent_in_input']}"
            + f"; spans starting before their parent: {data['spans_starting_before_parent']}"
        )
        for problem in data["problems"][:10]:
            lines.append(f"  {_esc(problem)}")
        total, kept = sum(skipped.values()), len(data["problems"])
        if total > 10:
            where = (
                "in import-report.json"
                if total == kept
                else (f"(import-report.json names the first {kept})")
            )
            lines.append(f"  ... {total - 10} more {where}")
    return "\n".join(lines)

"""Drift between two windows: tool selection (no call included) and the tool-call error rate.

A window is an import folder (its ``decisions.jsonl``: every chat span, with or
without content) or a run folder (its ``records.jsonl``: each attempt's first
answer, and the tool errors in its transcript). Both are read as streams; only
counts are kept.

- **Selection**: each decision counts once per distinct tool it called, or once
  as ``(no call)``. The two distributions are compared with a chi-square test
  of homogeneity (scipy) and the Jensen–Shannon distance (base 2, 0..1).
  The selection alert fires when p < ``alpha`` and the distance ≥ ``max_js``.
- **tool_call_error_rate**: calls rejected downstream (error status, an
  ``error.type``, HTTP ≥ 400, a tool error in a replay) over calls whose
  outcome is known, with a Wilson interval. The alert fires when the interval's
  lower bound is above the threshold (default 1%): the rate is above it with 95%
  confidence, not by noise.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolproof.errors import UserError
from toolproof.stats._rates import wilson_interval
from toolproof.traces._read import has_long_number

__all__ = [
    "NO_CALL",
    "Drift",
    "Window",
    "count_decision",
    "drift",
    "read_window",
    "render_drift",
]

NO_CALL = "(no call)"


@dataclass
class Window:
    source: str
    kind: str
    decisions: int = 0
    selection: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    calls_with_outcome: int = 0
    call_errors: int = 0
    #: (tool, parameter) -> value -> count, for boolean and enum arguments
    values: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    #: (tool, parameter) -> [calls without it, calls that could have given it]
    optional: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    #: store windows: attempts whose raw record (their arguments) was not found
    arguments_unread: int = 0

    def call_rate(self) -> float | None:
        """The share of decisions that called at least one tool."""
        if not self.decisions:
            return None
        return 1 - self.selection[NO_CALL] / self.decisions

    def error_rate(self) -> tuple[float | None, tuple[float, float] | None]:
        n = self.calls_with_outcome
        if not n:
            return None, None
        return self.call_errors / n, wilson_interval(self.call_errors, n)


def read_window(path: Path) -> Window:
    """An import folder or a run folder (or a decisions / records file) as counts."""
    if path.is_dir() and (path / "decisions.jsonl").is_file():
        return _from_decisions(path / "decisions.jsonl", str(path))
    if path.is_dir() and (path / "records.jsonl").is_file():
        return _from_records(path / "records.jsonl", str(path))
    if path.is_file() and path.name.endswith("decisions.jsonl"):
        return _from_decisions(path, str(path))
    if path.is_file():
        return _from_records(path, str(path))
    raise UserError(f"{path}: neither an import folder (decisions.jsonl) nor a run folder")


def _from_decisions(path: Path, shown: str) -> Window:
    w = Window(shown, "import")
    with path.open("rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = _loads(line)
                calls = d["calls"]
                tools = {str(c["tool"]) for c in calls}
                outcomes = [c.get("outcome") for c in calls]
                for c in calls:
                    _count_args(w, str(c["tool"]), c.get("categorical"), c.get("optional_given"))
            except RecursionError:  # the line is untrusted: nested past any parser's depth
                raise UserError(
                    f"{path}:{number}: not a decision line (nested too deeply)"
                ) from None
            except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
                raise UserError(f"{path}:{number}: not a decision line ({exc})") from None
            count_decision(w, tools, len(calls), outcomes)
    return w


def _loads(line: bytes) -> Any:
    """``json.loads`` (its values and its errors), by orjson where that reads the same."""
    if not has_long_number(line):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


def argument_summary(arguments: Any, schema: Any) -> dict[str, Any]:
    """What argument drift reads of one call: its boolean and enum values, and which
    optional parameters it gave (only with the tool's schema and an object of arguments)."""
    if not isinstance(schema, dict) or not isinstance(arguments, dict):
        return {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {}
    required = schema.get("required", [])
    # untrusted: a `required` that is not a list says nothing of which parameters are optional
    trusted = isinstance(required, list)
    required = {r for r in required if isinstance(r, str)} if trusted else set()
    values: dict[str, Any] = {}
    for name, value in arguments.items():
        spec = props.get(name)
        if isinstance(value, bool) or (
            isinstance(spec, dict)
            and isinstance(spec.get("enum"), list)
            and isinstance(value, str | int)
            and value in spec["enum"]
        ):
            values[name] = value
    optional = {n: n in arguments for n in props if n not in required} if trusted else {}
    return {"categorical": values, "optional_given": optional}


def request_schemas(request: Any) -> dict[str, Any]:
    """Tool name -> parameters schema, from the tools a recorded request offered: toolproof's
    own request ({name, parameters}), OpenAI's ({function: {name, parameters}}) or
    Anthropic's ({name, input_schema}). Anything else gives nothing (records are untrusted)."""
    tools = request.get("tools") if isinstance(request, dict) else None
    out: dict[str, Any] = {}
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        inner: dict[str, Any] = function if isinstance(function, dict) else tool
        name = inner.get("name")
        schema = inner.get("parameters", inner.get("input_schema"))
        if isinstance(name, str) and isinstance(schema, dict):
            out.setdefault(name, schema)
    return out


def record_schemas(request: Any, steps: Any) -> dict[str, Any]:
    """The tools an attempt was offered: its request's, else its first step's request's."""
    found = request_schemas(request)
    if not found and isinstance(steps, list) and steps and isinstance(steps[0], dict):
        found = request_schemas(steps[0].get("request"))
    return found


def count_arguments(w: Window, calls: list[tuple[str, Any]], schemas: dict[str, Any]) -> None:
    """Each (tool, arguments) of a decision into the window's argument counts."""
    for tool, arguments in calls:
        summary = argument_summary(arguments, schemas.get(tool))
        _count_args(w, tool, summary.get("categorical"), summary.get("optional_given"))


def _count_args(w: Window, tool: str, values: Any, optional: Any) -> None:
    for name, value in (values or {}).items():
        shown = json.dumps(value) if not isinstance(value, str) else value
        w.values.setdefault((tool, str(name)), Counter())[shown] += 1
    for name, given in (optional or {}).items():
        slot = w.optional.setdefault((tool, str(name)), [0, 0])
        slot[0] += not given
        slot[1] += 1


def count_decision(w: Window, tools: set[str], calls: int, outcomes: list[Any]) -> None:
    """One decision into a window: its distinct tools (or no call), its calls and outcomes."""
    w.decisions += 1
    if tools:
        w.selection.update(tools)
    else:
        w.selection[NO_CALL] += 1
    w.calls += calls
    for outcome in outcomes:
        if outcome in ("ok", "error"):
            w.calls_with_outcome += 1
            w.call_errors += outcome == "error"


def _from_records(path: Path, shown: str) -> Window:
    from toolproof.records import iter_records
    from toolproof.types import Outcome

    w = Window(shown, "run")
    for _, record in iter_records(path):
        if record.outcome is not Outcome.ok or (record.target or "").startswith("prod:"):
            continue
        first, calls, outcomes = record_decision(record)
        count_decision(w, {c.name for c in first}, calls, outcomes)
        count_arguments(
            w, [(c.name, c.arguments) for c in first], record_schemas(record.request, record.steps)
        )
    return w


def record_decision(record: Any) -> tuple[list[Any], int, list[Any]]:
    """An attempt's first answer's calls, how many calls it made in all, and the outcome of
    each tool result its transcript holds."""
    first: list[Any] = []
    outcomes: list[Any] = []
    if record.transcript is not None:
        seen_assistant = False
        for m in record.transcript[_start(record) :]:
            if m.role == "assistant" and not seen_assistant:
                seen_assistant, first = True, list(m.tool_calls)
            elif m.role == "tool":
                outcomes.append("error" if m.is_error else "ok")
        if not seen_assistant and record.response:
            first = list(record.response.tool_calls)
    elif record.response is not None:
        first = list(record.response.tool_calls)
    calls = sum(
        len(m.tool_calls)
        for m in (record.transcript or [])[_start(record) :]
        if m.role == "assistant"
    )
    return first, calls or len(first), outcomes


def _start(record: Any) -> int:
    """Where the attempt's own turns begin: after the messages its first request sent."""
    steps = record.steps or []
    if steps and isinstance(steps[0], dict):
        request = steps[0].get("request")
        if isinstance(request, dict) and isinstance(request.get("messages"), list):
            return len(request["messages"])
    return 0


@dataclass
class Drift:
    baseline: Window
    current: Window
    chi2: float | None
    p_value: float | None
    js_distance: float | None
    moved: list[tuple[str, float, float]]
    new: list[str]
    vanished: list[str]
    threshold: float
    alpha: float
    max_js: float
    alerts: list[str]
    #: (tool.parameter, JS distance, p, baseline shares, current shares), most moved first
    arguments: list[tuple[str, float, float | None, dict[str, float], dict[str, float]]] = field(
        default_factory=list
    )
    #: (tool.parameter, baseline absent rate, current absent rate), biggest change first
    absent: list[tuple[str, float, float]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        def win(w: Window) -> dict[str, Any]:
            rate, ci = w.error_rate()
            return {
                "source": w.source,
                "kind": w.kind,
                "decisions": w.decisions,
                "call_rate": w.call_rate(),
                "selection": dict(w.selection.most_common()),
                "calls": w.calls,
                "calls_with_outcome": w.calls_with_outcome,
                "call_errors": w.call_errors,
                "tool_call_error_rate": rate,
                "interval95": ci,
                **({"arguments_unread": w.arguments_unread} if w.kind == "store" else {}),
            }

        return {
            "format": "toolproof.drift/1",
            "baseline": win(self.baseline),
            "current": win(self.current),
            "selection": {
                "chi2": self.chi2,
                "p_value": self.p_value,
                "js_distance": self.js_distance,
                "moved": [{"tool": t, "baseline": b, "current": c} for t, b, c in self.moved],
                "new": self.new,
                "vanished": self.vanished,
            },
            "arguments": [
                {"parameter": p, "js_distance": js, "p_value": pv, "baseline": b, "current": c}
                for p, js, pv, b, c in self.arguments
            ],
            "absent_optional": [
                {"parameter": p, "baseline": b, "current": c} for p, b, c in self.absent
            ],
            "thresholds": {
                "error_rate": self.threshold,
                "alpha": self.alpha,
                "max_js": self.max_js,
            },
            "alerts": self.alerts,
        }


def drift(
    baseline: Window, current: Window, *, threshold: float = 0.01, alpha: float = 0.01,
    max_js: float = 0.1,
) -> Drift:  # fmt: skip
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import chi2_contingency

    tools = sorted(set(baseline.selection) | set(current.selection))
    b = [baseline.selection[t] for t in tools]
    c = [current.selection[t] for t in tools]
    chi2 = p = js = None
    if sum(b) and sum(c):
        js = float(jensenshannon(b, c, base=2))
        if len(tools) >= 2:
            result = chi2_contingency([b, c])
            chi2, p = float(result[0]), float(result[1])
    pb = {t: baseline.selection[t] / max(1, sum(b)) for t in tools}
    pc = {t: current.selection[t] / max(1, sum(c)) for t in tools}
    moved = sorted(((t, pb[t], pc[t]) for t in tools), key=lambda x: -abs(x[2] - x[1]))
    alerts: list[str] = []
    if p is not None and js is not None and p < alpha and js >= max_js:
        alerts.append(
            f"tool selection drifted: chi-square p = {p:.2g} < {alpha:g}, "
            f"Jensen-Shannon distance {js:.3f} >= {max_js:g}"
        )
    rate, ci = current.error_rate()
    if rate is not None and ci is not None and ci[0] > threshold:
        alerts.append(
            f"tool_call_error_rate {rate:.1%} ({current.call_errors}/{current.calls_with_outcome}, "
            f"95% interval {ci[0]:.1%}-{ci[1]:.1%}) is above {threshold:.1%}"
        )
    args = _argument_drift(baseline, current)
    for name, dist, pv, _, _ in args:
        if pv is not None and pv < alpha and dist >= max_js:
            alerts.append(
                f"argument {name} drifted: chi-square p = {pv:.2g} < {alpha:g}, "
                f"Jensen-Shannon distance {dist:.3f} >= {max_js:g}"
            )
    absent = []
    for key in sorted(set(baseline.optional) & set(current.optional)):
        (bm, bn), (cm, cn) = baseline.optional[key], current.optional[key]
        if bn and cn:
            absent.append((".".join(key), bm / bn, cm / cn))
    absent.sort(key=lambda x: -abs(x[2] - x[1]))
    return Drift(
        baseline, current, chi2, p, js, moved[:10],
        [t for t in tools if not baseline.selection[t] and current.selection[t]],
        [t for t in tools if baseline.selection[t] and not current.selection[t]],
        threshold, alpha, max_js, alerts, args[:10], absent[:10],
    )  # fmt: skip


def _argument_drift(
    baseline: Window, current: Window
) -> list[tuple[str, float, float | None, dict[str, float], dict[str, float]]]:
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import chi2_contingency

    out = []
    for key in sorted(set(baseline.values) & set(current.values)):
        b, c = baseline.values[key], current.values[key]
        cats = sorted(set(b) | set(c))
        bv, cv = [b[x] for x in cats], [c[x] for x in cats]
        if not sum(bv) or not sum(cv):
            continue
        dist = float(jensenshannon(bv, cv, base=2))
        pv = float(chi2_contingency([bv, cv])[1]) if len(cats) >= 2 else None
        shares_b = {x: b[x] / sum(bv) for x in cats}
        shares_c = {x: c[x] / sum(cv) for x in cats}
        out.append((".".join(key), dist, pv, shares_b, shares_c))
    out.sort(key=lambda x: -x[1])
    return out


def render_drift(d: Drift, fmt: str = "terminal") -> str:
    from toolproof.report._escape import md_text, visible

    md = fmt == "markdown"

    def esc(text: str) -> str:
        # markdown as the reports escape it (no HTML, no formatting, no mentions), one line
        return md_text(text, limit=1000) if md else visible(text)

    lines: list[str] = []
    head = "## Drift" if md else "drift"
    lines.append(f"{head}: {esc(d.baseline.source)} → {esc(d.current.source)}")
    lines.append("")
    for label, w in (("baseline", d.baseline), ("current", d.current)):
        rate, ci = w.error_rate()
        if rate is not None and ci:
            err = f"{rate:.1%} [{ci[0]:.1%}–{ci[1]:.1%}] ({w.call_errors}/{w.calls_with_outcome})"
        elif w.kind == "store":
            err = "– (the store keeps no tool results)"
        else:
            err = f"– ({w.call_errors}/{w.calls_with_outcome})"
        lines.append(
            f"{'- ' if md else '  '}{label}: {w.decisions} decisions, {w.calls} calls, "
            f"tool_call_error_rate {err}"
        )
        if w.arguments_unread:
            lines.append(
                f"{'  ' if md else '    '}({w.arguments_unread} of its attempts' records are not "
                "in their run folders: their arguments are not counted)"
            )
    lines.append("")
    rb, rc = d.baseline.call_rate(), d.current.call_rate()
    if rb is not None and rc is not None:
        lines.append(
            f"{'**call rate**' if md else 'call rate'}: {rb:.1%} → {rc:.1%} ({rc - rb:+.1%}) "
            "of decisions called a tool"
        )
    sel = "–"
    if d.js_distance is not None:
        sel = f"Jensen–Shannon distance {d.js_distance:.3f}"
        if d.p_value is not None:
            sel += f", chi-square {d.chi2:.2f}, p = {d.p_value:.3g}"
    lines.append(f"{'**tool selection**' if md else 'tool selection'}: {sel}")
    if md:
        lines += ["", "| tool | baseline | current | change |", "|---|---:|---:|---:|"]
        for t, b, c in d.moved:
            lines.append(f"| {esc(t)} | {b:.1%} | {c:.1%} | {c - b:+.1%} |")
    else:
        for t, b, c in d.moved:
            lines.append(f"  {esc(t):30s} {b:6.1%} → {c:6.1%}  ({c - b:+.1%})")
    if d.new:
        lines.append(f"new tools: {', '.join(esc(t) for t in d.new)}")
    if d.vanished:
        lines.append(f"vanished tools: {', '.join(esc(t) for t in d.vanished)}")
    if d.arguments:
        lines.append("")
        title = "argument values (boolean and enum)"
        lines.append(f"**{title}**" if md else title)
        for name, dist, pv, sb, sc in d.arguments[:5]:
            moves = ", ".join(
                f"{esc(k)} {sb.get(k, 0):.0%}→{sc.get(k, 0):.0%}" for k in sorted(set(sb) | set(sc))
            )
            pshown = f", p = {pv:.3g}" if pv is not None else ""
            lines.append(f"{'- ' if md else '  '}{esc(name)}: JS {dist:.3f}{pshown} ({moves})")
    if d.absent:
        lines.append("")
        title = "optional arguments left out"
        lines.append(f"**{title}**" if md else title)
        for name, rb, rc in d.absent[:5]:
            lines.append(f"{'- ' if md else '  '}{esc(name)}: {rb:.0%} → {rc:.0%}")
    lines.append("")
    if d.alerts:
        for alert in d.alerts:
            lines.append(f"{'- ' if md else ''}ALERT: {esc(alert)}")
    else:
        lines.append(
            f"no alert (error rate threshold {d.threshold:.1%}, selection alpha {d.alpha:g} "
            f"and distance {d.max_js:g})"
        )
    return "\n".join(lines)

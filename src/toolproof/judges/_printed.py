"""Judged figures in the terminal, every one marked as coming from a judge."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolproof.judges._blocking import calibration_status
from toolproof.judges._calibrate import Calibration
from toolproof.judges._figures import RubricFigures
from toolproof.types import CalibrationPolicy

JUDGE_MARK = "⚖"


def render_figures(
    figures: Sequence[RubricFigures],
    console: Console,
    calibrations: Sequence[Calibration] = (),
    policy: CalibrationPolicy | None = None,
) -> None:
    """One table per rubric: target, field, figure; a ⚖ marks every judged figure."""
    policy = policy or CalibrationPolicy()
    for fig in figures:
        table = Table(
            title=f"{JUDGE_MARK} judged by {escape(fig.judge)} · rubric {escape(fig.rubric)} · "
            f"fingerprint {fig.fingerprint}",
            title_justify="left",
        )
        table.add_column("target", overflow="fold")
        table.add_column("field", overflow="fold")
        table.add_column(f"{JUDGE_MARK} figure", justify="right", overflow="fold")
        table.add_column("calibration", overflow="fold")
        for f in fig.fields:
            _, why = calibration_status(fig.rubric, f.field, fig.fingerprint, calibrations, policy)
            if f.rate is not None:
                shown = (
                    "–"
                    if f.rate.value is None
                    else (
                        f"{100 * f.rate.value:.1f}% ({f.rate.k}/{f.rate.n}) "
                        f"[{100 * (f.rate.low or 0):.0f}–{100 * (f.rate.high or 0):.0f}]"
                    )
                )
            elif f.total is not None:
                mean = "–" if f.mean is None else f"{f.mean:.2f}"
                shown = f"total {f.total}, mean {mean}"
            else:
                shown = ", ".join(f"{escape(k)} {v}" for k, v in (f.counts or {}).items() if v)
            table.add_row(escape(fig.target), escape(f.field), shown, escape(why))
        console.print(table)
        console.print(
            f"  judged {fig.judged}; judge errors {fig.judge_errors} (not verdicts); "
            f"judge infrastructure errors {fig.infra}",
            highlight=False,
        )


def _seconds(mean: float | None, median: float | None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.2f} s mean" + (f", {median:.2f} s median" if median is not None else "")


def _confusion(
    field: str, labels: Sequence[str], rows: Sequence[Sequence[int]], console: Console
) -> None:
    """The confusion matrix, label by row and judge by column; when the labels' names do
    not fit across the terminal, the columns are numbered and the rows name the numbers."""
    names = [escape(x)[:24] for x in labels]
    counts_w = max((len(str(v)) for row in rows for v in row), default=1)
    col_w = max(max((len(x) for x in names), default=1), counts_w)
    numbered = max((len(x) for x in names), default=1) + len(names) * (col_w + 1) > console.width
    if numbered:
        names = [f"{i + 1} {x}" for i, x in enumerate(names)]
        col_w = max(len(str(len(names))), counts_w)
    heads = [str(i + 1) if numbered else x for i, x in enumerate(names)]
    head_w = max((len(x) for x in names), default=1)
    console.print(f"confusion of {escape(field)} (rows: label, columns: judge):", highlight=False)
    console.print(" " * head_w + "".join(f" {h:>{col_w}}" for h in heads), highlight=False)
    for name, row in zip(names, rows, strict=True):
        console.print(f"{name:>{head_w}}" + "".join(f" {v:>{col_w}}" for v in row), highlight=False)


def render_calibration(cal: Calibration, console: Console) -> None:
    table = Table(
        title=f"calibration of {escape(cal.judge)} · rubric {escape(cal.rubric)} · "
        f"fingerprint {cal.fingerprint}",
        title_justify="left",
        box=box.SIMPLE_HEAD,  # no vertical rules: the table fits 80 columns unbroken
        pad_edge=False,
    )
    for col in ("field", "n", "κ", "95% CI", "agree", "consistent", "calibrated"):
        table.add_column(
            col, justify="left" if col == "field" else "right", no_wrap=True, overflow="fold"
        )
    for f in cal.fields:
        kappa = "–" if f.kappa is None else f"{f.kappa:.3f}" + (" (q)" if f.weights else "")
        ci = "–" if f.low is None else f"[{f.low:.2f}, {f.high:.2f}]"
        agree = "–" if f.agreement is None else f"{100 * f.agreement:.1f}%"
        sc = cal.self_consistency.get(f.field)
        table.add_row(
            escape(f.field),
            str(f.n),
            kappa,
            ci,
            agree,
            "–" if sc is None else f"{100 * sc:.1f}% ×{cal.repeats}",
            "yes" if cal.calibrated.get(f.field) else "no",
        )
    console.print(table)
    if any(f.weights for f in cal.fields):
        console.print("κ (q): quadratic-weighted κ, for bounded counts", highlight=False)
    if any(cal.self_consistency.get(f.field) is not None for f in cal.fields):
        console.print(
            f"consistent: the judge's verdicts agreeing over {cal.repeats} repeats per item",
            highlight=False,
        )
    for f in cal.fields:
        _confusion(f.field, f.labels, f.confusion, console)
    per = _seconds(cal.seconds_per_item, cal.median_seconds_per_item)
    per_call = _seconds(cal.seconds_per_call, cal.median_seconds_per_call)
    repeats = f" ({cal.repeats} calls)" if cal.repeats > 1 else ""
    cost = "no price" if cal.cost_usd is None else f"${cal.cost_usd:.4f}"
    sample = " (a seeded sample of the labels)" if cal.sample is not None else ""
    console.print(
        f"items {cal.items}{sample}; judged {cal.judged}; judge errors {cal.judge_errors}; "
        f"infrastructure errors {cal.infra}; wall time {cal.seconds:.1f} s; {per} per "
        f"item{repeats}; {per_call} per judge call; cost {cost}",
        highlight=False,
    )
    console.print(
        f"calibrated when n ≥ {cal.policy.n} and κ ≥ {cal.policy.kappa} per field used",
        highlight=False,
    )
    if cal.injection:
        inj = Table(
            title="prompt injection: verdicts changed by planted instructions", title_justify="left"
        )
        for col in ("variant", "planted in", "n", "flips", "flip rate", "to planted", "errors"):
            inj.add_column(
                col,
                justify="left" if col in ("variant", "planted in") else "right",
                overflow="fold",
            )
        for r in cal.injection:
            rate = "–" if r.flip_rate is None else f"{100 * r.flip_rate:.1f}%"
            inj.add_row(
                r.variant,
                r.site,
                str(r.n),
                str(r.flips),
                rate,
                str(r.toward_planted),
                str(r.judge_errors),
            )
        total_n = sum(r.n for r in cal.injection)
        flips = sum(r.flips for r in cal.injection)
        console.print(inj)
        if total_n:
            console.print(
                f"overall flip rate {100 * flips / total_n:.1f}% ({flips}/{total_n})",
                highlight=False,
            )

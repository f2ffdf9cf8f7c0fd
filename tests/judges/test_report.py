"""The calibration table in the terminal: readable at 80 columns, escaped."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from toolproof.judges._calibrate import Calibration
from toolproof.judges._printed import render_calibration

EXAMPLE = Path(__file__).parents[2] / "examples" / "support" / "calibration-selection.json"


def shown(cal: Calibration, width: int = 80) -> str:
    out = io.StringIO()
    render_calibration(cal, Console(file=out, width=width, color_system=None))
    return out.getvalue()


def test_the_calibration_table_fits_80_columns_unbroken() -> None:
    cal = Calibration.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    text = shown(cal)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text  # no figure or name cut short
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}
    f = {x.field: x for x in cal.fields}
    assert rows["appropriate"][1:3] == ["60", f"{f['appropriate'].kappa:.3f}"]
    assert rows["issue"][-1] == "no"
    # six issue labels do not fit across: numbered columns, each row names its number
    assert "3 should_not_call" in text and "5 wrong_arguments" in text
    header = next(line for line in text.splitlines() if line.split() == list("123456"))
    assert header


def test_a_narrow_confusion_matrix_keeps_the_label_names() -> None:
    cal = Calibration.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    text = shown(cal, width=200)
    assert any(line.split()[:6] == ["none", "should_call", "should_not_call", "unsafe",
                                    "wrong_arguments", "wrong_tool"] for line in text.splitlines())  # fmt: skip


def test_a_hostile_field_name_is_shown_escaped() -> None:
    cal = Calibration.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    cal.fields[0].field = "[bold]x[/bold]"
    cal.fields[0].labels = ["[red]no[/red]", "yes"]
    text = shown(cal, width=120)
    assert "[bold]x[/bold]" in text and "[red]no[/red]" in text

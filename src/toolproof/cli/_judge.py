"""judge, label and calibrate: LLM judges that must earn their vote; hooks for run and gate.

A thin layer over :mod:`toolproof.judges`; heavy modules are imported inside the commands.
"""

from __future__ import annotations

import getpass
import json
import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from toolproof._shared.safe_io import UnsafePath, read_inside, refused, save
from toolproof.cli._trust import ALLOW_CODE, CONFIG, trust_for
from toolproof.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

    from toolproof.judges import Judgement, RubricFigures
    from toolproof.types import Record, Suite


def judge_spec(spec: str, suite: Suite | None = None) -> str:
    """``local`` → ``local:``; ``suite`` → the suite's ``judge.model``."""

    spec = spec.strip()
    if spec == "suite":
        if suite is None or suite.judge is None or not suite.judge.model:
            raise UserError("--judge suite: the suite sets no judge.model")
        spec = suite.judge.model
    if spec == "local":
        return "local:"
    return spec


def _notes(spec: str, targets: list[str], console: Console) -> None:
    from rich.markup import escape

    from toolproof.judges import WEAK_JUDGE_NOTE, self_preference

    if spec.startswith("local:") and spec.removeprefix("local:") in (
        "",
        "qwen2.5-coder-0.5b-instruct",
    ):
        console.print(f"[yellow]{escape(WEAK_JUDGE_NOTE)}[/yellow]", highlight=False)
    for target in targets:
        warning = self_preference(spec, target)
        if warning:
            console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)


def judge_records(
    suite: Suite,
    records: list[Record],
    run_dir: Path,
    spec: str,
    *,
    cache: bool = True,
    cache_dir: Path | None = None,
    quiet: bool = False,
    rejudge: bool = False,
    config: Any = None,
    questions: Any = None,
) -> list[Judgement]:
    """Judge a run's judge-scored records into RUN/judgements.jsonl and print the figures.

    ``questions`` (``Scorer.questions``): judge-decided arguments to put to the judge too.
    """
    from rich.console import Console

    from toolproof.judges import JUDGEMENTS_FILE, JudgeRunOptions, judge_run, judges_for
    from toolproof.run import RichProgress
    from toolproof.run._runner import new_run_dir

    console = Console(stderr=True)
    judges = judges_for(suite, spec, config, arguments=bool(questions))
    if not judges:
        console.print(
            "no case of this suite asks for a judge (judge: in a case), and no answer "
            "turns on a judge-decided argument"
        )
        return []
    _notes(spec, sorted({r.target or "" for r in records}), console)
    options = JudgeRunOptions(
        out=new_run_dir(run_dir / "judges", "judge"),
        cache=cache,
        cache_dir=cache_dir,
        observer=None if quiet else RichProgress(console),
    )
    return judge_run(
        suite,
        records,
        judges,
        run_dir / JUDGEMENTS_FILE,
        options,
        rejudge=rejudge,
        questions=questions,
    )


def show_judged(suite: Suite, judgements: list[Judgement], console: Console) -> list[RubricFigures]:
    from toolproof.judges import rubric_figures, suite_calibrations, suite_rubrics
    from toolproof.judges._printed import render_figures
    from toolproof.types import CalibrationPolicy

    figures = rubric_figures(judgements, suite_rubrics(suite))
    policy = suite.judge.require if suite.judge is not None else CalibrationPolicy()
    render_figures(figures, console, suite_calibrations(suite), policy)
    return figures


def add_to_summary(run_dir: Path, figures: list[RubricFigures]) -> None:
    """Put the judged figures into summary.json, under a key that says they are judged."""
    path = run_dir / "summary.json"

    if not path.is_file() or not figures:
        return
    try:
        data = json.loads(read_inside(run_dir, path, 64 << 20))
    except UnsafePath as exc:
        raise refused(path, exc) from None
    data["judged"] = [f.model_dump(mode="json") for f in figures]
    save(path, json.dumps(data, indent=2, ensure_ascii=False, default=str), atomic=True)


def after_run(
    result: Any,
    spec: str,
    *,
    cache: bool,
    cache_dir: Path | None,
    quiet: bool,
    config: Any = None,
    trust: Any = None,
) -> list[Judgement]:
    """``toolproof run --judge SPEC``: judge the run's judge-scored cases and its
    judge-decided arguments, before the run's report (which reads the judgements)."""
    from toolproof.evaluate import evaluate
    from toolproof.grade import Scorer
    from toolproof.judges import JUDGEMENTS_FILE, read_judgements
    from toolproof.judges._file import latest_judgements
    from toolproof.records import latest_records
    from toolproof.trust import DEFAULT_TRUST

    suite = result.suite
    resolved = judge_spec(spec, suite)
    records = [r for r in latest_records(result.records) if r.outcome.value == "ok"]
    questions = None
    if Scorer(suite, checks=()).decisions.matchers:  # the suite has judge-decided arguments
        earlier = latest_judgements(read_judgements(result.run_dir / JUDGEMENTS_FILE))
        ev = evaluate(suite, records, trust=trust or DEFAULT_TRUST, judgements=earlier)
        questions = ev.scorer.questions if ev.scorer is not None else None
    return judge_records(
        suite,
        records,
        result.run_dir,
        resolved,
        cache=cache,
        cache_dir=cache_dir,
        quiet=quiet,
        config=config,
        questions=questions,
    )


def report_judged(result: Any, judgements: list[Judgement], console: Console) -> None:
    """In the run's report: the judged figures, also into summary.json."""
    figures = show_judged(result.suite, judgements, console)
    add_to_summary(result.run_dir, figures)


# --- toolproof judge ------------------------------------------------------------------------


def judge_command(
    run: Path = typer.Argument(..., help="Run folder or records file."),
    judge: str = typer.Option(
        "local", "--judge", "-j", help="Judge model spec (local, openai:gpt-4.1, suite, ...)."
    ),
    suite: Path | None = typer.Option(None, "--suite", "-s", help="Suite (default: the run's)."),
    rejudge: bool = typer.Option(False, "--rejudge", help="Judge again what was judged."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the cache."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    allow_code: bool = ALLOW_CODE,
    config: Path | None = CONFIG,
) -> None:
    """Judge a run's judge-scored cases (into RUN/judgements.jsonl) and show the figures."""
    from toolproof.cli._console import console as console_
    from toolproof.evaluate import load_run

    trust, user_config = trust_for(config, allow_code)
    ev = load_run(run, suite=suite, trust=trust)
    run_dir = run if run.is_dir() else run.parent
    records = [r for r in ev.records if r.outcome.value == "ok"]
    judgements = judge_records(
        ev.suite,
        records,
        run_dir,
        judge_spec(judge, ev.suite),
        cache=not no_cache,
        cache_dir=cache_dir,
        quiet=quiet,
        rejudge=rejudge,
        config=user_config,
        questions=ev.scorer.questions if ev.scorer is not None else None,
    )
    figures = show_judged(ev.suite, judgements, console_())
    add_to_summary(run_dir, figures)


# --- toolproof label ------------------------------------------------------------------------


def label_command(
    run: Path = typer.Argument(..., help="Run folder or records file to label."),
    rubric: str = typer.Option(
        ...,
        "--rubric",
        "-r",
        help="Rubric: trajectory, selection, reply, argument_meaning, custom.",
    ),
    suite: Path | None = typer.Option(None, "--suite", "-s", help="Suite (default: the run's)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Labels file (default: RUN/labels-RUBRIC.jsonl). Resumes it."
    ),
    sample: int | None = typer.Option(None, "--sample", min=1, help="Label a random sample."),
    seed: int = typer.Option(1, "--seed", help="Seed of the sample."),
    labeller: str | None = typer.Option(None, "--labeller", help="Who labels (default: $USER)."),
    allow_code: bool = ALLOW_CODE,
    config: Path | None = CONFIG,
) -> None:
    """Label a run's transcripts (with argument_meaning: its judge-decided arguments) by
    hand, one at a time (resumable; q to stop)."""

    from toolproof.cli._console import console as console_
    from toolproof.evaluate import load_run
    from toolproof.judges import LabelsHeader, read_labels, rubric_named, write_header
    from toolproof.judges._label_ui import argument_items, label_arguments, label_loop
    from toolproof.types import ARGUMENT_RUBRIC

    trust, _ = trust_for(config, allow_code)
    ev = load_run(run, suite=suite, trust=trust)
    spec = rubric_named(ev.suite, rubric)
    run_dir = run if run.is_dir() else run.parent
    path = out or run_dir / f"labels-{rubric}.jsonl"
    records = sorted(
        (r for r in ev.records if r.outcome.value == "ok" and r.response is not None),
        key=lambda r: (r.case_id, r.target or "", r.attempt),
    )
    per_argument = rubric == ARGUMENT_RUBRIC
    compared = ev.scorer.compared if ev.scorer is not None else {}
    args = argument_items(ev.suite, records, compared) if per_argument else []
    if per_argument and not args:
        raise UserError(
            f"{ev.source}: no judge-decided argument to label: in these records every "
            "`judge: true` argument was identical to its expected text (no judge needed) "
            "or its attempt failed on something else"
        )
    if sample is not None:
        if per_argument and sample < len(args):
            args = random.Random(seed).sample(args, sample)
        elif not per_argument and sample < len(records):
            records = random.Random(seed).sample(records, sample)
    if path.exists():
        existing = read_labels(path, spec)
        if existing.header.rubric != rubric:
            raise UserError(f"{path}: labels rubric '{existing.header.rubric}', not '{rubric}'")
        done = {x.key for x in existing.labels}
    else:
        header = LabelsHeader(
            format="toolproof.labels/1",
            rubric=rubric,
            suite=_relative(ev.suite.source, path),
            records=[p for p in [_relative(str(ev.source), path)] if p],
            note=f"labelled with toolproof label (sample {sample}, seed {seed})"
            if sample
            else "labelled with toolproof label",
        )
        write_header(path, header)
        done = set()
    who = labeller or getpass.getuser()
    console = console_()
    if per_argument:
        todo_args = [a for a in args if a.key not in done]
        console.print(
            f"{len(args) - len(todo_args)} of {len(args)} judge-decided arguments already "
            f"labelled in {path}; {len(todo_args)} to go (q to stop, s to skip)",
            highlight=False,
        )
        n = label_arguments(todo_args, rubric, spec, path, who, console)
    else:
        todo = [r for r in records if (r.case_id, r.target, r.attempt, None) not in done]
        cases = {c.id: c for c in ev.suite.cases}
        console.print(
            f"{len(records) - len(todo)} of {len(records)} already labelled in {path}; "
            f"{len(todo)} to go (q to stop, s to skip)",
            highlight=False,
        )
        n = label_loop(ev.suite, cases, todo, rubric, spec, path, who, console)
    console.print(f"labelled {n}; labels in {path}", highlight=False)


def _relative(target: str | None, labels: Path) -> str | None:
    """A path relative to the labels file's folder, when it lies inside it."""
    if target is None:
        return None
    try:
        return Path(target).resolve().relative_to(labels.parent.resolve()).as_posix()
    except ValueError:
        return None


# --- toolproof calibrate ----------------------------------------------------------------------


def calibrate_command(
    judge: str = typer.Option("local", "--judge", "-j", help="Judge model spec."),
    labels: Path = typer.Option(..., "--labels", "-l", help="Labels JSONL file."),
    run: list[Path] = typer.Option(
        [],
        "--run",
        help="Labelled run folder or records file (default: the labels header's); "
        "argument_meaning labels need none.",
    ),
    suite: Path | None = typer.Option(None, "--suite", "-s", help="Suite (default: the header's)."),
    repeats: int = typer.Option(1, "--repeats", "-n", min=1, help="Judge each item this often."),
    injection: bool = typer.Option(
        False, "--injection", help="Also re-judge with planted instructions; report flip rate."
    ),
    variants: str | None = typer.Option(
        None, "--variants", help="Injection variants, comma-separated (default: all)."
    ),
    injection_items: int | None = typer.Option(
        None, "--injection-items", min=1, help="Plant in a random sample of this many items."
    ),
    sample: int | None = typer.Option(
        None, "--sample", min=1, help="Judge a random sample of this many labelled items."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and the samples."),
    min_n: int | None = typer.Option(None, "--min-n", min=1, help="Items needed (default 50)."),
    min_kappa: float | None = typer.Option(None, "--min-kappa", help="κ needed (default 0.6)."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Calibration record (default: in the judge's run folder, under --runs-dir).",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the cache."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir"),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where the judge's run goes."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    allow_code: bool = ALLOW_CODE,
    config: Path | None = CONFIG,
) -> None:
    """Run a judge on labelled items: Cohen's κ per field, intervals, confusion, consistency."""
    from rich.console import Console

    from toolproof.cli._console import console as console_
    from toolproof.evaluate import evaluate
    from toolproof.judges import (
        Judge,
        JudgeRunOptions,
        calibrate,
        judge_settings,
        read_labels,
        rubric_named,
        write_calibration,
    )
    from toolproof.judges._printed import render_calibration
    from toolproof.run import RichProgress
    from toolproof.run._runner import new_run_dir
    from toolproof.suite import load_suite
    from toolproof.types import ARGUMENT_RUBRIC, CalibrationPolicy

    trust, user_config = trust_for(config, allow_code)
    first = read_labels(labels)
    per_argument = first.header.rubric == ARGUMENT_RUBRIC
    loaded: Suite | None = None
    if suite is not None or first.header.suite is not None:
        where = suite if suite is not None else first.resolve(first.header.suite or "", "suite")
        loaded = load_suite(where, trust)
    elif not per_argument:
        raise UserError(f"{labels}: the header names no suite; give --suite")
    rubric = rubric_named(loaded, first.header.rubric)
    checked = read_labels(labels, rubric)
    if sample is not None and sample < len(checked.labels):
        chosen_labels = random.Random(seed).sample(checked.labels, sample)
        checked = checked.model_copy(update={"labels": chosen_labels})
    records: list[Record] = []
    if loaded is not None and not per_argument:  # an argument label carries its argument
        sources = list(run) or [checked.resolve(p, "records") for p in checked.header.records]
        if not sources:
            raise UserError(f"{labels}: the header names no records; give --run")
        from toolproof.evaluate._evaluate import records_path

        records = evaluate(loaded, [records_path(p) for p in sources], trust=trust).records
    spec = judge_spec(judge, loaded)
    console = console_()
    _notes(spec, [], console)
    policy = (
        loaded.judge.require if loaded is not None and loaded.judge is not None else None
    ) or CalibrationPolicy()
    policy = policy.model_copy(
        update={k: v for k, v in {"n": min_n, "kappa": min_kappa}.items() if v is not None}
    )
    judge_obj = Judge(spec, first.header.rubric, rubric, judge_settings(spec, loaded, user_config))
    options = JudgeRunOptions(
        out=new_run_dir(runs_dir, f"calibrate-{first.header.rubric}"),
        repeats=repeats,
        cache=not no_cache,
        cache_dir=cache_dir,
        observer=None if quiet else RichProgress(Console(stderr=True)),
    )
    chosen = [v.strip() for v in variants.split(",") if v.strip()] if variants else None
    record = calibrate(
        loaded,
        judge_obj,
        checked,
        records,
        options,
        policy=policy,
        injection=injection,
        variants=chosen,
        injection_items=injection_items,
        seed=seed,
    )
    if sample is not None and sample < len(first.labels):
        record.sample = sample
    render_calibration(record, console)
    # a new file in this run's own folder unless the user names one: nothing they have
    # (a shipped record beside the labels) is overwritten unasked
    target = out or options.out / f"calibration-{first.header.rubric}.json"
    write_calibration(target, record)
    console.print(f"calibration record: {target} (judge run: {options.out})", highlight=False)
    if out is None:
        console.print(
            "the gate reads the records the suite names in judge.calibration, or those given "
            "with --calibration: copy it there, or pass it",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
    app.command("label")(label_command)
    app.command("calibrate")(calibrate_command)


def _print_err(text: str) -> None:
    print(text, file=sys.stderr)

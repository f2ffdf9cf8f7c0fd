"""validate, score and schema: the offline commands."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, NoReturn

import typer

from toolproof._shared.safe_io import save, save_report
from toolproof.cli._exit import ExitCode
from toolproof.cli._store import NO_STORE, STORE
from toolproof.cli._trust import ALLOW_CODE, CONFIG, trust_for
from toolproof.errors import SuiteError, SuiteProblems


def validate(
    suite: Path = typer.Argument(..., help="Suite directory or file."),
    tools: Path | None = typer.Option(
        None,
        "--tools",
        help="Check the suite with this tools file in place of its tools (as `run --tools`).",
    ),
    allow_code: bool = ALLOW_CODE,
    config: Path | None = CONFIG,
) -> None:
    """Check a suite: schemas, tool names, expected values, case IDs, matchers, file paths."""
    from toolproof.cli._console import console as console_
    from toolproof.suite import load_suite_checked

    trust, _ = trust_for(config, allow_code)
    try:
        loaded, errors = load_suite_checked(suite, trust, tools=tools)
    except SuiteProblems as exc:
        _problems(exc.errors, str(suite))
    from toolproof.run._runner import suite_problems

    errors = [*errors, *suite_problems(loaded.suite, trust, loaded.origin)]  # as run refuses
    if errors:
        _problems(errors, loaded.suite.source or str(suite))
    s = loaded.suite
    warnings = _gold_action_warnings(s, trust) if trust.allow_code else []
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    console_().print(
        f"[green]ok[/green] suite '{s.name}': {len(s.cases)} cases, "
        f"{len(s.tools)} tools, no problems" + (f", {len(warnings)} warning(s)" if warnings else "")
    )
    from toolproof.judges._rubrics import judged_statements

    judged = [n for n in (len(judged_statements(c)) for c in s.cases) if n]
    if judged:
        typer.echo(
            f"judge: {sum(judged)} judged statement(s) (communicate: judged, nl_assertions) in "
            f"{len(judged)} case(s) are checked only by an nl_assertion judge (--judge); "
            "without its answer such a case is undecided, not passing"
        )
    waiting = sum(1 for c in s.cases if c.generated and c.generated.status == "needs-review")
    if waiting:
        typer.echo(f"review: {waiting} generated case(s) still marked needs-review")
    from toolproof.scaffold import unfinished

    todo = unfinished(loaded)
    for line in todo:
        typer.echo(f"todo: {line}")
    if todo:
        typer.echo(f"{len(todo)} unfinished case template(s): edit them, then remove the tag")


def _problems(errors: list[SuiteError], where: str) -> NoReturn:
    """One line per problem, then (when there are several) how many."""
    from toolproof.report._escape import visible

    for err in errors:
        typer.echo(f"error: {visible(str(err))}", err=True)
    if len(errors) > 1:
        typer.echo(f"{len(errors)} problems in {where}", err=True)
    raise typer.Exit(ExitCode.USAGE)


def _gold_action_warnings(suite: Any, trust: Any) -> list[str]:
    """Gold actions that fail while the expected end states are computed (runs suite code)."""
    from toolproof.run import expected_states, gold_action_warnings

    return gold_action_warnings(expected_states(suite, trust))


def score(
    suite: Path = typer.Argument(..., help="Suite directory or file."),
    records: list[Path] = typer.Argument(
        ..., help="One or more records files (JSONL) or run folders."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON."),
    failures: bool = typer.Option(True, "--failures/--no-failures", help="List failing cases."),
    allow_code: bool = ALLOW_CODE,
    config: Path | None = CONFIG,
    store: str | None = STORE,
    no_store: bool = NO_STORE,
) -> None:
    """Score recorded model responses offline, with no model calls."""
    from toolproof.cli._console import console as console_
    from toolproof.evaluate import evaluate
    from toolproof.evaluate._evaluate import records_path, with_sent_tools
    from toolproof.report import render_terminal, write_summary_json
    from toolproof.suite import load_suite

    trust, _ = trust_for(config, allow_code)
    s = load_suite(suite, trust)
    from toolproof.judges import JUDGEMENTS_FILE, read_judgements
    from toolproof.judges._file import latest_judgements

    files = [records_path(p) for p in records]
    s = with_sent_tools(s, files, trust)  # a run made with --tools: the tools it sent
    # what judges said about these records (it decides judge-decided arguments)
    folders = dict.fromkeys(f.parent for f in files)
    judged = latest_judgements(j for d in folders for j in read_judgements(d / JUDGEMENTS_FILE))
    from toolproof.store._hooks import attempt_log, store_score

    noted = attempt_log(store, not no_store)  # the store's rows, noted in the one pass
    ev = evaluate(
        s,
        files,
        keep_raw=False,
        trust=trust,
        keep_records=False,
        judgements=judged,
        on_attempt=noted,
    )
    for warning in ev.warnings:
        typer.echo(f"warning: {warning}", err=True)
    summaries = ev.summaries
    render_terminal(summaries, console_(), failures=failures)
    if json_out is not None:
        buffer = io.StringIO()
        write_summary_json(buffer, summaries)
        save_report(json_out, buffer.getvalue())
    store_score(ev, files, store, not no_store, noted=noted)


def schema(
    out: Path | None = typer.Option(None, "--out", "-o", help="Write here instead of stdout."),
) -> None:
    """Print the JSON Schema of the suite format (for editor completion)."""
    from toolproof.suite import suite_json_schema

    text = json.dumps(suite_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        save(out, text)
        typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command()(validate)
    app.command()(score)
    app.command()(schema)

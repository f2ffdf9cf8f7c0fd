"""``toolproof generate``: cases from a suite's tools, a tools file, OpenAPI or an MCP server."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from toolproof.cli._trust import CONFIG, trust_for
from toolproof.errors import UserError


def _is_suite(source: str) -> bool:
    path = Path(source)
    if path.is_dir():
        return True
    if path.suffix in (".yaml", ".yml") and path.is_file():
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            return False
        return isinstance(data, dict) and "suite" in data
    return False


def generate(
    tools: str = typer.Option(
        ...,
        "--tools",
        help="A suite (folder or file), a tools file, an OpenAPI spec, or mcp:stdio:COMMAND...",
    ),
    model: str = typer.Option(..., "--model", help="The generator: a model spec, or local."),
    out: Path = typer.Option(..., "--out", "-o", help="The cases file to write (JSONL)."),
    mix: list[str] = typer.Option(
        [],
        "--mix",
        help="KIND=N cases per tool (positive, no_call, clarify, confirm, confusion), or "
        "edge=SHARE of edge cases (default 0.35). Repeatable.",
    ),
    seed: int = typer.Option(0, "--seed", help="The generator's seed (each case adds its index)."),
    verify_model: str | None = typer.Option(
        None, "--verify-model", help="Run each kept case against this model and flag failures."
    ),
    cache_dir: Path | None = typer.Option(
        None, "--cache-dir", help="Where answers are cached (default: the user cache folder)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite the cases file and its NAME.generation.json."
    ),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds to wait for an MCP server."),
    config: Path | None = CONFIG,
) -> None:
    """Write verified, deduplicated cases for each tool, each marked needs-review."""
    from toolproof.generate import generate_cases, parse_mix, verify_with
    from toolproof.importers import import_tools, tools_yaml
    from toolproof.report._escape import visible
    from toolproof.run._cache import default_cache_dir
    from toolproof.suite import load_suite

    meta_path = out.with_name(out.stem + ".generation.json")
    for path in (out, meta_path):  # neither file the user has is overwritten unless asked
        if path.is_dir():
            raise UserError(
                f"{path}: is a folder; -o names the cases file (e.g. {out}/cases.jsonl)"
            )
        if (path.exists() or path.is_symlink()) and not force:
            raise UserError(f"{path}: exists (--force to overwrite)")
    chosen = parse_mix(mix)
    imported = None
    if _is_suite(tools):
        trust, _ = trust_for(config, False)
        loaded = load_suite(tools, trust)
        # the suite's tools, then the tools its cases define themselves (first of each name)
        by_name = {t.name: t for t in loaded.tools}
        for listed in loaded.cases:
            for own in listed.definitions:
                by_name.setdefault(own.name, own)
        defined = list(by_name.values())
    else:
        imported = import_tools(tools, timeout_s=timeout)
        for note in imported.warnings:  # a tool left out, or something in one not carried
            typer.echo(note.render(), err=True)
        defined = imported.tools
    try:  # before any model call: the place must hold the files
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{out.parent}: not a folder the cases can be written in ({exc})") from None
    cache = cache_dir if cache_dir is not None else default_cache_dir().parent / "generate"
    result = generate_cases(
        defined, model, chosen, seed=seed, cache=cache, note=lambda m: typer.echo(m, err=True)
    )
    if verify_model is not None and result.cases:
        # the response cache toolproof run uses: a rerun does not ask the model again
        answers = cache_dir / "responses" if cache_dir is not None else default_cache_dir()
        verified = verify_with(result, defined, verify_model, cache=answers)
        typer.echo(
            f"verified with {visible(verify_model)}: {verified['passed']} passed, "
            f"{verified['failed']} failed (flagged), {verified['errors']} errors; "
            f"{verified['cached']} answers from the cache"
        )
    meta = {**result.meta, "counts": dict(result.counts), "skipped": result.skipped}
    try:
        with out.open("w", encoding="utf-8") as fh:
            for case in result.cases:
                fh.write(json.dumps(case, ensure_ascii=False) + "\n")
        meta_text = json.dumps(meta, ensure_ascii=False, indent=2) + "\n"
        meta_path.write_text(meta_text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{exc.filename or out}: cannot be written: {exc.strerror}") from None
    c = result.counts
    typer.echo(
        f"{c['asked']} asked, {c['kept']} kept; {c['duplicate']} near duplicates removed; "
        f"skipped: {c['not_json']} not JSON, {c['unknown_tool']} unknown tool, "
        f"{c['schema']} breaking the schema, {c['no_prompt'] + c['no_call_given']} incomplete, "
        f"{c['invalid_case']} invalid, {c['model_error']} model errors"
    )
    where = (
        visible(str(cache))
        if result.cached
        else "a scripted or replayed model's answers are not cached"
    )
    typer.echo(
        f"{result.model_calls} model calls, {result.cache_hits} from the cache "
        f"({where}); prompts, seed and model in {meta_path}"
    )
    typer.echo(f"wrote {out}: every case is marked needs-review")
    if imported is not None:
        suite_file = out.parent / "suite.yaml"
        if not suite_file.exists():
            text = (
                f"format: 1\nsuite: {json.dumps(out.stem)}\n"
                f"description: cases generated from {json.dumps(imported.source)}\n"
                f"tools:\n{tools_yaml(imported, indent='  ')}\ncases_from: {json.dumps(out.name)}\n"
            )
            suite_file.write_text(text, encoding="utf-8")
            typer.echo(f"wrote {suite_file} (the tools, and cases_from: {out.name})")


def register(app: typer.Typer) -> None:
    app.command("generate")(generate)


def review(
    cases: Path = typer.Argument(..., help="The generated cases file (JSONL)."),
) -> None:
    """Step through generated cases still marked needs-review: accept, edit or reject each.

    Every decision is saved at once; run it again to resume. Rejected cases move
    to NAME.rejected.jsonl beside the file."""
    from rich.panel import Panel

    from toolproof.cli._console import console as console_
    from toolproof.generate import read_review
    from toolproof.judges._label_ui import safe

    console = console_(highlight=False)
    file = read_review(cases)
    todo = file.waiting()
    console.print(f"{len(todo)} case(s) to review in {safe(str(cases))}")
    done = 0
    while True:
        waiting = file.waiting()
        if not waiting:
            break
        index = waiting[0]
        case = file.cases[index]
        console.rule(safe(case["id"]))
        console.print(Panel(safe(case.get("prompt") or case.get("messages")), title="request"))
        expect = json.dumps(case.get("expect"), ensure_ascii=False, indent=1)
        console.print(Panel(safe(expect), title="expected"))
        gen = case["generated"]
        if gen.get("verified_by"):
            console.print(f"{safe(gen['verified_by'])} passed it: {gen.get('verify_passed')}")
        console.print(f"tags: {safe(', '.join(map(str, case.get('tags', []))))}")
        choice = typer.prompt("[a]ccept, [e]dit, [r]eject, [s]top", default="a").strip().lower()
        if choice.startswith("s"):
            break
        if choice.startswith("r"):
            file.decide(index, "rejected")
        elif choice.startswith("e"):
            try:
                file.decide(index, "edited", _edits(case))
            except ValueError as exc:
                console.print(f"not saved: {safe(str(exc).splitlines()[0])}")
                continue
        elif choice.startswith("a"):
            file.decide(index, "accepted")
        else:
            console.print("answer a, e, r or s")
            continue
        done += 1
    counts = file.counts()
    reviewed = counts["accepted"] + counts["edited"] + counts["rejected"]
    rate = f"{100 * (counts['accepted'] + counts['edited']) / reviewed:.0f}%" if reviewed else "-"
    console.print(
        f"reviewed {done} now; in all {counts['accepted']} accepted, {counts['edited']} edited, "
        f"{counts['rejected']} rejected, {counts['needs-review']} left; acceptance {rate}"
    )


def _edits(case: dict[str, object]) -> dict[str, object]:
    edits: dict[str, object] = {}
    prompt = typer.prompt("new request (empty: keep)", default="", show_default=False)
    if prompt.strip():
        edits["prompt"] = prompt.strip()
    expect = typer.prompt("new expect as JSON (empty: keep)", default="", show_default=False)
    if expect.strip():
        try:
            edits["expect"] = json.loads(expect)
        except ValueError as exc:
            raise ValueError(f"the expect is not JSON: {exc}") from None
    return edits


def register_review(app: typer.Typer) -> None:
    app.command("review")(review)

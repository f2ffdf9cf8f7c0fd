"""Generated reference pages of the documentation site, built from the code itself.

mkdocs loads this file as a hook (``hooks:`` in mkdocs.yml). At build time it adds
three pages that are never committed, so they cannot drift from what they describe:

- ``reference/cli.md``: every command and option of the ``toolproof`` command line,
  read from the typer application;
- ``reference/suite-schema.md``: every field of the suite format, read from the
  published JSON Schema (``toolproof.schema.json``);
- ``reference/metrics.md``: the metric glossary, read from the one metric table
  (``toolproof.stats._metrics.METRICS``);
- ``security-policy.md``: the repository's ``SECURITY.md``, as it is.

The functions that write them are plain functions of no arguments, so the tests
call them too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: page path (inside docs/) -> the function that writes it
PAGES: dict[str, str] = {
    "reference/cli.md": "cli_reference",
    "reference/suite-schema.md": "schema_reference",
    "reference/metrics.md": "metrics_glossary",
    "security-policy.md": "security_policy",
}


def _cell(text: str) -> str:
    """Text for one Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


# ---------------------------------------------------------------- the command line


def _commands(group: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    out: list[tuple[list[str], Any]] = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if getattr(command, "hidden", False):
            continue
        if hasattr(command, "commands"):
            out += _commands(command, [*path, name])
        else:
            out.append(([*path, name], command))
    return out


def cli_commands() -> list[tuple[str, list[str]]]:
    """Every command of the command line, with every option name it takes."""
    import typer.main

    from toolproof.cli._app import app

    root = typer.main.get_command(app)
    return [
        (" ".join(path), [o for p in cmd.params for o in (*p.opts, *p.secondary_opts)])
        for path, cmd in _commands(root, ["toolproof"])
    ]


def cli_reference() -> str:
    import typer.main

    from toolproof.cli._app import app

    root = typer.main.get_command(app)
    lines = [
        "# Command-line reference",
        "",
        "Generated from the command line itself when the site is built: every command",
        "and every option, with the help `toolproof COMMAND --help` prints.",
        "Exit codes are explained in [the release gate](../gate.md#the-release-gate)",
        "and in [getting started](../getting-started.md#exit-codes).",
        "",
    ]
    commands = _commands(root, ["toolproof"])
    lines += ["| command | what it does |", "|---|---|"]
    for path, cmd in commands:
        name = " ".join(path)
        anchor = "-".join(path[1:])
        summary = (cmd.help or "").strip().split("\n\n")[0]
        lines.append(f"| [`{name}`](#{anchor}) | {_cell(summary)} |")
    lines.append("")
    for path, cmd in commands:
        name = " ".join(path)
        anchor = "-".join(path[1:])
        ctx = cmd.make_context(path[-1], [], resilient_parsing=True)
        usage = " ".join(cmd.collect_usage_pieces(ctx))
        lines += [f"## `{name}` {{#{anchor}}}", "", "```", f"{name} {usage}".rstrip(), "```", ""]
        help_text = (cmd.help or "").strip()
        if help_text:
            lines += [help_text, ""]
        rows = []
        for param in cmd.params:
            if getattr(param, "hidden", False):
                continue
            record = param.get_help_record(ctx)
            if record is None:
                continue
            rows.append(f"| `{_cell(record[0])}` | {_cell(record[1])} |")
        if rows:
            lines += ["| argument or option | meaning |", "|---|---|", *rows, ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- the suite format


def _type_of(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type_of(s) for s in schema[key])
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type_of(schema.get('items', {}))}"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"mapping of {_type_of(extra)}"
        return "mapping"
    if isinstance(kind, list):
        return " or ".join(f"`{k}`" for k in kind)
    if kind:
        fmt = schema.get("format")
        return f"`{kind}`" + (f" ({fmt})" if fmt else "")
    return "any"


def _fields(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | default | description |", "|---|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        rows.append(
            f"| `{name}` | {_cell(_type_of(prop))} | {'yes' if name in required else ''} "
            f"| {_cell(default)} | {_cell(prop.get('description', ''))} |"
        )
    return rows


def schema_reference() -> str:
    schema = json.loads((ROOT / "toolproof.schema.json").read_text(encoding="utf-8"))
    lines = [
        "# Suite format reference",
        "",
        "Generated from the published JSON Schema, `toolproof.schema.json` (what",
        "`toolproof schema` prints), when the site is built. The guide to the format is",
        "[the suite format](../suite-format.md); this page lists every field.",
        "",
        "## The suite file {#suite}",
        "",
        _cell(schema.get("description", "")),
        "",
        *_fields(schema),
        "",
    ]
    for name, sub in sorted(schema.get("$defs", {}).items()):
        lines += [f"## {name} {{#{name.lower()}}}", ""]
        if sub.get("description"):
            lines += [sub["description"].strip(), ""]
        if "properties" in sub:
            lines += _fields(sub)
        else:
            lines.append(f"One of: {_type_of(sub)}")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------- the metrics


def metrics_glossary() -> str:
    from toolproof.stats._metrics import METRICS

    lines = [
        "# Metric glossary",
        "",
        "Generated from the one metric table in the code (`toolproof.stats._metrics.METRICS`),",
        "which the report, the slices and the gate all read, when the site is built.",
        "A metric with a threshold field can be bounded in a suite's `thresholds:`",
        "(see [thresholds by risk class](../gate.md#thresholds-by-risk-class)); the",
        "definitions in words are in [scoring](../scoring.md#metrics).",
        "",
        "| name | label | measured on | kind | threshold field |",
        "|---|---|---|---|---|",
    ]
    for m in METRICS:
        if m.applies is not None and m.success is not None:
            kind = "rate over calls" if m.counts_calls else "rate over attempts"
        else:
            kind = "not a rate"
        threshold = f"`{m.threshold}`" if m.threshold else "–"
        cells = [f"`{m.name}`", _cell(m.label), _cell(m.applies_to), kind, threshold]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------- SECURITY.md


def security_policy() -> str:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    title, _, rest = text.partition("\n")
    note = "*This page is `SECURITY.md` at the root of the repository, shown as it is.*"
    return f"{title}\n\n{note}\n{rest}"


# ---------------------------------------------------------------- the mkdocs hook


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, function in PAGES.items():
        content = globals()[function]()
        files.append(File.generated(config, path, content=content))
    return files



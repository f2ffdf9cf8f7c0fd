"""``toolproof init``: a suite folder with imported tools and case templates to fill in."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from toolproof.errors import UserError
from toolproof.importers import ImportResult, tools_yaml
from toolproof.scaffold import _templates as t
from toolproof.suite import LoadedSuite, suite_json_schema
from toolproof.types import SuiteTool


@dataclass
class Scaffolded:
    """What ``init`` wrote, and the import it started from."""

    directory: Path
    files: list[Path] = field(default_factory=list)
    imported: ImportResult | None = None


def scaffold_suite(
    directory: Path,
    imported: ImportResult | None = None,
    *,
    name: str | None = None,
    force: bool = False,
    ci_install: str | None = None,
) -> Scaffolded:
    """Write a suite into ``directory``: the imported tools (or an example tool), one case
    template per tool, a no-call case, a clarification case, a .gitignore, the JSON Schema
    of the suite format and a GitHub Actions workflow. Refuses to overwrite a suite.

    ``ci_install``: the command the workflow installs toolproof with (default: from a
    checkout of toolproof at ``./toolproof``, ``_templates.DEFAULT_CI_INSTALL``)."""
    directory = Path(directory)
    suite_file = directory / "suite.yaml"
    if suite_file.exists() and not force:
        raise UserError(f"{suite_file}: a suite is already there (--force to overwrite)")
    if imported is not None and not imported.items:
        raise UserError(f"{imported.source}: no tool imported, so no suite to scaffold")
    directory.mkdir(parents=True, exist_ok=True)
    out = Scaffolded(directory=directory, imported=imported)
    suite_name = name or _name_for(directory)
    out.files.append(_write(suite_file, suite_text(suite_name, imported)))
    schema = json.dumps(suite_json_schema(), indent=2, ensure_ascii=False) + "\n"
    out.files.append(_write(directory / "toolproof.schema.json", schema))
    gitignore = directory / ".gitignore"
    if not gitignore.exists():
        out.files.append(_write(gitignore, t.GITIGNORE))
    out.files.append(_workflow(directory, suite_name, ci_install or t.DEFAULT_CI_INSTALL))
    return out


def suite_text(name: str, imported: ImportResult | None) -> str:
    """The suite.yaml text: header, system prompt, tools, and the case templates."""
    if imported is not None:
        tools = imported.tools
        tools_text = tools_yaml(imported, indent="  ")
        notes = "".join(f"# {n.render()}\n" for n in imported.notes)
        source: str | None = imported.source
    else:
        example = ImportResult(source="example", format="example")
        from toolproof.importers import ImportedTool

        example.items.append(ImportedTool(tool=t.EXAMPLE_TOOL, raw=None))
        tools, tools_text, notes, source = (
            [t.EXAMPLE_TOOL],
            tools_yaml(example, indent="  "),
            "",
            None,
        )
    parts = [t.header(name, source), "\n", t.SYSTEM, "\n"]
    if notes:
        parts.append("# What the import could not carry as is:\n" + notes)
    parts.append("tools:\n" + tools_text + "\n")
    parts.append("cases:\n  # One template per tool: a request that should lead to this call.\n")
    parts.extend(t.positive_case(tool) for tool in tools)
    parts.append("\n" + t.no_call_case())
    clarify = _clarification_target(tools)
    if clarify is not None:
        parts.append("\n" + t.clarification_case(*clarify))
    return "".join(parts)


def _clarification_target(tools: list[SuiteTool]) -> tuple[SuiteTool, str] | None:
    for tool in tools:
        props = tool.parameters.get("properties") or {}
        for name in tool.parameters.get("required") or []:
            if name in props:
                return tool, name
    return None


def unfinished(loaded: LoadedSuite) -> list[str]:
    """One located line per case still tagged ``todo``."""
    out = []
    for i, case in enumerate(loaded.suite.cases):
        if t.TODO_TAG not in case.tags:
            continue
        if i < len(loaded.origin.cases):
            where, prefix = loaded.origin.cases[i]
            located = where.error((*prefix, "tags"), "").render().rstrip(": ")
        else:
            located = loaded.suite.source or "suite"
        out.append(f"{located}: case '{case.id}' is an unfinished template (tagged 'todo')")
    return out


def _workflow(directory: Path, suite_name: str, install: str) -> Path:
    root = _git_root(directory)
    base = root if root is not None else directory
    suite_path = directory.resolve().relative_to(base.resolve()).as_posix() if root else "."
    folder = base / ".github" / "workflows"
    path = folder / "toolproof.yml"
    if path.exists():
        path = folder / f"toolproof-{_slug(suite_name)}.yml"
    return _write(path, t.workflow(suite_path or ".", install))


def _git_root(directory: Path) -> Path | None:
    for candidate in [directory.resolve(), *directory.resolve().parents]:
        if (candidate / ".git").exists():
            return candidate
    return None


def _name_for(directory: Path) -> str:
    return _slug(directory.resolve().name) or "my-suite"


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def _write(path: Path, text: str) -> Path:
    from toolproof._shared.safe_io import save

    save(path, text)
    return path

"""A command whose flags are the fields of one frozen dataclass (cli._command), and
`toolproof run`, whose command line is read into one RunArgs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.cli._command import TYPER, command
from toolproof.cli._run import RunArgs
from toolproof.cli._store import STORE

runner = CliRunner()


@dataclass(frozen=True, kw_only=True)
class _Args:
    path: Annotated[Path, typer.Argument(help="A path.")]
    name: Annotated[list[str], typer.Option("--name", "-n", help="Names.")] = field(
        default_factory=list
    )
    count: Annotated[int, typer.Option("--count", min=1, help="How many.")] = 3
    store: str | None = field(metadata={TYPER: STORE})


def _app(seen: list[_Args]) -> typer.Typer:
    one = typer.Typer()
    one.command()(command(_Args, seen.append))
    return one


def test_the_command_line_becomes_one_options_object() -> None:
    seen: list[_Args] = []
    result = runner.invoke(_app(seen), ["p", "-n", "a", "--name", "b", "--store", "off"])
    assert result.exit_code == 0, result.output
    assert seen == [_Args(path=Path("p"), name=["a", "b"], count=3, store="off")]


def test_defaults_and_checks_come_from_the_fields() -> None:
    seen: list[_Args] = []
    assert runner.invoke(_app(seen), ["p"]).exit_code == 0
    assert seen == [_Args(path=Path("p"), name=[], count=3, store=None)]
    refused = runner.invoke(_app(seen), ["p", "--count", "0"])
    assert refused.exit_code == 2 and len(seen) == 1


def test_each_invocation_gets_a_list_of_its_own() -> None:
    seen: list[_Args] = []
    one = _app(seen)
    runner.invoke(one, ["p", "-n", "a"])
    runner.invoke(one, ["p"])
    assert seen[0].name == ["a"] and seen[1].name == []


def test_every_run_flag_is_a_field_of_run_args() -> None:
    """`toolproof run --help` lists each field's flag: the fields are the command line."""
    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for f in dataclasses.fields(RunArgs):
        if f.name == "suite":
            assert "[suite]" in result.output
            continue
        assert "--" + f.name.replace("_", "-") in result.output, f.name


def test_run_args_are_frozen() -> None:
    args = RunArgs(allow_code=False, store=None, no_store=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        args.quiet = True  # type: ignore[misc]
    assert args.overrides() == {
        "temperature": None,
        "max_tokens": None,
        "tool_choice": None,
        "concurrency": None,
        "max_retries": None,
        "timeout_s": None,
    }
    chosen = dataclasses.replace(args, tool_choice="tool:lookup_order", timeout=5.0).overrides()
    assert chosen["tool_choice"] == {"tool": "lookup_order"} and chosen["timeout_s"] == 5.0

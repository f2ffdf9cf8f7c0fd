"""``validate``: a name a case calls in the tools file (a setup call, a user tool, an
assert function) must be a function of it. The file is read as a syntax tree, never run,
unless --allow-code; a name it binds otherwise (an import, an assignment, a class) is
refused, located, or with --allow-code checked by running the file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS_PY = '''\
import os
from pathlib import Path as Folder

Path = None  # rebinds nothing the suite calls

MARK = Folder(__file__).with_name("ran")
MARK.write_text("the tools file was run")


def toggle(state, args):
    state["on"] = not state["on"]
    return {"on": state["on"]}


alias = toggle
count = 3


class Switch:
    pass
'''


def _suite(tmp_path: Path, setup: list[str], user_tools: list[str]) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir(parents=True)
    (folder / "tools.py").write_text(TOOLS_PY)
    (folder / "state.json").write_text(json.dumps({"on": False}))
    case = {
        "id": "flip",
        "setup": [{"tool": name} for name in setup],
        "user": {"tools": user_tools, "script": ["Flip it. ###STOP###"]},
        "expect": {"kind": "text"},
    }
    suite = {
        "format": 1,
        "suite": "names",
        "tools": [{"name": "look", "description": "Look at the switch."}],
        "environment": {"state": "state.json", "tools": "tools.py"},
        "cases": [case],
    }
    (folder / "suite.yaml").write_text(json.dumps(suite, indent=1))
    return folder


def _validate(folder: Path, *more: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", "validate", str(folder), *more],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def test_names_bound_otherwise_than_by_def_are_refused_located_without_running_the_file(
    tmp_path: Path,
) -> None:
    folder = _suite(tmp_path, ["os", "Switch"], ["count", "toggle"])
    code, out = _validate(folder)
    assert code == 2, out
    assert not (folder / "ran").exists()  # read, never run
    where = re.escape(str(folder / "suite.yaml"))
    assert re.search(
        where + r":\d+:\d+: cases\[0\]\.setup\[0\]\.tool: tool 'os' is bound by an import at "
        r"line 1 of the tools file 'tools.py', not defined there as a function \(def\)",
        out,
    ), out
    assert "cases[0].setup[1].tool: tool 'Switch' is bound by a class at line 19" in out
    assert "cases[0].user.tools[0]: user tool 'count' is bound by an assignment at line 16" in out
    assert "'toggle'" not in out  # a def is a function


def test_with_allow_code_the_file_is_run_and_what_each_name_holds_is_checked(
    tmp_path: Path,
) -> None:
    folder = _suite(tmp_path, ["alias", "Switch", "Path"], ["count", "toggle"])
    code, out = _validate(folder, "--allow-code")
    assert code == 2, out
    assert (folder / "ran").exists()
    assert "cases[0].setup[1].tool: tool 'Switch' of the tools file 'tools.py' is a class" in out
    assert (
        "cases[0].setup[2].tool: tool 'Path' of the tools file 'tools.py' is a value of "
        "type NoneType, not a function" in out
    )
    assert "user.tools[0]: user tool 'count' of the tools file 'tools.py' is a value of type int" in out
    assert "'alias'" not in out  # an assignment that holds a function is one
    assert re.search(r"suite\.yaml:\d+:\d+: cases\[0\]\.setup\[1\]\.tool", out), out


def test_functions_pass_and_an_unknown_name_is_still_refused(tmp_path: Path) -> None:
    code, out = _validate(_suite(tmp_path, ["toggle", "alias"], ["toggle"]), "--allow-code")
    assert code == 0, out
    assert "ok suite 'names'" in out
    code, out = _validate(_suite(tmp_path / "b", ["togle"], []), "--allow-code")
    assert code == 2
    assert "unknown tool 'togle'" in out and "neither a suite tool nor a function" in out


@pytest.mark.parametrize("name", ["os", "count"])
def test_a_user_tool_bound_by_an_import_or_assignment_is_refused_without_code(
    tmp_path: Path, name: str
) -> None:
    code, out = _validate(_suite(tmp_path, [], [name]))
    assert code == 2
    assert f"user tool '{name}' is bound by" in out


REBOUND = {
    "if": "def toggle(state, args):\n    return {}\n\nif True:\n    toggle = 5\n",
    "walrus": "def toggle(state, args):\n    return {}\n\n(toggle := 5)\n",
    "del": "def toggle(state, args):\n    return {}\n\ndel toggle\n",
    "decorator": "def five(f):\n    return 5\n\n@five\ndef toggle(state, args):\n    return {}\n",
}
NESTED = {
    "if": "if True:\n    def toggle(state, args):\n        return {}\n",
    "try": "try:\n    def toggle(state, args):\n        return {}\nexcept ImportError:\n    pass\n",
}


@pytest.mark.parametrize("kind", sorted(REBOUND))
def test_with_allow_code_a_def_rebound_to_no_function_is_refused(tmp_path: Path, kind: str) -> None:
    folder = _suite(tmp_path, [], ["toggle"])
    (folder / "tools.py").write_text(REBOUND[kind])
    code, out = _validate(folder, "--allow-code")
    assert code == 2, out
    assert "user tool 'toggle'" in out, out
    assert "not a function" in out or "has no function" in out, out
    assert str(folder / "suite.yaml") in out


@pytest.mark.parametrize("kind", sorted(NESTED))
def test_with_allow_code_a_def_inside_if_or_try_is_a_function(tmp_path: Path, kind: str) -> None:
    folder = _suite(tmp_path, [], ["toggle"])
    (folder / "tools.py").write_text(NESTED[kind])
    code, out = _validate(folder, "--allow-code")
    assert code == 0, out
    assert "ok suite" in out


@pytest.mark.parametrize("kind", sorted(NESTED))
def test_without_allow_code_a_nested_def_is_refused_saying_allow_code_would_run_it(
    tmp_path: Path, kind: str
) -> None:
    folder = _suite(tmp_path, [], ["toggle"])
    (folder / "tools.py").write_text(NESTED[kind])
    code, out = _validate(folder)
    assert code == 2, out
    assert "no function 'toggle' defined at its top level" in out, out
    assert "--allow-code" in out and "run" in out

"""``toolproof import bfcl``'s multi-turn categories, on a small sample in BFCL's format
(fixtures/bfcl_multi), and run on BFCL's own classes when bfcl_eval is installed."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.errors import UserError
from toolproof.importers import import_bfcl, write_bfcl
from toolproof.importers._bfcl_multi import parse_call
from toolproof.importers.bfcl_env import encode
from toolproof.suite import load_suite_checked
from toolproof.trust import Trust

SAMPLE = Path(__file__).parent / "fixtures" / "bfcl_multi"
PARAMS = {"cd": ["folder"], "mkdir": ["dir_name"], "add": ["a", "b"]}


def _has_bfcl_classes() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("bfcl_eval", "mpmath"))


needs_bfcl = pytest.mark.skipif(
    not _has_bfcl_classes(),
    reason="bfcl_eval or mpmath (the bfcl extra) is not installed: BFCL's classes cannot run",
)


def _cases() -> dict[str, dict[str, Any]]:
    (suite,) = import_bfcl(SAMPLE).suites
    return {c["id"]: c for c in suite.cases}


def test_an_entry_becomes_a_conversation_on_bfcls_state() -> None:
    case = _cases()["multi_turn_base_0"]

    # before each next turn, the user keeps a digest of the state (BFCL checks it per turn)
    def checkpoint(turn: int) -> dict[str, Any]:
        return {"tool": "bfcl_turn_checkpoint", "args": {"turn": turn}}

    assert case["user"] == {
        "tools": ["bfcl_turn_checkpoint"],
        "script": [
            "Go into docs and make a folder 'old'.",
            {"call": checkpoint(0), "say": "Now create notes.txt in old."},
            {"call": checkpoint(1), "say": "###STOP###"},
        ],
    }
    assert case["max_turns"] == 3 and case["max_steps"] == 40
    assert case["tools"] == ["cd", "mkdir", "ls", "touch"]
    meta = case["state"]["bfcl"]
    assert meta["involved_classes"] == ["GorillaFileSystem"]
    assert meta["long_context"] is False
    assert "alice" in meta["initial_config"]["GorillaFileSystem"]["root"]
    actions = [
        {"tool": "cd", "args": {"folder": "docs"}},
        {"tool": "mkdir", "args": {"dir_name": "old"}},  # positional: the doc's parameter order
        {"tool": "cd", "args": {"folder": "old"}},
        {"tool": "touch", "args": {"file_name": "notes.txt"}},
    ]
    gold = [*actions[:2], checkpoint(0), *actions[2:], checkpoint(1)]
    assert case["end_state"] == {"actions": gold}
    assert case["trajectory"] == {"mode": "superset", "steps": [actions]}
    # two classes: each one's functions, in the entry's order
    assert _cases()["multi_turn_base_1"]["tools"] == ["add", "cd", "mkdir", "ls", "touch"]


def test_bad_entries_are_counted_skips_with_their_line() -> None:
    result = import_bfcl(SAMPLE)
    skipped = {s.where.rsplit(":", 1)[1]: s.reason for s in result.skipped}
    assert "unknown class 'AirlineAPI'" in skipped["3"]
    assert "is not a call of a function name" in skipped["4"]
    assert "not JSON" in skipped["5"] and "truncated" in skipped["5"]
    assert result.categories_skipped == []  # multi_turn_miss_func too: test_bfcl_miss_func.py


def test_ground_truth_strings_are_parsed_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_call("add(2, b=3.5)", PARAMS) == ("add", {"a": 2, "b": 3.5})
    assert parse_call("cd(folder=('a', 'b'))", PARAMS) == ("cd", {"folder": ["a", "b"]})
    for text, why in (
        ("__import__('os').system('touch PWNED')", "not a call of a function name"),
        ("cd(folder=__import__('os').getcwd())", "not a literal"),
        ("open('PWNED', 'w')", "which no involved class has"),
        ("cd(", "not a function call"),
        ("cd", "not a call of a function name"),
        ("cd('a', 'b')", "more positional arguments"),
        ("cd('a', folder='b')", "given twice"),
        ("cd(**{'folder': 'a'})", "not a literal"),
        ("add(a=float('nan'), b=1)", "not a literal"),
        ("add(a={1: 2}, b=1)", "keys that are not text"),
        (42, "not text"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_call(text, PARAMS)
    assert not (tmp_path / "PWNED").exists()


def test_the_suite_writes_validates_and_refuses_to_overwrite(tmp_path: Path) -> None:
    result = import_bfcl(SAMPLE)
    (path,) = write_bfcl(result, tmp_path)
    folder = path.parent
    assert sorted(p.name for p in (folder / "env").iterdir()) == ["state.json", "tools.py"]
    tools_py = (folder / "env" / "tools.py").read_text(encoding="utf-8")
    assert "from toolproof.importers.bfcl_env import BfclEnvironment" in tools_py
    assert "def touch(obj, args):" in tools_py and "def setup(state):" in tools_py
    head = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert head["environment"] == {"state": "env/state.json", "tools": "env/tools.py"}
    names = ["cd", "mkdir", "ls", "touch", "add", "bfcl_turn_checkpoint"]
    assert [t["name"] for t in head["tools"]] == names
    assert head["tools"][4]["parameters"]["properties"]["a"]["type"] == "number"
    _, refused = load_suite_checked(folder)  # the tools file is suite code
    assert ["--allow-code" in str(e) for e in refused] == [True]
    loaded, errors = load_suite_checked(folder, trust=Trust(allow_code=True))
    assert errors == [], errors
    assert len(loaded.suite.cases) == 2
    (folder / "cases.jsonl").unlink()
    path.unlink()
    (folder / "env" / "state.json").unlink()
    with pytest.raises(UserError, match=r"env/tools.py: exists \(--force to overwrite\)"):
        write_bfcl(result, tmp_path)
    write_bfcl(result, tmp_path, force=True)
    assert (folder / "cases.jsonl").is_file() and path.is_file()


def test_missing_function_docs_skip_every_entry_with_the_class(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "multi_turn_func_doc" / "math_api.json").unlink()
    result = import_bfcl(data)
    assert [c["id"] for c in result.suites[0].cases] == ["multi_turn_base_0"]
    why = "the function docs of class 'MathAPI' are missing (multi_turn_func_doc/math_api.json)"
    assert [s.reason for s in result.skipped if "are missing" in s.reason] == [
        f"multi_turn_base_1: {why}"
    ]


def test_a_truncated_function_doc_is_a_located_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    doc = data / "multi_turn_func_doc" / "math_api.json"
    doc.write_text(doc.read_text(encoding="utf-8")[:40], encoding="utf-8")
    with pytest.raises(UserError, match=r"math_api.json:1: not JSON .*truncated"):
        import_bfcl(data)


class _Node:
    def __init__(self, name: str, parent: Any = None) -> None:
        self.name = name
        self.parent = parent
        self.contents: dict[str, Any] = {}
        self._private = object()


def test_encode_keeps_what_bfcls_equality_compares() -> None:
    root = _Node("/")
    root.contents["a"] = _Node("a", root)
    assert encode(root) == {
        "__class__": "_Node",
        "name": "/",
        "parent": None,
        "contents": {"a": {"__class__": "_Node", "name": "a", "contents": {}}},
    }
    assert encode({1: {3, 1, 2}, "t": (1, 2), "x": float("inf")}) == {
        "1": [1, 2, 3],
        "t": [1, 2],
        "x": "inf",
    }


def _run(folder: Path, steps: dict[str, list[dict[str, Any]]], out: Path) -> dict[str, Any]:
    from toolproof.evaluate import evaluate
    from toolproof.run import RunOptions, Target, run_suite
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    trust = Trust(allow_code=True)
    suite = load_suite(folder, trust=trust)
    script = out / "script.yaml"
    script.parent.mkdir(parents=True, exist_ok=True)
    cases = {k: {"steps": v} for k, v in steps.items()}
    script.write_text(yaml.safe_dump({"model": "m", "cases": cases}), encoding="utf-8")
    suite = suite.model_copy(update={"cases": [c for c in suite.cases if c.id in steps]})
    done = run_suite(
        suite,
        [Target(spec=f"scripted:{script}")],
        RunOptions(out=out / "run", cache=False, fsync=False, trust=trust, observer=None),
    )
    ev = evaluate(suite, [out / "run" / "records.jsonl"], trust=trust)
    verdicts = {v.case_id: v for s in ev.targets.values() for v in s.verdicts}
    return {"records": {r.case_id: r for r in done.records}, "verdicts": verdicts}


def _turns(*turns: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for t, turn in enumerate(turns):
        steps += [
            {"tool_calls": [{"id": f"c{t}{i}", "name": n, "arguments": a}]}
            for i, (n, a) in enumerate(turn)
        ]
        steps.append({"text": "Done."})
    return steps


@needs_bfcl
def test_conversations_run_on_bfcls_own_classes(tmp_path: Path) -> None:
    (path,) = write_bfcl(import_bfcl(SAMPLE), tmp_path / "suites")
    gold = _turns(
        [("cd", {"folder": "docs"}), ("mkdir", {"dir_name": "old"})],
        [("cd", {"folder": "old"}), ("touch", {"file_name": "notes.txt"})],
    )
    no_touch = _turns(
        [("cd", {"folder": "docs"}), ("mkdir", {"dir_name": "old"})],
        [("cd", {"folder": "old"})],
    )
    math = _turns([("add", {"a": 2, "b": 3.5})], [("ls", {"a": True})])
    got = _run(path.parent, {"multi_turn_base_0": gold, "multi_turn_base_1": math}, tmp_path / "a")
    for case_id in ("multi_turn_base_0", "multi_turn_base_1"):
        record = got["records"][case_id]
        assert record.stopped_by == "user_stop"
        assert got["verdicts"][case_id].passed, got["verdicts"][case_id].checks
    record = got["records"]["multi_turn_base_1"]
    results = [m.content for m in record.transcript if m.role == "tool"]
    assert results[0] == '{"result": 5.5}'  # what BFCL's executor gives its model
    # BFCL starts in the root's first folder (alice)
    assert json.loads(results[1]) == {"current_directory_content": ["docs"]}
    bad = _run(path.parent, {"multi_turn_base_0": no_touch}, tmp_path / "b")
    verdict = bad["verdicts"]["multi_turn_base_0"]
    assert not verdict.passed
    assert verdict.multistep is not None and verdict.multistep.end_state_ok is False
    assert "notes.txt" in verdict.evidence.end_state_diff


@needs_bfcl
def test_the_state_is_checked_after_every_turn(tmp_path: Path) -> None:
    (path,) = write_bfcl(import_bfcl(SAMPLE), tmp_path / "suites")
    # mkdir one turn late: the same end state, another state after the first turn
    late = _turns(
        [("cd", {"folder": "docs"})],
        [
            ("mkdir", {"dir_name": "old"}),
            ("cd", {"folder": "old"}),
            ("touch", {"file_name": "notes.txt"}),
        ],
    )
    # no call at all in the first turn: BFCL fails the turn whatever the state
    idle = _turns(
        [],
        [
            ("cd", {"folder": "docs"}),
            ("mkdir", {"dir_name": "old"}),
            ("cd", {"folder": "old"}),
            ("touch", {"file_name": "notes.txt"}),
        ],
    )
    for name, steps in (("late", late), ("idle", idle)):
        got = _run(path.parent, {"multi_turn_base_0": steps}, tmp_path / name)
        record = got["records"]["multi_turn_base_0"]
        assert record.stopped_by == "user_stop"
        assert [c.tool for t in record.user_turns for c in t.calls or ()] == [
            "bfcl_turn_checkpoint",
            "bfcl_turn_checkpoint",
        ]
        verdict = got["verdicts"]["multi_turn_base_0"]
        assert not verdict.passed and verdict.multistep is not None
        assert verdict.multistep.end_state_ok is False
        diff = verdict.evidence.end_state_diff
        assert "turns / 0 / state" in diff and "instances" not in diff, diff
        assert ("turns / 0 / called: expected True, actual False" in diff) == (name == "idle")


@needs_bfcl
def test_a_failing_call_reads_as_bfcls_error_text(tmp_path: Path) -> None:
    (path,) = write_bfcl(import_bfcl(SAMPLE), tmp_path / "suites")
    steps = _turns([("cd", {"nope": "x"})], [])
    got = _run(path.parent, {"multi_turn_base_0": steps}, tmp_path / "a")
    record = got["records"]["multi_turn_base_0"]
    (result,) = [m for m in record.transcript if m.role == "tool"]
    assert result.content.startswith("Error during execution: ")
    assert "unexpected keyword argument 'nope'" in result.content
    assert not got["verdicts"]["multi_turn_base_0"].passed


def test_a_missing_ground_truth_file_is_a_located_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "possible_answer" / "BFCL_v4_multi_turn_base.json").unlink()
    with pytest.raises(UserError, match=r"BFCL_v4_multi_turn_base.json: missing \(the ground"):
        import_bfcl(data)


def test_turns_that_do_not_fit_are_counted_skips(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / "BFCL_v4_multi_turn_base.json"
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    two = dict(first, id="multi_turn_base_8")
    two["question"] = [first["question"][0] * 2, first["question"][1]]
    short = dict(first, id="multi_turn_base_9", question=first["question"][:1])
    path.write_text(json.dumps(two) + "\n" + json.dumps(short) + "\n", encoding="utf-8")
    answers = data / "possible_answer" / "BFCL_v4_multi_turn_base.json"
    truth = json.loads(answers.read_text(encoding="utf-8").splitlines()[0])["ground_truth"]
    answers.write_text(
        "".join(
            json.dumps({"id": i, "ground_truth": truth}) + "\n"
            for i in ("multi_turn_base_8", "multi_turn_base_9")
        ),
        encoding="utf-8",
    )
    result = import_bfcl(data)
    assert result.suites[0].cases == []
    reasons = [s.reason for s in result.skipped]
    assert reasons == [
        "multi_turn_base_8: turn 0 holds 2 messages; each turn needs one user message",
        "multi_turn_base_9: the ground truth is not a list of 1 turns (one per question turn)",
    ]


def test_without_bfcl_eval_the_call_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolproof.importers import bfcl_env

    def missing(name: str) -> Any:
        raise ModuleNotFoundError(f"No module named '{name.split('.')[0]}'", name="bfcl_eval")

    monkeypatch.setattr(bfcl_env.importlib, "import_module", missing)
    state = {"bfcl": {"involved_classes": ["MathAPI"], "initial_config": {}}}
    with pytest.raises(ModuleNotFoundError, match=r"pip install --no-deps bfcl-eval mpmath"):
        bfcl_env.BfclEnvironment().setup(state)


def _with_unchecked_turn(tmp_path: Path) -> Path:
    """The sample with one more entry whose first turn has no ground-truth calls."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / "BFCL_v4_multi_turn_base.json"
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    entry = dict(first, id="multi_turn_base_7")
    entry["question"] = [
        [{"role": "user", "content": "Go into the folder."}],
        [{"role": "user", "content": "It is docs."}],
    ]
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    answer = {"id": "multi_turn_base_7", "ground_truth": [[], ["cd(folder='docs')"]]}
    (data / "possible_answer" / path.name).write_text(json.dumps(answer) + "\n", "utf-8")
    return data


def test_a_turn_with_no_ground_truth_calls_is_not_checked(tmp_path: Path) -> None:
    (case,) = import_bfcl(_with_unchecked_turn(tmp_path)).suites[0].cases
    unchecked = {"tool": "bfcl_turn_checkpoint", "args": {"turn": 0, "checked": False}}
    checked = {"tool": "bfcl_turn_checkpoint", "args": {"turn": 1}}
    assert case["user"]["script"] == [
        "Go into the folder.",
        {"call": unchecked, "say": "It is docs."},
        {"call": checked, "say": "###STOP###"},
    ]
    cd = {"tool": "cd", "args": {"folder": "docs"}}
    assert case["end_state"] == {"actions": [unchecked, cd, checked]}


@needs_bfcl
def test_calls_in_an_unchecked_turn_count_for_no_other(tmp_path: Path) -> None:
    (path,) = write_bfcl(import_bfcl(_with_unchecked_turn(tmp_path)), tmp_path / "suites")
    cd = ("cd", {"folder": "docs"})
    right = _turns([], [cd])
    early = _turns([cd], [])  # BFCL: no call in turn 1, whose ground truth has one
    got = _run(path.parent, {"multi_turn_base_7": right}, tmp_path / "right")
    assert got["verdicts"]["multi_turn_base_7"].passed
    got = _run(path.parent, {"multi_turn_base_7": early}, tmp_path / "early")
    verdict = got["verdicts"]["multi_turn_base_7"]
    assert not verdict.passed
    assert "turns / 1 / called: expected True, actual False" in verdict.evidence.end_state_diff


def test_a_state_may_name_only_the_multi_turn_classes() -> None:
    from toolproof.importers.bfcl_env import BfclEnvironment

    for name in ("MemoryAPI_vector", "WebSearchAPI", "os"):
        state = {"bfcl": {"involved_classes": [name], "initial_config": {}}}
        with pytest.raises(ValueError, match="not a class of BFCL's multi-turn categories"):
            BfclEnvironment().setup(state)


def _toolproof(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """The program as a user runs it (a UserError: one line on stderr, exit 2)."""
    from toolproof.cli import main

    monkeypatch.setattr(sys, "argv", ["toolproof", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _with_doc_line(tmp_path: Path, line: bytes) -> Path:
    """The sample with ``line`` appended to the file system's function docs (line 5)."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    doc = data / "multi_turn_func_doc" / "gorilla_file_system.json"
    doc.write_bytes(doc.read_bytes().rstrip(b"\n") + b"\n" + line + b"\n")
    return data


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"name": "cd2", "description": "x", "parameters": [1]}', "'parameters' is not an"),
        (b'{"name": "cd2", "description": "x", "parameters": "abc"}', "'parameters' is not an"),
        (
            b'{"name": "cd2", "parameters": {"type": "dict", "properties": [1]}}',
            "'properties' is not an",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 100 levels"),
        (b'{"name": "cd2", "x": ' + b"[" * 150 + b"]" * 150 + b"}", "nested deeper than"),
        (b'{"name": "cd2", "description": "\xff\xfe\x00"}', "not UTF-8"),
    ],
)
def test_a_hostile_function_doc_is_a_located_error(
    tmp_path: Path,
    line: bytes,
    why: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = _with_doc_line(tmp_path, line)
    code = _toolproof(monkeypatch, "import", "bfcl", "--data", str(data), "-o", str(tmp_path / "o"))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "gorilla_file_system.json:5: " in err and why in err, err
    assert not (tmp_path / "o").exists()


def _with_entries(tmp_path: Path, *entries: dict[str, Any]) -> Path:
    """The sample with more entries: each the first entry's ground truth, and ``entries``'s
    keys in place of the first entry's."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / "BFCL_v4_multi_turn_base.json"
    answers = data / "possible_answer" / path.name
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    truth = json.loads(answers.read_text(encoding="utf-8").splitlines()[0])
    with path.open("a", encoding="utf-8") as fh, answers.open("a", encoding="utf-8") as ah:
        for entry in entries:
            fh.write(json.dumps({**first, **entry}) + "\n")
            ah.write(json.dumps({**truth, "id": entry["id"]}) + "\n")
    return data


def _deep(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels):
        value = {"d": value}
    return value


def test_entries_the_suite_loader_refuses_are_counted_skips(tmp_path: Path) -> None:
    config = {"GorillaFileSystem": {"root": {"alice": _deep(300)}}}
    data = _with_entries(
        tmp_path,
        {"id": "../../etc\n<b>x"},
        {"id": "multi_turn_base_deep", "initial_config": config},
        {"id": "multi_turn_base_nan", "initial_config": {"MathAPI": {"x": float("nan")}}},
    )
    result = import_bfcl(data, categories=["multi_turn_base"])
    (suite,) = result.suites
    assert [c["id"] for c in suite.cases] == ["multi_turn_base_0", "multi_turn_base_1"]
    reasons = {s.where.rsplit(":", 1)[1]: s.reason for s in result.skipped}
    assert reasons["6"].startswith("../../etc\n<b>x: id: String should match pattern"), reasons
    assert reasons["7"] == (
        "multi_turn_base_deep: the case is not accepted: nested deeper than 100 levels"
    )
    assert reasons["8"] == "multi_turn_base_nan: 'initial_config': a number JSON cannot hold"
    (path,) = write_bfcl(result, tmp_path / "out")
    loaded, errors = load_suite_checked(path.parent, trust=Trust(allow_code=True))
    assert errors == [], errors
    assert len(loaded.suite.cases) == 2


@pytest.mark.parametrize(
    ("name", "why"),
    [
        # a fullwidth s: Python would read `def ｓetup` as `def setup` (NFKC)
        ("\uff53etup", "name: String should match pattern"),
        ("setup", "one of the tools file's own names"),
        ("bfcl_turn_checkpoint", "one of the tools file's own names"),
        ("BfclEnvironment", "one of the tools file's own names"),
        ("_BFCL", "starts with an underscore"),
        ("_private", "starts with an underscore"),
        ("a.b", "cannot be a tools-file function"),
        ("None", "cannot be a tools-file function"),
        ("x" * 129, "name: String should match pattern"),
    ],
)
def test_a_function_doc_name_the_suite_cannot_hold_is_a_located_error(
    tmp_path: Path, name: str, why: str
) -> None:
    doc = {"name": name, "description": "x", "parameters": {"type": "dict", "properties": {}}}
    data = _with_doc_line(tmp_path, json.dumps(doc).encode())
    with pytest.raises(UserError, match=r"gorilla_file_system.json:5: ") as exc:
        import_bfcl(data, categories=["multi_turn_base"])
    assert why in str(exc.value), exc.value


def test_a_function_doc_whose_schema_the_suite_refuses_is_a_located_error(tmp_path: Path) -> None:
    props = {"mode": {"type": "string", "enum": 5}}
    doc = {"name": "chmod", "parameters": {"type": "dict", "properties": props}}
    data = _with_doc_line(tmp_path, json.dumps(doc).encode())
    with pytest.raises(UserError, match=r"gorilla_file_system.json:5: 'chmod': parameters\."):
        import_bfcl(data, categories=["multi_turn_base"])


def test_a_category_left_with_no_case_by_a_missing_doc_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "multi_turn_func_doc" / "gorilla_file_system.json").unlink()
    out = tmp_path / "o"
    code = _toolproof(monkeypatch, "import", "bfcl", "--data", str(data), "-o", str(out))
    err = capsys.readouterr().err
    assert code == 2, err
    missing = data / "multi_turn_func_doc" / "gorilla_file_system.json"
    assert err.startswith("error: ") and f"{missing}: missing" in err, err
    assert "BFCL_v4_multi_turn_base.json" in err, err
    assert not out.exists()


def test_an_entry_whose_id_is_taken_is_a_counted_skip(tmp_path: Path) -> None:
    data = _with_entries(tmp_path, {"id": "multi_turn_base_0"})
    result = import_bfcl(data, categories=["multi_turn_base"])
    assert [c["id"] for c in result.suites[0].cases] == ["multi_turn_base_0", "multi_turn_base_1"]
    (dup,) = [s for s in result.skipped if s.where.endswith(":6")]
    assert dup.reason == "multi_turn_base_0: the id of the case at line 1 too"
    (path,) = write_bfcl(result, tmp_path / "out")
    _, errors = load_suite_checked(path.parent, trust=Trust(allow_code=True))
    assert errors == [], errors

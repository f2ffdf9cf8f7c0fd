"""τ²-bench (``sierra-research/tau2-bench``) domains as toolproof suites.

``tau2_domains_dir()`` finds ``data/tau2/domains`` in a τ2-bench checkout (or a
``TAU2_DATA_DIR``-style data folder). ``import_tau2()`` reads each domain's
policy, database and tasks, and takes the tools' schemas from τ2's own toolkit
classes as τ2 shows them to its agent (``Tool.openai_schema``): that imports
τ2's domain code from the user's environment, so it needs the user's consent
(``allow_code``). ``write_tau2()`` writes one suite folder per domain:

- ``suite.yaml``: the policy as the system prompt, the domain's tools (and
  its user-side tools, offered to the simulated user only), one case per task;
- ``env/state.json``: the database (for a domain with a user database, the
  user's under ``user_db``);
- ``env/tools.py``: one function per tool, each running τ2's own tool on the
  state through :mod:`toolproof.importers.tau2_env` (τ2's code is imported
  from the environment that runs toolproof, never copied).

A task becomes a case: ``user_scenario`` → ``user`` (instructions, known,
unknown, persona); ``initial_state`` → ``state`` (the database with the
task's ``initialization_data`` merged in), ``setup`` (its
``initialization_actions``) and ``history`` (its ``message_history``); and its
``reward_basis``: DB → ``end_state.actions`` (the gold actions), COMMUNICATE →
``communicate``, ENV_ASSERTION → ``end_state.assert`` (a function of the tools
file), ACTION → a ``trajectory`` (every gold action, in any order, other calls
allowed, arguments compared on τ2's ``compare_args``), NL_ASSERTION → the
case's ``nl_assertions``, checked by the ``nl_assertion`` judge (an LLM judge
over the transcript, with ``--judge``; advisory unless calibrated).
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolproof._shared.locate import Locator, json_positions
from toolproof.errors import SuiteError, UserError
from toolproof.suite._load import checked_state

__all__ = [
    "DOMAINS",
    "Tau2Domain",
    "Tau2Import",
    "Tau2Tool",
    "import_tau2",
    "tau2_domains_dir",
    "write_tau2",
]

#: The domains imported when none is named.
DOMAINS = ("retail", "airline", "telecom")
#: The state key of a domain's user database.
USER_DB_KEY = "user_db"
#: Model calls a conversation may take (τ2 allows 100 steps, agent and user together).
MAX_STEPS = 50
_REWARDS = ("DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION", "NL_ASSERTION")


@dataclass(frozen=True)
class Tau2Tool:
    """A τ2 tool as its agent (or user) sees it."""

    name: str
    description: str
    parameters: dict[str, Any]
    writes: bool
    user: bool = False


@dataclass
class Tau2Domain:
    """One domain, read and converted, ready to write."""

    name: str
    folder: Path
    policy: str
    state: dict[str, Any]
    tools: list[Tau2Tool]
    cases: list[dict[str, Any]]
    comments: dict[str, list[str]]
    functions: dict[str, tuple[str, str, bool | None]]
    case_states: dict[str, dict[str, Any]]
    tasks_file: str
    counts: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


@dataclass
class Tau2Import:
    package: str
    root: Path
    domains: list[Tau2Domain]


def tau2_domains_dir(path: Path | None) -> Path:
    """The ``domains`` folder of a τ2-bench checkout or data folder.

    ``path`` may be a checkout (``data/tau2/domains`` inside), a data folder
    (``tau2/domains`` inside, as ``TAU2_DATA_DIR``), or the domains folder
    itself. Without it: ``TAU2_DATA_DIR``, else the checkout the installed
    ``tau2`` package was installed from (editable installs).
    """
    path = _checkout(path)
    if not path.is_dir():
        raise UserError(f"{path}: no such folder")
    for inner in (("data", "tau2", "domains"), ("tau2", "domains"), ()):
        candidate = path.joinpath(*inner)
        if candidate.is_dir() and any(
            (d / "tasks.json").is_file() or (d / "tasks_small.json").is_file()
            for d in candidate.iterdir()
            if d.is_dir()
        ):
            return candidate
    raise UserError(
        f"{path}: not a τ2-bench checkout: no data/tau2/domains/<domain>/tasks.json in it"
    )


def _checkout(path: Path | None) -> Path:
    """The folder the import reads: ``path``, else ``TAU2_DATA_DIR``, else the checkout
    the installed ``tau2`` package was installed from."""
    if path is not None:
        return path
    env = os.environ.get("TAU2_DATA_DIR")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("tau2")
    if spec is None or spec.origin is None:
        raise UserError(
            "no τ2-bench checkout given and no installed τ2 found: "
            "give the checkout's folder (toolproof import tau2 CHECKOUT)"
        )
    return Path(spec.origin).parents[2]  # src/tau2/__init__.py → the checkout


def _inside(path: Path, base: Path) -> Path:
    """``path``, when it is inside the checkout once its symbolic links are followed; a
    link that leads out of the checkout is refused, naming the file and where it leads
    (the checkout comes from whoever wrote it: it never makes the import read elsewhere)."""
    target = path.resolve()
    if not target.is_relative_to(base):
        raise UserError(
            f"{path}: leads out of the τ2 checkout ({base}) through a symbolic link, to "
            f"{target}: not read"
        )
    return path


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SuiteError(
            str(path), f"not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        ) from None
    except RecursionError:
        raise UserError(f"{path}: not read: JSON nested too deeply") from None


def _jsonable(value: Any) -> Any:
    """TOML values as JSON: dates and times become ISO text."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


def _read_db(path: Path) -> dict[str, Any]:
    if path.suffix == ".toml":
        try:
            data: Any = _jsonable(tomllib.loads(path.read_text(encoding="utf-8")))
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"{path}: not valid TOML: {exc}") from None
    else:
        data = _read_json(path)
    if not isinstance(data, dict):
        raise SuiteError(str(path), "the database must be a JSON object (its tables)", line=1)
    try:  # as validate will read the suite's state
        checked_state(data, "the database")
    except ValueError as exc:
        raise SuiteError(str(path), str(exc), line=1) from None
    return data


def _as_model(db_cls: Any, data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The database as τ2's model reads and writes it (``model_dump`` as JSON)."""
    from pydantic import ValidationError

    try:
        dumped: dict[str, Any] = db_cls.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(
            f"{path}: {where}: {first['msg']} (as τ2's {db_cls.__name__} reads it)"
        ) from None
    return dumped


def _first(folder: Path, names: tuple[str, ...], base: Path) -> Path | None:
    found = next((folder / n for n in names if (folder / n).is_file()), None)
    return None if found is None else _inside(found, base)


def _schemas(package: str, domain: str) -> tuple[list[Tau2Tool], dict[str, Any]]:
    """The domain's tools from τ2's toolkits (imports τ2's domain code)."""
    from toolproof.importers.tau2_env import toolkit_classes

    try:
        classes = toolkit_classes(package, domain)
    except (ImportError, LookupError) as exc:
        raise UserError(f"τ2 domain '{domain}': cannot import its tools: {exc}") from None
    tools: list[Tau2Tool] = []
    for key, user in (("tools", False), ("user_tools", True)):
        if key not in classes:
            continue
        kit = classes[key](None)
        for name, tool in kit.get_tools().items():
            schema = tool.openai_schema["function"]
            tools.append(
                Tau2Tool(
                    name=name,
                    description=str(schema.get("description") or "").strip(),
                    parameters=dict(schema.get("parameters") or {"type": "object"}),
                    writes=bool(kit.tool_mutates_state(name)),
                    user=user,
                )
            )
    return tools, classes


def import_tau2(
    path: Path | None,
    domains: list[str] | None = None,
    *,
    package: str = "tau2",
    allow_code: bool = False,
) -> Tau2Import:
    """Read τ2's domains and convert them (see the module's docstring)."""
    if not allow_code:
        raise UserError(
            "toolproof import tau2 needs --allow-code: it imports τ2's domain code from your "
            "Python environment to read its tools, and the suite it writes runs τ2's tools "
            "(suite code) on the database"
        )
    base = _checkout(path).resolve()
    root = _inside(tau2_domains_dir(path), base)
    names = domains or [d for d in DOMAINS if (root / d).is_dir()]
    if not names:  # a checkout of other domains: every one it has
        names = sorted(d.name for d in root.iterdir() if (d / "policy.md").is_file())
    out = []
    for name in names:
        folder = root / name
        if not folder.is_dir():
            have = ", ".join(sorted(d.name for d in root.iterdir() if d.is_dir()))
            raise UserError(f"{root}: no domain '{name}' (it has: {have})")
        out.append(_domain(_inside(folder, base), package, base))
    return Tau2Import(package, root, out)


def _domain(folder: Path, package: str, base: Path) -> Tau2Domain:
    name = folder.name
    notes: list[str] = []
    tasks_path = _first(folder, ("tasks.json", "tasks_small.json"), base)
    if tasks_path is None:
        raise UserError(f"{folder}: no tasks.json")
    if tasks_path.name != "tasks.json":
        notes.append(f"no tasks.json: imported {tasks_path.name}")
    policy_path = _first(folder, ("policy.md", "main_policy.md"), base)
    if policy_path is None:
        raise UserError(f"{folder}: no policy.md")
    policy = policy_path.read_text(encoding="utf-8")
    manual = folder / "tech_support_manual.md"
    if policy_path.name == "main_policy.md" and manual.is_file() and _inside(manual, base):
        policy = (
            f"<main_policy>\n{policy}\n</main_policy>\n"
            f"<tech_support_policy>\n{manual.read_text(encoding='utf-8')}\n</tech_support_policy>"
        )
    db_path = _first(folder, ("db.json", "db.toml"), base)
    if db_path is None:
        raise UserError(f"{folder}: no db.json or db.toml (the domain's database)")
    state = _read_db(db_path)
    user_db_path = _first(folder, ("user_db.json", "user_db.toml"), base)
    if user_db_path is not None:
        if USER_DB_KEY in state:
            raise UserError(f"{db_path}: has a table '{USER_DB_KEY}', the user database's key")
        state[USER_DB_KEY] = _read_db(user_db_path)
    tasks = _read_json(tasks_path)
    if not isinstance(tasks, list):
        raise SuiteError(str(tasks_path), "tasks.json must be a JSON list of tasks", line=1)
    tools, classes = _schemas(package, name)
    # the databases as τ2's models hold them: every field, defaults included
    user_state = state.pop(USER_DB_KEY, None)
    state = _as_model(classes["db"], state, db_path)
    if user_state is not None and "user_db" in classes:
        assert user_db_path is not None
        state[USER_DB_KEY] = _as_model(classes["user_db"], user_state, user_db_path)
    dupes = [n for n, c in Counter(t.name for t in tools).items() if c > 1]
    if dupes:
        raise UserError(f"τ2 domain '{name}': agent and user tools share names: {dupes}")
    domain = Tau2Domain(
        name=name,
        folder=folder,
        policy=policy,
        state=state,
        tools=tools,
        cases=[],
        comments={},
        functions={},
        case_states={},
        tasks_file=str(tasks_path),
        notes=notes,
    )
    locator = Locator(str(tasks_path), json_positions(tasks_path.read_text(encoding="utf-8")))
    kits = {"assistant": classes["tools"], "user": classes.get("user_tools")}
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        case = _case(domain, task, i, locator, kits)
        if case["id"] in seen:
            raise locator.error((i, "id"), f"task id '{task.get('id')}' is given twice")
        seen.add(case["id"])
        domain.cases.append(case)
    return domain


def _file_stem(case_id: str) -> str:
    """A file name for a case's state: its ID with anything but letters, digits, ``-``,
    ``_`` and brackets replaced (a task ID is data: never a path)."""
    return re.sub(r"[^\w\-\[\]]", "_", case_id, flags=re.ASCII)


def _case_id(domain: str, task_id: Any) -> str:
    text = re.sub(r"\s+", "_", str(task_id).strip())
    return f"{domain}-{text}"


def _user(scenario: Any, tools: list[str]) -> dict[str, Any]:
    if not isinstance(scenario, dict):
        raise ValueError("user_scenario must be an object")
    instructions = scenario.get("instructions")
    user: dict[str, Any] = {}
    if isinstance(instructions, str):
        user["instructions"] = instructions
    elif isinstance(instructions, dict):
        parts = []
        for key, title in (
            ("domain", "Domain"),
            ("reason_for_call", "Reason for call"),
            ("task_instructions", "Task instructions"),
        ):
            if instructions.get(key):
                parts.append(f"{title}:\n{str(instructions[key]).strip()}")
        user["instructions"] = "\n\n".join(parts) or "(no instructions)"
        if instructions.get("known_info"):
            user["known"] = str(instructions["known_info"]).strip()
        if instructions.get("unknown_info"):
            user["unknown"] = str(instructions["unknown_info"]).strip()
    else:
        raise ValueError("user_scenario.instructions must be text or an object")
    if scenario.get("persona"):
        user["persona"] = str(scenario["persona"]).strip()
    if tools:
        user["tools"] = tools
    return user


def _function_name(domain: Tau2Domain, func: str, env_type: str, expected: bool | None) -> str:
    """The tools-file function for a τ2 environment function (setup call or assertion)."""
    tool_names = {t.name: t for t in domain.tools}
    if expected is None and func in tool_names and tool_names[func].user == (env_type == "user"):
        return func  # a tool: its own function
    base = ("check_" if expected is not None else "") + ("user_" if env_type == "user" else "")
    name = base + func + ("_is_false" if expected is False else "")
    if name in tool_names:
        name = "env_" + name
    domain.functions[name] = (func, env_type, expected)
    return name


def _case(
    domain: Tau2Domain, task: Any, i: int, locator: Locator, kits: dict[str, Any]
) -> dict[str, Any]:
    if not isinstance(task, dict) or "id" not in task:
        raise locator.error((i,), "a task must be an object with an 'id'")
    tool_names = {t.name: t for t in domain.tools}
    agent_tools = [t.name for t in domain.tools if not t.user]
    user_tools = [t.name for t in domain.tools if t.user]
    case_id = _case_id(domain.name, task["id"])
    case: dict[str, Any] = {"id": case_id}
    try:
        case["user"] = _user(task.get("user_scenario"), user_tools)
    except ValueError as exc:
        raise locator.error((i, "user_scenario"), f"task {task['id']}: {exc}") from None
    if user_tools:
        case["tools"] = agent_tools
    case["max_steps"] = MAX_STEPS
    initial = task.get("initial_state") or {}
    data = initial.get("initialization_data") or {}
    if data.get("agent_data") or data.get("user_data"):
        state = json.loads(json.dumps(domain.state))
        if data.get("agent_data"):
            _merge(state, data["agent_data"])
        if data.get("user_data"):
            _merge(state.setdefault(USER_DB_KEY, {}), data["user_data"])
        try:  # as validate will read it: a state nested too deeply is no suite to write
            checked_state(state, f"task {task['id']}: its starting state")
        except ValueError as exc:
            raise locator.error((i, "initial_state", "initialization_data"), str(exc)) from None
        domain.case_states[case_id] = state
        case["state"] = f"state/{_file_stem(case_id)}.json"
        domain.counts["state"] += 1
    setup = []
    for j, action in enumerate(initial.get("initialization_actions") or []):
        where = (i, "initial_state", "initialization_actions", j)
        func, env_type = action.get("func_name"), action.get("env_type", "assistant")
        kit = kits.get(env_type)
        if not isinstance(func, str) or kit is None or not callable(getattr(kit, func, None)):
            raise locator.error(where, f"task {task['id']}: unknown {env_type} function '{func}'")
        name = _function_name(domain, func, env_type, None)
        setup.append({"tool": name, "args": action.get("arguments") or {}})
    if setup:
        case["setup"] = setup
        domain.counts["setup"] += 1
    history = [_message(m) for m in initial.get("message_history") or []]
    if history:
        case["history"] = history
        domain.counts["history"] += 1
    criteria = task.get("evaluation_criteria") or {}
    basis = list(criteria.get("reward_basis") or ["DB", "COMMUNICATE"])
    for b in basis:
        if b not in _REWARDS:
            raise locator.error(
                (i, "evaluation_criteria", "reward_basis"),
                f"task {task['id']}: unknown reward basis '{b}'",
            )
        domain.counts[f"basis {b}"] += 1
    actions = criteria.get("actions") or []
    gold = []
    for j, action in enumerate(actions):
        name = action.get("name")
        if name not in tool_names:
            raise locator.error(
                (i, "evaluation_criteria", "actions", j, "name"),
                f"task {task['id']}: unknown tool '{name}' (the domain's tools: "
                f"{', '.join(tool_names)})",
            )
        gold.append((name, action.get("arguments") or {}, action.get("compare_args")))
    end_state: dict[str, Any] = {}
    if "DB" in basis:
        end_state["actions"] = [{"tool": n, "args": a} for n, a, _ in gold]
    if "ENV_ASSERTION" in basis:
        checks = []
        for j, a in enumerate(criteria.get("env_assertions") or []):
            func, env_type = a.get("func_name"), a.get("env_type", "assistant")
            kit = kits.get(env_type)
            if not isinstance(func, str) or kit is None or not callable(getattr(kit, func, None)):
                raise locator.error(
                    (i, "evaluation_criteria", "env_assertions", j),
                    f"task {task['id']}: unknown {env_type} function '{func}'",
                )
            expected = bool(a.get("assert_value", True))
            name = _function_name(domain, func, env_type, expected)
            checks.append({"function": name, "args": a.get("arguments") or {}})
        if checks:
            end_state["assert"] = checks
    if end_state:
        case["end_state"] = end_state
    if "COMMUNICATE" in basis and criteria.get("communicate_info"):
        case["communicate"] = [
            {"text": str(t), "match": "normalised"} for t in criteria["communicate_info"]
        ]
    if "ACTION" in basis and gold:
        calls = []
        for name, args, compare in gold:
            keys = list(args) if compare is None else list(compare)
            calls.append(
                {
                    "tool": name,
                    "args": {k: v for k, v in args.items() if k in keys},
                    "extra_args": compare is not None,
                }
            )
        case["trajectory"] = {"mode": "superset", "steps": [calls]}
    else:
        case["expect"] = {"kind": "text"}
    comments: list[str] = []
    if "NL_ASSERTION" in basis:
        nl = criteria.get("nl_assertions") or []
        judged = [t for t in nl if isinstance(t, str)] if isinstance(nl, list) else []
        if judged:  # checked by the nl_assertion judge (with --judge): advisory until calibrated
            case["nl_assertions"] = judged
        domain.counts["nl_assertions (judged)"] += len(judged)
    domain.comments[case_id] = comments
    purpose = (task.get("description") or {}).get("purpose")
    if purpose:
        case["reason"] = str(purpose).strip()
    case["tags"] = ["tau2", domain.name] + [f"reward-{b.lower()}" for b in basis]
    return case


def _merge(target: dict[str, Any], update: dict[str, Any]) -> None:
    """Merge ``update`` into ``target`` as τ2 updates a database (mappings merged, deep)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def _message(m: dict[str, Any]) -> dict[str, Any]:
    """A τ2 message as a toolproof one."""
    out: dict[str, Any] = {"role": m.get("role")}
    if m.get("content") is not None:
        out["content"] = m["content"]
    if m.get("role") == "tool":
        out["tool_call_id"] = m.get("id")
        if m.get("error"):
            out["is_error"] = True
    calls = m.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments") or {}}
            for c in calls
        ]
    return out


_TOOLS_HEAD = '''"""τ2-bench's {domain} tools, run on the attempt's state by τ2's own code.

Written by `toolproof import tau2`. τ2's code is not copied here: it is imported
from the Python environment that runs toolproof (package '{package}'). Each
function runs one τ2 tool (or one τ2 environment function) on the state, the
domain's database. This file is suite code: toolproof runs it only with
--allow-code.
"""

from toolproof.importers.tau2_env import Tau2Domain

_DOMAIN = Tau2Domain({package!r}, {domain!r})
'''


def tools_py(domain: Tau2Domain, package: str) -> str:
    """The tools file: one function per tool and per environment function the cases use."""
    out = [_TOOLS_HEAD.format(domain=domain.name, package=package)]
    for tool in domain.tools:
        requestor = "user" if tool.user else "assistant"
        out.append(
            f"\n\ndef {tool.name}(state, args):\n"
            f"    return _DOMAIN.call({tool.name!r}, state, args, {requestor!r})\n"
        )
    for name, (func, env_type, expected) in sorted(domain.functions.items()):
        if expected is None:
            body = f"_DOMAIN.function({func!r}, state, args, {env_type!r})"
        else:
            body = f"_DOMAIN.check({func!r}, state, args, {env_type!r}, {expected!r})"
        out.append(f"\n\ndef {name}(state, args):\n    return {body}\n")
    return "".join(out)


def suite_yaml(domain: Tau2Domain, package: str, root: Path) -> str:
    from toolproof._shared.visible import visible
    from toolproof.importers._write import dump_yaml

    tools = []
    for t in domain.tools:
        entry: dict[str, Any] = {"name": t.name}
        if t.description:
            entry["description"] = t.description
        entry["parameters"] = t.parameters
        entry["effect"] = "write" if t.writes else "read"
        tools.append(entry)
    head = {
        "format": 1,
        "suite": f"tau2-{domain.name}",
        "description": f"τ2-bench's {domain.name} domain, imported by toolproof "
        f"({len(domain.cases)} tasks from {Path(domain.tasks_file).name}).",
        "system_file": "policy.md",
        "tools": tools,
        "environment": {"state": "env/state.json", "tools": "env/tools.py"},
    }
    lines = [
        f"# Imported by toolproof from τ2-bench ({visible(str(domain.folder))}).",
        "# Run with --allow-code: env/tools.py runs τ2's own tools, imported from the "
        f"'{package}' package installed beside toolproof.",
    ]
    for note in domain.notes:
        lines.append(f"# {visible(note)}")
    text = "\n".join(lines) + "\n" + dump_yaml(head) + "cases:\n"
    for case in domain.cases:
        for comment in domain.comments.get(case["id"], []):
            text += "  # " + " ".join(visible(comment).split()) + "\n"
        body = dump_yaml([case])
        text += "".join(f"  {line}".rstrip() + "\n" for line in body.splitlines())
    return text


def write_tau2(result: Tau2Import, out: Path, *, force: bool = False) -> list[Path]:
    """Write each domain as a suite folder ``OUT/<domain>/``; the suite files' paths."""
    written = []
    for domain in result.domains:  # every file checked before any is written
        folder = out / domain.name
        stems = [_file_stem(c) for c in domain.case_states]
        if len(set(stems)) != len(stems):
            raise UserError(f"τ2 domain '{domain.name}': two task IDs give the same file name")
        paths = [
            folder / "suite.yaml",
            folder / "policy.md",
            folder / "env" / "state.json",
            folder / "env" / "tools.py",
            *(folder / "state" / f"{stem}.json" for stem in stems),
        ]
        for path in paths:  # a folder on the way that is a file: nothing could be written
            above = path.parent
            while not above.exists() and above != above.parent:
                above = above.parent
            if not above.is_dir():
                raise UserError(f"{path}: cannot be written: {above} is a file, not a folder")
            if path.is_dir():
                raise UserError(f"{path}: is a folder; not overwritten")
        there = next((p for p in paths if p.exists() or p.is_symlink()), None)
        if there is not None and not force:
            raise UserError(f"{there}: already exists (--force to overwrite)")
    for domain in result.domains:
        folder = out / domain.name
        suite = folder / "suite.yaml"
        (folder / "env").mkdir(parents=True, exist_ok=True)
        (folder / "env" / "state.json").write_text(
            json.dumps(domain.state, ensure_ascii=False), encoding="utf-8"
        )
        (folder / "policy.md").write_text(domain.policy, encoding="utf-8")
        (folder / "env" / "tools.py").write_text(tools_py(domain, result.package), encoding="utf-8")
        if domain.case_states:
            (folder / "state").mkdir(exist_ok=True)
            for case_id, state in domain.case_states.items():
                (folder / "state" / f"{_file_stem(case_id)}.json").write_text(
                    json.dumps(state, ensure_ascii=False), encoding="utf-8"
                )
        suite.write_text(suite_yaml(domain, result.package, result.root), encoding="utf-8")
        written.append(suite)
    return written

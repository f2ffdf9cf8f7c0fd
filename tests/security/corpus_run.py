"""Run the whole hostile corpus and print its counts: ``python -m tests.security.corpus_run``.

Every input is what a pull request can send. Each is run as a user runs
toolproof (the command line, in this process, with the working folder set), in
a fresh temporary folder beside an ``outside`` folder that holds a planted
secret, and its outcome is counted:

- clear error: exit 2 with an ``error:`` line naming the file (or the documented
  safe behaviour for that input);
- traceback: any exception that is not toolproof's one-line error;
- hang: longer than the budget of one input;
- write outside: a file created or changed outside the places the command may
  write (the run folder it was given);
- secret leaked: the planted secret (or a secret-shaped environment variable's
  value) in anything printed or written;
- gate passes that should fail: a gate that exits 0 on an input made to fool it
  (:data:`GATE_ENTRIES`; each entry is a run folder or records file a pull
  request could plant, and the gate must not pass it).

``test_corpus_counts.py`` runs it in CI and requires every count but the first
two to be 0. The corpus: :mod:`tests.security.corpus` (suites, through
validate, score, run and gate), and :data:`EXTRA_ENTRIES` here (links, stores,
configs, commands, settings and files added with issue 24).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

BUDGET_S = 15  # above the 10 s after which an endless SQL state is stopped
PLANTED_ENV = {
    "GITHUB_TOKEN": "ghp_corpusplanted0123456789",
    "DEPLOY_SECRET": "corpus-secret-xyz9",
    "ANTHROPIC_API_KEY": "sk-ant-corpusplanted-0123456789",  # the stub's target reads it
}


@dataclass
class Counts:
    inputs: int = 0
    clear_errors: int = 0
    safe: int = 0
    tracebacks: int = 0
    hangs: int = 0
    writes_outside: int = 0
    secrets_leaked: int = 0
    gate_passes_that_should_fail: int = 0
    unclear: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"inputs {self.inputs} · clear errors {self.clear_errors} · other safe outcomes "
            f"{self.safe} · tracebacks {self.tracebacks} · hangs {self.hangs} · writes outside "
            f"{self.writes_outside} · secrets leaked {self.secrets_leaked} · gate passes that "
            f"should fail {self.gate_passes_that_should_fail} · unclear errors {self.unclear}"
        )

    @property
    def bad(self) -> int:
        return (
            self.tracebacks
            + self.hangs
            + self.writes_outside
            + self.secrets_leaked
            + self.gate_passes_that_should_fail
            + self.unclear
        )


class Hang(Exception):
    pass


@contextmanager
def _budget(seconds: int) -> Iterator[None]:
    def stop(*_: object) -> None:
        raise Hang(f"took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file's (size, mtime) and every folder's presence under ``root``."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.join(dirpath, name)] = (0, 0)  # a new folder counts, a changed one not
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            out[path] = (info.st_size, info.st_mtime_ns)
    return out


def _invoke(args: list[str]) -> tuple[int, str, BaseException | None]:
    """The command line in this process: (exit code, everything printed, a traceback's exception)."""
    from typer.testing import CliRunner

    from toolproof.cli import app
    from toolproof.errors import UserError

    result = CliRunner().invoke(app, args)
    exc = result.exception
    out = result.output
    if isinstance(exc, UserError):
        return 2, out + f"error: {exc}\n", None
    if exc is not None and not isinstance(exc, SystemExit):
        return 1, out, exc
    return result.exit_code, out, None


# --- inputs: each returns (exit code, output, allowed-to-write prefix, expectation) ---

#: An extra input: ``build(work, outside)`` sets up the working folder and returns
#: the command line to run there, the folder it may write in (or None), and what a
#: clear outcome must show: a fragment of the error line, or ``"exit:N"`` for a
#: documented safe outcome with that exit code.
Extra = Callable[[Path, Path], tuple[list[str], Path | None, str]]

SUITE = """suite: s
tools:
  - name: lookup_order
    parameters:
      type: object
      properties: {order_id: {type: string}}
      required: [order_id]
cases:
  - id: c1
    prompt: Where is ORD-1?
    expect: {call: lookup_order, args: {order_id: ORD-1}}
"""
SCRIPT = (
    'default:\n  tool_calls:\n  - {name: lookup_order, raw_arguments: \'{"order_id": "ORD-1"}\'}\n'
)


def _checkout(work: Path, suite: str = SUITE) -> None:
    (work / "suite.yaml").write_text(suite)
    (work / "script.yaml").write_text(SCRIPT)


RUN = ["run", "suite.yaml", "-m", "scripted:script.yaml", "-q", "--no-cache", "-o", "runs/smoke"]


def linked_run_folder(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work)
    (work / "runs").mkdir()
    os.symlink(outside, work / "runs" / "smoke")
    return [*RUN, "--no-store"], work / "runs", "symbolic link"


def linked_runs(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work)
    os.symlink(outside, work / "runs")
    return [*RUN, "--no-store"], None, "symbolic link"


def _linked_file(name: str) -> Extra:
    def build(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
        _checkout(work)
        (work / "runs" / "smoke").mkdir(parents=True)
        os.symlink(outside / "secret.txt", work / "runs" / "smoke" / name)
        return RUN, work / "runs", "symbolic link"  # the store on: events are written

    return build


def linked_store(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work)
    (work / ".toolproof").mkdir()
    os.symlink(outside / "planted.db", work / ".toolproof" / "history.db")
    return [*RUN, "--store", ".toolproof/history.db"], work / "runs", "exit:0"


def store_trigger(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work)
    (work / ".toolproof").mkdir()
    db = sqlite3.connect(work / ".toolproof" / "history.db")
    db.executescript(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY);"
        "CREATE TRIGGER forever BEFORE INSERT ON runs BEGIN SELECT count(*) FROM "
        "(WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c); END;"
    )
    db.close()
    return [*RUN, "--store", ".toolproof/history.db"], work / "runs", "exit:0"


def committed_config(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work, SUITE + "environment: {state: s.json, tools: t.py}\n")
    (work / "s.json").write_text("{}")
    (work / "t.py").write_text(f"open({str(outside / 'ran.txt')!r}, 'w').write('x')\n")
    (work / "toolproof.yaml").write_text("allow_code: true\n")
    return ["validate", "suite.yaml"], None, "--allow-code"


def _setting(text: str, expect: str) -> Extra:
    def build(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
        _checkout(work, SUITE.replace("tools:\n", f'settings: {{"*": {{{text}}}}}\ntools:\n', 1))
        return [*RUN, "--no-store"], work / "runs", expect

    return build


def _mcp(command: str, expect: str) -> Extra:
    def build(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
        _checkout(work, SUITE + f"environment: {{mcp: {json.dumps(command)}}}\n")
        (work / "server.py").write_text("")
        return ["validate", "suite.yaml", "--allow-code"], None, expect

    return build


def deep_glob(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    deep = work / "cases"
    for i in range(18):
        deep = deep / f"d{i}"
        (deep / "side").mkdir(parents=True)
    pattern = "/".join(["**"] * 9) + "/*.jsonl"
    _checkout(work, SUITE + f"cases_from: ['{pattern}']\n")
    return ["validate", "suite.yaml"], None, "no file matches"


def ref_chain(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    schemas: dict[str, object] = {
        f"S{i}": {"$ref": f"#/components/schemas/S{i + 1}"} for i in range(600)
    }
    schemas["S600"] = {"type": "string"}
    body = {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/S0"}}}
    op = {
        "operationId": "op",
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"200": {"description": "ok"}},
    }
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"post": op}},
        "components": {"schemas": schemas},
    }
    (work / "spec.json").write_text(json.dumps(spec))
    return ["tools", "import", "spec.json"], None, "$refs nest more than"


def huge_calibration(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    suite = SUITE.replace(
        "tools:\n",
        "judge: {model: scripted:script.yaml, calibration: [judge.calibration]}\ntools:\n",
    )
    _checkout(work, suite)
    with open(work / "judge.calibration", "wb") as fh:
        fh.truncate(5 * 1024**3)
    (work / "records.jsonl").write_text(
        json.dumps(
            {
                "format": "toolproof.record/1",
                "case_id": "c1",
                "target": "t",
                "attempt": 0,
                "response": {
                    "tool_calls": [
                        {"name": "lookup_order", "raw_arguments": '{"order_id": "ORD-1"}'}
                    ]
                },
            }
        )
        + "\n"
    )
    return ["gate", "records.jsonl", "--suite", "suite.yaml"], work, "larger than the limit"


def fifo_records(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work)
    os.mkfifo(work / "records.jsonl")
    return ["score", "suite.yaml", "records.jsonl", "--no-store"], None, "not a regular file"


def dev_zero_records(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    _checkout(work)
    os.symlink("/dev/zero", work / "records.jsonl")
    return ["score", "suite.yaml", "records.jsonl", "--no-store"], None, "records.jsonl"


def duplicate_key_records(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    """A records line that names the called tool twice (a failing and a passing one)."""
    from tests.security.corpus import BASE, RECORD

    (work / "suite.yaml").write_text(BASE, encoding="utf-8")
    line = json.dumps(RECORD)
    assert '"name": "lookup_order"' in line
    twice = line.replace('"name": "lookup_order"', '"name": "x", "name": "lookup_order"', 1)
    (work / "records.jsonl").write_text(twice + "\n", encoding="utf-8")
    return ["score", "suite.yaml", "records.jsonl", "--no-store"], None, "duplicate key 'name'"


def duplicate_key_policy(work: Path, outside: Path) -> tuple[list[str], Path | None, str]:
    """A gate policy that gives the strict pass threshold twice."""
    (work / "policy.yaml").write_text(
        "thresholds:\n  default: {strict_pass: 0.9, strict_pass: 0}\n", encoding="utf-8"
    )
    return ["gate", "run", "--policy", "policy.yaml", "--no-store"], None, "duplicate key"


EXTRA_ENTRIES: list[tuple[str, Extra]] = [
    ("records-duplicate-key", duplicate_key_records),
    ("policy-duplicate-key", duplicate_key_policy),
    ("run-folder-link", linked_run_folder),
    ("runs-link", linked_runs),
    ("records-link", _linked_file("records.jsonl")),
    ("events-link", _linked_file("events.jsonl")),
    ("lock-link", _linked_file(".lock")),
    ("store-link", linked_store),
    ("store-trigger", store_trigger),
    ("committed-config-allow-code", committed_config),
    ("rpm-tiny", _setting("rpm: 1e-300", "settings.*.rpm")),
    ("tpm-tiny", _setting("tpm: 1e-300", "settings.*.tpm")),
    ("max-retries-50", _setting("max_retries: 50", "settings.*.max_retries")),
    ("mcp-sh-c", _mcp('stdio:sh -c "python3 /tmp/x.py" server.py', "-c runs code")),
    ("mcp-python-c", _mcp("stdio:python3 -c 'import os' server.py", "-c runs code")),
    ("mcp-python-m", _mcp("stdio:python3 -m http.server server.py", "-m runs code")),
    ("mcp-absolute", _mcp("stdio:/usr/bin/python3 server.py", "trusted_commands")),
    ("glob-deep", deep_glob),
    ("openapi-600-refs", ref_chain),
    ("calibration-5gb", huge_calibration),
    ("records-fifo", fifo_records),
    ("records-dev-zero", dev_zero_records),
]

_GATE_SUITE = """suite: attack
tools:
  - {name: lookup_order, description: Get one order by its ID., parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}}
  - {name: delete_account, description: Delete the account., parameters: {type: object, properties: {}}}
cases:
  - {id: lookup, prompt: "Where is ORD-104821?", risk: critical, expect: {call: lookup_order, args: {order_id: ORD-104821}, forbidden: [delete_account]}}
  - {id: greeting, prompt: "Hi there!", expect: {kind: text, forbidden: [delete_account]}}
"""
_GOOD = """cases:
  lookup: {tool_calls: [{name: lookup_order, raw_arguments: '{"order_id": "ORD-104821"}'}]}
  greeting: {text: Hello!}
"""
_BAD = "default: {tool_calls: [{name: delete_account, raw_arguments: '{}'}]}\n"
_DOWN = "default: {error: server_error, message: simulated outage}\n"


def _gate_checkout(work: Path) -> None:
    (work / "suite.yaml").write_text(_GATE_SUITE, encoding="utf-8")
    for name, script in (("good", _GOOD), ("bad", _BAD), ("down", _DOWN)):
        (work / f"{name}.yaml").write_text(script, encoding="utf-8")


def _planted_records(work: Path) -> list[str]:
    """A pull request commits a passing run's records.jsonl (no manifest) where CI writes
    its run; the run of a model that always calls the forbidden tool must not adopt it."""
    _gate_checkout(work)
    _invoke(["run", "suite.yaml", "-m", "scripted:good.yaml", "-n", "3", "-o", "good",
             "-q", "--no-store"])  # fmt: skip
    (work / "runs" / "smoke").mkdir(parents=True)
    (work / "runs" / "smoke" / "records.jsonl").write_bytes(
        (work / "good" / "records.jsonl").read_bytes()
    )
    _invoke(["run", "suite.yaml", "-m", "scripted:bad.yaml", "-n", "3", "-o", "runs/smoke",
             "-q", "--no-store"])  # fmt: skip
    return ["gate", "runs/smoke", "--no-store"]


def _nothing_scored(work: Path) -> list[str]:
    """Every answer an infrastructure error, and the allowance as wide as it goes."""
    _gate_checkout(work)
    _invoke(["run", "suite.yaml", "-m", "scripted:down.yaml", "-n", "2", "-o", "down",
             "-q", "--no-store", "--max-retries", "0", "--max-infra-errors", "100%"])  # fmt: skip
    return ["gate", "down", "--max-infra-errors", "100%", "--no-store"]


def _lowered_thresholds(work: Path) -> list[str]:
    """The pull request sets its suite's thresholds to 0; the gate policy comes from the
    base branch (here: a file beside it, as the CI example reads it)."""
    _gate_checkout(work)
    zero = "thresholds: {default: {selection: 0, strict_pass: 0, arguments: 0}}\n"
    suite = _GATE_SUITE.replace("cases:\n", zero + "cases:\n", 1)
    (work / "suite.yaml").write_text(suite, encoding="utf-8")
    (work / "base-policy.yaml").write_text(
        "thresholds: {default: {strict_pass: 0.85}}\nmax_infra_errors: 5%\n", encoding="utf-8"
    )
    _invoke(["run", "suite.yaml", "-m", "scripted:bad.yaml", "-n", "2", "-o", "lowered",
             "-q", "--no-store"])  # fmt: skip
    return ["gate", "lowered", "--policy", "base-policy.yaml", "--no-store"]


def _huge_integer_in_a_body(work: Path) -> list[str]:
    """A model whose tool call, in Anthropic's wire format, holds a 5,000-digit integer in
    ``input``: the model's invalid output, never an infrastructure error to allow."""
    from toolproof.testing import RawReply, StubServer

    _gate_checkout(work)
    body = (
        '{"id":"m","type":"message","role":"assistant","model":"claude-x","content":'
        '[{"type":"tool_use","id":"t1","name":"lookup_order","input":{"order_id":'
        + "9" * 5000
        + '}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}'
    ).encode()
    with StubServer(default=RawReply(body)) as stub:
        (work / "config.yaml").write_text(
            "models:\n  '*': {base_url: '" + stub.base_url("anthropic") + "', max_retries: 0}\n",
            encoding="utf-8",
        )
        _invoke(["run", "suite.yaml", "-m", "anthropic:claude-x", "-n", "2", "-o", "huge",
                 "-q", "--no-store", "--no-cache", "--config", "config.yaml",
                 "--max-infra-errors", "100%"])  # fmt: skip
    return ["gate", "huge", "--max-infra-errors", "100%", "--no-store"]


#: Inputs made to fool the gate: ``build(work)`` returns the gate command line to
#: run in ``work``; the gate must not exit 0.
GATE_ENTRIES: list[tuple[str, Callable[[Path], list[str]]]] = [
    ("planted records.jsonl in a fresh run folder", _planted_records),
    ("a run with nothing scored, allowance 100%", _nothing_scored),
    ("the suite's thresholds lowered, the base branch's policy given", _lowered_thresholds),
    ("a 5,000-digit integer in Anthropic's input, allowance 100%", _huge_integer_in_a_body),
]


def _leaked(text: str, secrets: list[str]) -> bool:
    return any(s in text for s in secrets)


def _written_text(root: Path) -> str:
    out = []
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 1 << 22:
                out.append(path.read_text("utf-8", "replace"))
        except OSError:
            continue
    return "\n".join(out)


def _judge(
    counts: Counts,
    name: str,
    tmp: Path,
    outside: Path,
    allowed: list[Path],
    run: Callable[[], tuple[int, str, BaseException | None]],
    expect: str | None,
    secrets: list[str],
    shown: str,
) -> None:
    counts.inputs += 1
    before = _snapshot(tmp)
    start = time.monotonic()
    try:
        with _budget(BUDGET_S):
            code, output, exc = run()
    except Hang:
        counts.hangs += 1
        counts.problems.append(f"{name}: hang (over {BUDGET_S} s)")
        return
    except BaseException as e:
        code, output, exc = 1, "", e
    if exc is not None:
        counts.tracebacks += 1
        counts.problems.append(f"{name}: traceback {type(exc).__name__}: {exc}"[:300])
        return
    after = _snapshot(tmp)
    changed = [p for p, v in after.items() if before.get(p) != v]
    outside_writes = [
        p for p in changed if not any(p == str(a) or p.startswith(str(a) + os.sep) for a in allowed)
    ]
    if outside_writes:
        counts.writes_outside += 1
        counts.problems.append(f"{name}: wrote {outside_writes[:3]}")
    if _leaked(output, secrets) or _leaked(_written_text(tmp / "work"), secrets):
        counts.secrets_leaked += 1
        counts.problems.append(f"{name}: a planted secret was printed or written")
    elapsed = time.monotonic() - start
    if expect is None or expect.startswith("exit:"):
        wanted = (0, 1) if expect is None else tuple(int(c) for c in expect[5:].split(","))
        if code in wanted:
            counts.safe += 1
        else:
            counts.unclear += 1
            counts.problems.append(f"{name}: exit {code}, expected {wanted}: {output[-300:]}")
        return
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    if code == 2 and lines and expect in "\n".join(lines) and "Traceback" not in output:
        counts.clear_errors += 1
    else:
        counts.unclear += 1
        counts.problems.append(f"{name}: exit {code} in {elapsed:.1f} s, wanted '{expect}' "
                               f"({shown}): {output.strip()[-300:]}")  # fmt: skip


def run_corpus(verbose: bool = False) -> Counts:
    """Run every input; return the counts (``problems`` lists what went wrong)."""
    from tests.security.corpus import CLI_ENTRIES, RECORD, SECRET, SQL_ENTRIES, write_fixtures
    from tests.security.corpus import SCRIPT as OLD_SCRIPT
    from tests.security.test_hostile_corpus import COMMANDS, SAFE, _args

    counts = Counts()
    old_env = {k: os.environ.get(k) for k in PLANTED_ENV}
    os.environ.update(PLANTED_ENV)
    cwd = os.getcwd()
    secrets = [SECRET, *PLANTED_ENV.values()]
    try:
        with tempfile.TemporaryDirectory(prefix="toolproof-corpus-") as top:
            os.environ["TOOLPROOF_STORE"] = str(Path(top) / "store" / "history.db")
            os.environ["TOOLPROOF_CACHE"] = str(Path(top) / "cache")
            for i, (name, build, expect) in enumerate(CLI_ENTRIES):
                for command in COMMANDS:
                    tmp = Path(top) / f"old{i}-{command}"
                    outside, suite, work = tmp / "outside", tmp / "suite", tmp / "work"
                    write_fixtures(outside)
                    suite.mkdir()
                    work.mkdir()
                    (work / "records.jsonl").write_text(json.dumps(RECORD) + "\n")
                    (work / "script.yaml").write_text(OLD_SCRIPT)
                    build(suite, outside)
                    os.chdir(suite if (suite / "toolproof.yaml").exists() else work)
                    args = _args(command, suite, work)
                    want: str | None = expect
                    if (name, command) in SAFE:  # documented: no suite code is needed, none runs
                        want = "exit:0,1" if command == "score" else "exit:0,1,4"
                    _judge(counts, f"{name} ({command})", tmp, outside, [work / "run"],
                           lambda a=args: _invoke(a), want, secrets, " ".join(args))  # type: ignore[misc]  # fmt: skip
            for i, (name, build, expect) in enumerate(SQL_ENTRIES):
                tmp = Path(top) / f"sql{i}"
                outside, suite = tmp / "outside", tmp / "suite"
                write_fixtures(outside)
                suite.mkdir()
                build(suite, outside)
                os.chdir(suite)
                (tmp / "script.yaml").write_text(OLD_SCRIPT)
                args = [
                    "run",
                    str(suite),
                    "-m",
                    f"scripted:{tmp / 'script.yaml'}",
                    "-q",
                    "--no-cache",
                    "--no-store",
                    "--allow-code",
                    "-o",
                    str(tmp / "run"),
                ]
                _judge(counts, name, tmp, outside, [tmp / "run"], lambda a=args: _invoke(a),  # type: ignore[misc]
                       expect, secrets, " ".join(args))  # fmt: skip
            for i, (name, extra) in enumerate(EXTRA_ENTRIES):
                tmp = Path(top) / f"new{i}"
                outside, work = tmp / "outside", tmp / "work"
                write_fixtures(outside)
                work.mkdir()
                os.chdir(work)
                args, may_write, expect = extra(work, outside)
                allowed = [may_write] if may_write is not None else []
                _judge(counts, name, tmp, outside, allowed, lambda a=args: _invoke(a), expect,  # type: ignore[misc]
                       secrets, " ".join(args))  # fmt: skip
            for i, (name, gate) in enumerate(GATE_ENTRIES):
                tmp = Path(top) / f"gate{i}"
                work = tmp / "work"
                work.mkdir(parents=True)
                os.chdir(work)
                args = gate(work)
                counts.inputs += 1
                with _budget(BUDGET_S):
                    code, _, exc = _invoke(args)
                if exc is None and code == 0:
                    counts.gate_passes_that_should_fail += 1
                    counts.problems.append(f"{name}: the gate passed")
                elif exc is not None:
                    counts.tracebacks += 1
                    counts.problems.append(f"{name}: traceback {type(exc).__name__}: {exc}")
                else:
                    counts.clear_errors += 1
    finally:
        os.chdir(cwd)
        for key, value in old_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if verbose:
        for problem in counts.problems:
            print(f"  {problem}", file=sys.stderr)
    return counts


def main() -> int:
    import warnings

    warnings.simplefilter("ignore")
    start = time.monotonic()
    counts = run_corpus(verbose=True)
    print(f"hostile corpus: {counts.line()} ({time.monotonic() - start:.1f} s)")
    return 1 if counts.bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

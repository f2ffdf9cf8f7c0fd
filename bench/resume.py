"""Kill -9 a run midway, resume it, and compare with a run that was never interrupted.

Both runs go through the command line (``python -m toolproof run``) against
the OpenAI-compatible stub in its own process. Prints how many attempts the
interrupted-and-resumed run lost and duplicated, and whether its verdicts
match the uninterrupted run's.

    python bench/resume.py [--suite examples/support] [--repeats 3] [--kill-at 0.5]

Target: 0 lost, 0 duplicated, identical verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from overhead import DUMMY_KEY, StubProcess

from toolproof.grade import Scorer
from toolproof.records import read_records
from toolproof.suite import load_suite
from toolproof.testing import Reply, StubServer
from toolproof.types import Record

SPEC = "openai:gpt-4.1-mini"
ORDER_ID = re.compile(r"ORD-?\d{5,6}", re.IGNORECASE)


class EchoStub(StubServer):
    """Answers from the prompt, so each case gets its own, repeatable answer.

    An order ID in the last user message becomes ``lookup_order`` with that
    ID as written; no ID, and the stub asks for one.
    """

    async def _perform(self, request: Any, step: Any, fmt: str, model: str) -> Any:
        if isinstance(step, Reply):
            body = json.loads(await request.read())
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            found = ORDER_ID.search(str(users[-1].get("content", ""))) if users else None
            step = (
                Reply.call("lookup_order", {"order_id": found.group(0)})
                if found
                else Reply.say("Which order do you mean? Please give me the order number.")
            )
        return await super()._perform(request, step, fmt, model)


def toolproof(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OPENAI_API_KEY": DUMMY_KEY}
    cmd = [sys.executable, "-m", "toolproof", "run", *args, "-q"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen[bytes]) -> None:
    code = proc.wait()
    if code != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"toolproof exited {code}: {err}")


def wait_for_lines(path: Path, count: int) -> int:
    while True:
        lines = path.read_bytes().count(b"\n") if path.exists() else 0
        if lines >= count:
            return lines
        time.sleep(0.005)


def verdicts(scorer: Scorer, records: list[Record]) -> dict[tuple[str, int], object]:
    out: dict[tuple[str, int], object] = {}
    for rec in records:
        v = scorer.grade(rec)
        out[(rec.case_id, rec.attempt)] = None if v is None else (v.passed, v.failure)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="examples/support")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kill-at", type=float, default=0.5, help="fraction of attempts done")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    total = len(suite.cases) * args.repeats

    with StubProcess(0.02, EchoStub) as stub, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        config = tmp / "toolproof.yaml"
        config.write_text(
            yaml.safe_dump({"models": {SPEC: {"base_url": stub.base_url, "concurrency": 8}}})
        )
        common = [args.suite, "-m", SPEC, "--config", str(config), "-n", str(args.repeats)]
        common += ["--no-cache"]

        finish(toolproof(*common, "--out", str(tmp / "whole")))

        victim = toolproof(*common, "--out", str(tmp / "killed"))
        seen = wait_for_lines(tmp / "killed" / "records.jsonl", int(total * args.kill_at))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        at_kill = len(read_records(tmp / "killed" / "records.jsonl"))
        finish(toolproof("--resume", str(tmp / "killed")))

        whole = read_records(tmp / "whole" / "records.jsonl")
        resumed = read_records(tmp / "killed" / "records.jsonl")

    expected = {(c.id, a) for c in suite.cases for a in range(args.repeats)}
    counts = Counter((r.case_id, r.attempt) for r in resumed)
    lost = len(expected - set(counts))
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    scorer = Scorer(suite)
    same = verdicts(scorer, whole) == verdicts(scorer, resumed)
    passed_whole = sum(1 for r in whole if (v := scorer.grade(r)) is not None and v.passed)
    passed_resumed = sum(1 for r in resumed if (v := scorer.grade(r)) is not None and v.passed)
    print(f"attempts              {total} ({len(suite.cases)} cases x {args.repeats} repeats)")
    print(f"killed after          {at_kill} records on disk ({seen} lines seen before SIGKILL)")
    print(f"after resume          {len(resumed)} records")
    print(f"lost                  {lost}   (target 0)")
    print(f"duplicated            {duplicated}   (target 0)")
    print(f"strict passes         uninterrupted {passed_whole}, resumed {passed_resumed}")
    print(f"verdicts identical    {same}")


if __name__ == "__main__":
    main()

"""`toolproof score` on a τ²-bench domain, beside τ2's own evaluation of the same trajectories.

The domain is imported (``toolproof import tau2``) and each task's gold
actions are run as one attempt (a scripted model makes the calls, one per
step, through the real runner; τ2's tools run on the state through the
suite's tools file). Then, timed:

- the records' size: mean bytes per record (a line of records.jsonl);
- ``toolproof score SUITE RECORDS --allow-code`` as a command (a fresh
  process, wall time and its CPU time), of one record and of all the gold
  records, each with an empty cache of expected states (``cold``) and again
  with the cache the first run left (``warm``);
- toolproof's own work per multi-step verdict: ``Scorer.grade`` of each record,
  in CPU time of this thread (``time.thread_time``), the expected states
  already computed;
- τ2-bench's own evaluation of the same trajectories, in one run of its
  ``EnvironmentEvaluator.calculate_reward`` (the DB part of its reward: a
  fresh environment replays the trajectory's writes, another the gold
  actions, and their hashes are compared), CPU time per trajectory. τ2 needs
  Python ≥3.12 and its LLM runtime to import whole: ``--tau2-python`` runs
  that part in a Python where it does, as a subprocess.

Run it before and after a change with the same arguments, back to back, and
read the load printed beside the figures.

Usage: python bench/tau2_speed.py CHECKOUT [--domain retail] [--tau2-python PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _tau2_side() -> None:
    """τ2's evaluation of the gold trajectories (read from stdin), CPU seconds each."""
    job = json.load(sys.stdin)
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator
    from tau2.registry import registry

    domain = job["domain"]
    constructor = registry.get_env_constructor(domain)
    tasks = {t.id: t for t in registry.get_tasks_loader(domain)(None)}
    trajectories = []
    for item in job["jobs"]:
        env = constructor()
        messages: list[Any] = [UserMessage(role="user", content="Hello.")]
        for i, (name, args) in enumerate(item["calls"]):
            call = ToolCall(id=f"call_{i}", name=name, arguments=args, requestor="assistant")
            messages.append(AssistantMessage(role="assistant", tool_calls=[call]))
            messages.append(env.get_response(call))
        messages.append(AssistantMessage(role="assistant", content="Done."))
        trajectories.append((tasks[item["task"]], messages))
    cpu = []
    started = time.perf_counter()
    for task, messages in trajectories:
        t0 = time.process_time()
        EnvironmentEvaluator.calculate_reward(
            environment_constructor=constructor, task=task, full_trajectory=messages
        )
        cpu.append(time.process_time() - t0)
    wall = time.perf_counter() - started
    json.dump({"cpu": cpu, "wall": wall}, sys.stdout)


def _command(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the child's) and the exit code of a toolproof command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", *args], env=env, capture_output=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"toolproof {' '.join(args)} failed:\n{done.stderr.decode()[-2000:]}")
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--tau2-python", default=None)
    args = parser.parse_args()

    import yaml

    from toolproof.evaluate import evaluate
    from toolproof.grade import Scorer
    from toolproof.importers import import_tau2, write_tau2
    from toolproof.records import read_records
    from toolproof.run import RunOptions, Target, expected_states, run_suite
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    trust = Trust(allow_code=True)
    result = import_tau2(args.checkout, [args.domain], allow_code=True)
    tasks = json.loads(Path(result.domains[0].tasks_file).read_text(encoding="utf-8"))
    golds = {
        f"{args.domain}-{'_'.join(str(t['id']).split())}": (
            str(t["id"]),
            [
                (a["name"], a.get("arguments") or {})
                for a in (t.get("evaluation_criteria") or {}).get("actions") or []
            ],
        )
        for t in tasks
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_tau2(result, out)
        suite_dir = out / args.domain
        suite = load_suite(suite_dir, trust=trust)
        cases = [
            c.model_copy(update={"prompt": f"(τ2 task {c.id})", "user": None}) for c in suite.cases
        ]
        suite = suite.model_copy(update={"cases": cases})
        script = {
            case_id: {
                "steps": [
                    *(
                        {"tool_calls": [{"id": f"call_{i}", "name": n, "arguments": a}]}
                        for i, (n, a) in enumerate(calls)
                    ),
                    {"text": "Done."},
                ]
            }
            for case_id, (_, calls) in golds.items()
        }
        script_path = out / "script.yaml"
        script_path.write_text(yaml.safe_dump({"model": "gold", "cases": script}), "utf-8")
        # the suite the commands score: every case with its prompt (as run above)
        text = (suite_dir / "suite.yaml").read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        for case in data["cases"]:
            case["prompt"] = f"(τ2 task {case['id']})"
            case.pop("user", None)
        (suite_dir / "suite.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        run_dir = out / "run"
        started = time.perf_counter()
        run_suite(
            suite,
            [Target(spec=f"scripted:{script_path}")],
            RunOptions(out=run_dir, cache=False, fsync=False, trust=trust, observer=None),
        )
        run_s = time.perf_counter() - started
        records_path = run_dir / "records.jsonl"
        lines = records_path.read_bytes().splitlines(keepends=True)
        one = out / "one.jsonl"
        one.write_bytes(lines[0])

        env = dict(os.environ)
        timings = {}
        for label, records in (("one record", one), (f"all {len(lines)} gold", records_path)):
            for state in ("cold", "warm"):
                if state == "cold":
                    env["TOOLPROOF_CACHE"] = tempfile.mkdtemp(dir=tmp, prefix="cache-")
                command = ["score", str(suite_dir), str(records), "--allow-code", "--no-store"]
                timings[(label, state)] = _command(command, env)

        # toolproof's own work per verdict: Scorer.grade, expected states already computed
        records = read_records(records_path)
        try:  # computed when asked for (toolproof after expected states were kept)
            from toolproof.run._expected import StoredStates

            stored = StoredStates(suite, trust, folder=None)
            states: Any = {case_id: stored[case_id] for case_id in stored}
        except ImportError:  # before
            states = expected_states(suite, trust)
        scorer = Scorer(suite, states)
        grade_cpu = []
        passed = 0
        for record in records:
            t0 = time.thread_time()
            verdict = scorer.grade(record)
            grade_cpu.append(time.thread_time() - t0)
            passed += bool(verdict.passed)
        ev = evaluate(suite, [records_path], trust=trust, expected_states=states)
        end_ok = sum(
            1
            for t in ev.targets.values()
            for v in t.verdicts
            if v.multistep is not None and v.multistep.end_state_ok
        )

        tau2 = None
        if args.tau2_python:
            jobs = [{"task": task, "calls": calls} for task, calls in golds.values()]
            done = subprocess.run(
                [args.tau2_python, __file__, "--tau2-side"],
                input=json.dumps({"domain": args.domain, "jobs": jobs}),
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                sys.exit(f"τ2's side failed:\n{done.stderr[-3000:]}")
            tau2 = json.loads(done.stdout)

    size = sum(len(line) for line in lines) / len(lines)
    print(f"domain {args.domain}: {len(lines)} gold attempts (run {run_s:.1f} s)")
    print(f"records: {size / 1000:.1f} KB per record on average")
    print(f"end state right: {end_ok} of {len(lines)}")
    print("toolproof score (a command: wall, CPU of the process):")
    for (label, state), (wall, cpu, code) in timings.items():
        print(f"  {label:<14} {state:<5} {wall:7.2f} s wall {cpu:7.2f} s CPU (exit {code})")
    print(
        f"toolproof's own work per multi-step verdict (Scorer.grade, CPU): "
        f"median {statistics.median(grade_cpu) * 1000:.1f} ms, "
        f"mean {statistics.mean(grade_cpu) * 1000:.1f} ms, max {max(grade_cpu) * 1000:.1f} ms"
    )
    if tau2 is not None:
        cpu = tau2["cpu"]
        print(
            f"τ2's own evaluation (EnvironmentEvaluator.calculate_reward, one run of "
            f"{len(cpu)}): {tau2['wall']:.1f} s wall; CPU per trajectory median "
            f"{statistics.median(cpu) * 1000:.0f} ms, mean {statistics.mean(cpu) * 1000:.0f} ms"
        )
    load = os.getloadavg()
    print(f"load: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--tau2-side"]:
        _tau2_side()
    else:
        main()

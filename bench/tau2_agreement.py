"""toolproof's end-state verdict against τ²-bench's own reward, trajectory by trajectory.

A τ2-bench domain is imported (``toolproof import tau2``), and for each task
several trajectories are made from its gold actions:

- ``gold``: the gold actions, in order;
- ``drop_write``: the last state-changing call left out;
- ``change_arg``: one argument of the first state-changing call changed (a
  list loses its last item, text gets a character added, a number grows by 1);
- ``add_write``: a state-changing call of another task added at the end;
- ``reorder``: the calls in reverse order.

(A variant that would give the gold trajectory again is not made.) Each
trajectory is run twice:

- by toolproof: a scripted model makes the calls, one per step, through the
  real runner on the imported suite (τ2's tools run on the suite's state via
  its tools file), and ``evaluate()`` grades the records; the figure is the
  verdict's end-state check (``end_state.actions``: the gold actions replayed);
- by τ2-bench: the same calls go through τ2's environment (its responses are
  the tool messages), and τ2's ``EnvironmentEvaluator.calculate_reward``
  grades the trajectory (the DB and ENV_ASSERTION parts of the reward; the
  NL_ASSERTION and COMMUNICATE parts are not run on either side).

A domain graded by assertions alone (telecom: ENV_ASSERTION), whose tasks
have a simulated user with tools of its own, goes through the real runner and
grader too, one run per trajectory kind: a scripted agent makes the
trajectory's agent-side calls, and a scripted user (the case's ``user`` with
its ``tools``) makes the user-side ones (the calls of the user's tools), turn
by turn in the trajectory's order; the case's ``setup`` runs before, as in any
run, and ``evaluate()`` grades the records, running the suite's
``end_state.assert`` functions (``--allow-code``). The figure is whether no
end-state assertion failed. An attempt whose calls are not the trajectory's
(or that did not end with the user's stop) is counted as not checked.

τ2 needs Python ≥3.12 and its LLM runtime to import whole; if it does not
import here, give ``--tau2-python`` (a Python where it does) and its side runs
there as a subprocess, fed the trajectories as JSON.

Usage: python bench/tau2_agreement.py CHECKOUT [--domain retail] [--tasks N]
       [--tau2-python PYTHON] [--keep RUN_DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

VARIANTS = ("gold", "drop_write", "change_arg", "add_write", "reorder")

Call = tuple[str, dict[str, Any]]


def _changed(value: Any) -> Any:
    if isinstance(value, list) and len(value) > 1:
        return value[:-1]
    if isinstance(value, str):
        return value + "0"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    return None


def trajectories(tasks: list[dict[str, Any]], writes: set[str]) -> dict[str, dict[str, list[Call]]]:
    """Task id -> variant -> the calls, made from the gold actions (see the module doc)."""
    golds = {
        str(t["id"]): [
            (a["name"], a.get("arguments") or {})
            for a in (t.get("evaluation_criteria") or {}).get("actions") or []
        ]
        for t in tasks
    }
    ids = list(golds)
    out: dict[str, dict[str, list[Call]]] = {}
    for n, task_id in enumerate(ids):
        gold = golds[task_id]
        variants: dict[str, list[Call]] = {"gold": gold}
        write_at = [i for i, (name, _) in enumerate(gold) if name in writes]
        if write_at:
            variants["drop_write"] = [c for i, c in enumerate(gold) if i != write_at[-1]]
            name, args = gold[write_at[0]]
            for key, value in args.items():
                changed = _changed(value)
                if changed is not None:
                    calls = list(gold)
                    calls[write_at[0]] = (name, {**args, key: changed})
                    variants["change_arg"] = calls
                    break
        for other in ids[n + 1 :] + ids[:n]:
            extra = [c for c in golds[other] if c[0] in writes and c not in gold]
            if extra:
                variants["add_write"] = [*gold, extra[0]]
                break
        if list(reversed(gold)) != gold:
            variants["reorder"] = list(reversed(gold))
        out[task_id] = variants
    return out


# --- τ2's side (runs where τ2 imports) --------------------------------------------------------


def tau2_rewards(domain: str, tasks_file: str, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """τ2's reward for each job ({task, calls}), each call made live through τ2's environment."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator
    from tau2.registry import registry

    constructor = registry.get_env_constructor(domain)
    with open(tasks_file, encoding="utf-8") as fh:  # the file the suite was imported from
        tasks = {t.id: t for t in (Task.model_validate(x) for x in json.load(fh))}
    out = []
    for job in jobs:
        task = tasks[job["task"]]
        env = constructor()
        if task.initial_state is not None:
            env.set_state(
                task.initial_state.initialization_data,
                task.initial_state.initialization_actions,
                task.initial_state.message_history or [],
            )
        users = set(env.user_tools.get_tools()) if env.user_tools is not None else set()
        messages: list[Any] = [UserMessage(role="user", content="Hello.")]
        for i, (name, args) in enumerate(job["calls"]):
            side = "user" if name in users else "assistant"
            call = ToolCall(id=f"call_{i}", name=name, arguments=args, requestor=side)
            if side == "user":
                messages.append(UserMessage(role="user", tool_calls=[call]))
            else:
                messages.append(AssistantMessage(role="assistant", tool_calls=[call]))
            messages.append(env.get_response(call))
        messages.append(AssistantMessage(role="assistant", content="Done."))
        started = time.process_time()
        info = EnvironmentEvaluator.calculate_reward(
            environment_constructor=constructor, task=task, full_trajectory=messages
        )
        cpu = time.process_time() - started
        db = info.db_check.db_reward if info.db_check is not None else None
        out.append({"reward": info.reward, "db": db, "cpu": cpu})
    return out


def _tau2_side() -> None:
    job = json.load(sys.stdin)
    json.dump(tau2_rewards(job["domain"], job["tasks_file"], job["jobs"]), sys.stdout)


def run_tau2(
    domain: str, tasks_file: str, jobs: list[dict[str, Any]], python: str | None
) -> list[dict[str, Any]]:
    if python is None:
        return tau2_rewards(domain, tasks_file, jobs)
    done = subprocess.run(
        [python, __file__, "--tau2-side"],
        input=json.dumps({"domain": domain, "tasks_file": tasks_file, "jobs": jobs}),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"τ2's side failed:\n{done.stderr[-3000:]}")
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


# --- toolproof's side ------------------------------------------------------------------------


def toolproof_verdicts(
    suite_dir: Path, plan: dict[str, dict[str, list[Call]]], run_dir: Path
) -> dict[tuple[str, str], bool | None]:
    """(task id, variant) -> the verdict's end-state check (None: not checked)."""
    import yaml

    from toolproof.evaluate import evaluate
    from toolproof.run import RunOptions, Target, run_suite
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    trust = Trust(allow_code=True)
    suite = load_suite(suite_dir, trust=trust)
    domain = suite.name.removeprefix("tau2-")
    by_id = {f"{domain}-{'_'.join(t.split())}": t for t in plan}
    cases = []
    for case in suite.cases:
        if case.id not in by_id:
            continue
        # the simulated user's loop is not what is measured: the calls are scripted
        cases.append(case.model_copy(update={"prompt": f"(τ2 task {case.id})", "user": None}))
    suite = suite.model_copy(update={"cases": cases})
    targets = []
    for variant in VARIANTS:
        script: dict[str, Any] = {}
        for case_id, task_id in by_id.items():
            calls = plan[task_id].get(variant)
            if calls is None:
                continue
            steps: list[dict[str, Any]] = [
                {"tool_calls": [{"id": f"call_{i}", "name": n, "arguments": a}]}
                for i, (n, a) in enumerate(calls)
            ]
            steps.append({"text": "Done."})
            script[case_id] = {"steps": steps}
        path = run_dir.parent / f"script-{variant}.yaml"
        path.write_text(
            yaml.safe_dump({"model": f"tau2-{variant}", "cases": script}), encoding="utf-8"
        )
        targets.append(Target(spec=f"scripted:{path}"))
    run_suite(
        suite,
        targets,
        RunOptions(out=run_dir, cache=False, fsync=False, trust=trust, observer=None),
    )
    ev = evaluate(suite, [run_dir / "records.jsonl"], trust=trust)
    out: dict[tuple[str, str], bool | None] = {}
    for target, summary in ev.targets.items():
        variant = Path(target.removeprefix("scripted:")).stem.removeprefix("script-")
        for verdict in summary.verdicts:
            ms = verdict.multistep
            ok = None if ms is None else ms.end_state_ok
            out[(by_id[verdict.case_id], variant)] = ok
    return out


def conversation(calls: list[Call], user_tools: set[str]) -> tuple[list[Any], list[Any]]:
    """The agent's script steps and the simulated user's script that make ``calls`` in order.

    The calls are cut into turns: the agent's calls (one per step, then a text
    answer), then the user's (its script's ``call`` entries, then what it says),
    alternately; the user's last turn ends the conversation (``###STOP###``).
    """
    turns: list[tuple[str, list[Call]]] = []
    for call in calls:
        side = "user" if call[0] in user_tools else "agent"
        if turns and turns[-1][0] == side:
            turns[-1][1].append(call)
            continue
        turns.append((side, [call]))
    if not turns or turns[0][0] == "user":
        turns.insert(0, ("agent", []))  # the agent speaks before the user acts
    if turns[-1][0] == "agent":
        turns.append(("user", []))
    steps: list[Any] = []
    script: list[Any] = []
    for n, (side, made) in enumerate(turns):
        last = n == len(turns) - 1
        if side == "agent":
            steps += [
                {"tool_calls": [{"id": f"call_{len(steps)}_{i}", "name": c, "arguments": a}]}
                for i, (c, a) in enumerate(made)
            ]
            steps.append({"text": "Done." if last else "Please go on."})
            continue
        say = "Thanks. ###STOP###" if last else "Done."
        entries: list[Any] = [{"call": {"tool": c, "args": a}} for c, a in made]
        if entries:
            entries[-1]["say"] = say
        else:
            entries.append(say)
        script += entries
    return steps, script


def conversation_verdicts(
    suite_dir: Path, plan: dict[str, dict[str, list[Call]]], run_dir: Path
) -> dict[tuple[str, str], bool | None]:
    """(task id, variant) -> the verdict's end-state assertion checks passed (None: no verdict).

    For a domain whose tasks have a simulated user with tools of its own
    (telecom): per trajectory kind, one run of the real runner, in which a
    scripted agent makes the trajectory's agent-side calls and a scripted user
    (the case's ``user``, its ``tools`` kept) makes the user-side ones, in
    order; the case's ``setup`` runs first, as in any run. ``evaluate()``
    grades the records with the suite's ``end_state.assert`` functions
    (``--allow-code``). The figure: no failed end-state assertion, and the end
    state's own check (if any) not failed.
    """
    import yaml

    from toolproof.evaluate import evaluate
    from toolproof.run import RunOptions, Target, run_suite
    from toolproof.suite import load_suite
    from toolproof.trust import Trust
    from toolproof.types import FailureClass, Outcome, SimulatedUser

    trust = Trust(allow_code=True)
    suite = load_suite(suite_dir, trust=trust)
    domain = suite.name.removeprefix("tau2-")
    by_id = {f"{domain}-{'_'.join(t.split())}": t for t in plan}
    out: dict[tuple[str, str], bool | None] = {}
    for variant in VARIANTS:
        cases = []
        agent: dict[str, Any] = {}
        for case in suite.cases:
            task_id = by_id.get(case.id)
            calls = plan[task_id].get(variant) if task_id is not None else None
            if calls is None or case.user is None:
                continue
            steps, script = conversation(calls, set(case.user.tools))
            user = SimulatedUser.model_validate({"script": script, "tools": case.user.tools})
            turns = sum(1 for e in script if isinstance(e, str) or "say" in e)
            update = {
                "prompt": f"(τ2 task {case.id})",
                "user": user,
                "max_turns": min(100, turns + 1),
                "max_steps": min(100, max(case.max_steps or 0, len(steps) + 1)),
            }
            cases.append(case.model_copy(update=update))
            agent[case.id] = {"steps": steps}
        if not cases:
            continue
        path = run_dir.parent / f"script-{variant}.yaml"
        path.write_text(
            yaml.safe_dump({"model": f"tau2-{variant}", "cases": agent}), encoding="utf-8"
        )
        variant_suite = suite.model_copy(update={"cases": cases})
        variant_dir = run_dir / variant
        done = run_suite(
            variant_suite,
            [Target(spec=f"scripted:{path}")],
            RunOptions(out=variant_dir, cache=False, fsync=False, trust=trust, observer=None),
        )
        made_as_planned = set()
        user_tools = {c.id: set(c.user.tools) for c in cases if c.user is not None}
        for record in done.records:
            calls = plan[by_id[record.case_id]][variant]
            users = user_tools[record.case_id]
            agent_made = [
                (c.name, c.arguments)
                for m in record.transcript or []
                if m.role == "assistant"
                for c in m.tool_calls
            ]
            user_made = [(c.tool, c.args) for t in record.user_turns or [] for c in t.calls or []]
            if (
                record.outcome is Outcome.ok
                and record.stopped_by == "user_stop"
                and agent_made == [c for c in calls if c[0] not in users]
                and user_made == [c for c in calls if c[0] in users]
            ):
                made_as_planned.add(record.case_id)
            else:  # counted as not checked: the attempt is not the trajectory
                print(
                    f"note: {variant} {record.case_id}: outcome {record.outcome.value}, "
                    f"stopped by {record.stopped_by}, {len(agent_made)} agent and "
                    f"{len(user_made)} user calls of {len(calls)}: {record.error}",
                    file=sys.stderr,
                )
        ev = evaluate(variant_suite, [variant_dir / "records.jsonl"], trust=trust)
        for summary in ev.targets.values():
            for verdict in summary.verdicts:
                ms = verdict.multistep
                failed = any(c.failure is FailureClass.failed_assertion for c in verdict.checks)
                ok = None if ms is None else not failed and ms.end_state_ok is not False
                if verdict.case_id not in made_as_planned:
                    ok = None
                out[(by_id[verdict.case_id], variant)] = ok
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--tasks", type=int, default=0, help="Only the first N tasks (0: all).")
    parser.add_argument("--tau2-python", default=None)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the run folder here.")

    args = parser.parse_args()

    from toolproof.importers import import_tau2, write_tau2

    t0 = time.perf_counter()
    result = import_tau2(args.checkout, [args.domain], allow_code=True)
    domain = result.domains[0]
    tasks = json.loads(Path(domain.tasks_file).read_text(encoding="utf-8"))
    if args.tasks:
        tasks = tasks[: args.tasks]
    writes = {t.name for t in domain.tools if t.writes}
    plan = trajectories(tasks, writes)
    jobs = [
        {"task": task_id, "variant": v, "calls": calls}
        for task_id, variants in plan.items()
        for v, calls in variants.items()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_tau2(result, out)
        run_dir = args.keep or out / "runs" / "agreement"
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        t1 = time.perf_counter()
        graded_by_assertions = all(
            "DB" not in ((t.get("evaluation_criteria") or {}).get("reward_basis") or [])
            for t in tasks
        )
        if graded_by_assertions:
            ours = conversation_verdicts(out / args.domain, plan, run_dir)
        else:
            ours = toolproof_verdicts(out / args.domain, plan, run_dir)
        t2 = time.perf_counter()
        theirs = run_tau2(args.domain, domain.tasks_file, jobs, args.tau2_python)
        t3 = time.perf_counter()
        if args.keep:
            import shutil

            shutil.copytree(out / args.domain, args.keep.parent / "suite", dirs_exist_ok=True)

    rows: Counter[tuple[str, str]] = Counter()
    disagree = []
    for job, tau in zip(jobs, theirs, strict=True):
        key = (job["task"], job["variant"])
        ok = ours.get(key)
        tau_ok = tau["reward"] == 1.0
        rows[(job["variant"], "n")] += 1
        rows[(job["variant"], "tau2 1")] += tau_ok
        if ok is None:
            rows[(job["variant"], "unchecked")] += 1
            disagree.append((key, "toolproof did not check the end state", tau))
        elif ok == tau_ok:
            rows[(job["variant"], "agree")] += 1
        else:
            disagree.append((key, f"toolproof {'pass' if ok else 'fail'}", tau))
    print(f"domain {args.domain}: {len(plan)} tasks, {len(jobs)} trajectories")
    print(f"{'trajectory':<12} {'n':>5} {'agree':>6} {'τ2 reward 1':>12}")
    total = Counter[str]()
    for v in VARIANTS:
        n = rows[(v, "n")]
        if n:
            print(f"{v:<12} {n:>5} {rows[(v, 'agree')]:>6} {rows[(v, 'tau2 1')]:>12}")
            for k in ("n", "agree", "tau2 1"):
                total[k] += rows[(v, k)]
    print(f"{'all':<12} {total['n']:>5} {total['agree']:>6} {total['tau2 1']:>12}")
    for (task_id, variant), what, tau in disagree:
        print(f"disagree: task {task_id} {variant}: {what}; τ2 reward {tau['reward']}")
    cpu = sum(t["cpu"] for t in theirs) / max(1, len(theirs))
    print(
        f"time: import {t1 - t0:.1f} s; toolproof run+score {t2 - t1:.1f} s; "
        f"τ2 {t3 - t2:.1f} s (its evaluation {cpu * 1000:.0f} ms CPU per trajectory)"
    )
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--tau2-side"]:
        _tau2_side()
    else:
        main()

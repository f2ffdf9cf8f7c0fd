"""Multi-step attempts on a large state: toolproof's own work per attempt.

Generates a retail-like environment: a JSON state of tables of rows (orders,
users, products; about 3 MB), a tools module (lookups, a search that scans the
whole orders table in half the cases, and tools that change a few rows: cancel
an order, change its address, add a note, create a return),
and a suite of multi-step cases whose expected end states come from gold
actions. A scripted model makes the gold calls (one case in four also makes a
wrong change, so some verdicts fail on the end state). The attempts run
through the real runner (``run_suite`` with the scripted provider) and are
graded by ``evaluate()``.

toolproof's own work is timed by wrapping its functions, per attempt, in CPU
time of the thread that runs them (``time.thread_time``: the machine's load
does not inflate it the way it does wall time):

- copy: giving the attempt its private state (``LoadedEnvironment.session``);
- tool calls: the environment's tool calls, minus the same calls on a plain
  in-memory copy (what the suite's own code costs), i.e. the cost of the
  private copy being made as the tools touch it;
- snapshot/diff: the end state (or its changes) taken when the attempt ends;
- grade: ``Scorer.grade`` (rebuilding the end state when the record holds
  changes, comparing it with the expected state, every check).

Also printed: the records line size (mean and largest) and the process's peak
RSS. Run it on the same machine before and after a change, back to back.

Usage: python bench/multistep_state.py [--cases 20] [--repeats 3] [--mb 3]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOOLS_PY = '''
"""Retail tools: each gets the attempt's private state and the call's arguments."""


def _order(state, order_id):
    order = state["orders"].get(order_id)
    if order is None:
        raise LookupError(f"no order {order_id}")
    return order


def get_order(state, args):
    return _order(state, args["order_id"])


def get_user(state, args):
    user = state["users"].get(args["user_id"])
    if user is None:
        raise LookupError(f"no user {args['user_id']}")
    return user


def find_orders(state, args):
    return [o["order_id"] for o in state["orders"].values() if o["user_id"] == args["user_id"]]


def get_product(state, args):
    return state["products"][args["product_id"]]


def cancel_order(state, args):
    order = _order(state, args["order_id"])
    if order["status"] != "pending":
        raise ValueError(f"order {args['order_id']} is {order['status']}")
    order["status"] = "cancelled"
    order["cancel_reason"] = args["reason"]
    return {"order_id": args["order_id"], "status": "cancelled"}


def modify_address(state, args):
    order = _order(state, args["order_id"])
    order["address"].update(args["address"])
    return order["address"]


def add_note(state, args):
    user = state["users"][args["user_id"]]
    user["notes"].append(args["note"])
    return {"notes": len(user["notes"])}


def create_return(state, args):
    order = _order(state, args["order_id"])
    return_id = f"R{len(state['returns']) + 1:06d}"
    state["returns"][return_id] = {
        "return_id": return_id,
        "order_id": args["order_id"],
        "items": args["item_ids"],
        "status": "requested",
    }
    order["status"] = "return requested"
    return {"return_id": return_id}
'''

TOOL_SCHEMAS = {
    "get_order": {"order_id": {"type": "string"}},
    "get_user": {"user_id": {"type": "string"}},
    "get_product": {"product_id": {"type": "string"}},
    "find_orders": {"user_id": {"type": "string"}},
    "cancel_order": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
    "modify_address": {"order_id": {"type": "string"}, "address": {"type": "object"}},
    "add_note": {"user_id": {"type": "string"}, "note": {"type": "string"}},
    "create_return": {
        "order_id": {"type": "string"},
        "item_ids": {"type": "array", "items": {"type": "string"}},
    },
}


def make_state(mb: float, rng: random.Random) -> dict[str, Any]:
    """Tables of rows, about ``mb`` megabytes as JSON."""
    products = {
        f"P{i:04d}": {
            "product_id": f"P{i:04d}",
            "name": f"Product {i}",
            "variants": {
                f"V{i:04d}{j}": {
                    "item_id": f"V{i:04d}{j}",
                    "options": {"color": rng.choice(["red", "blue", "black"]), "size": "M"},
                    "available": rng.random() < 0.8,
                    "price": round(rng.uniform(5, 500), 2),
                }
                for j in range(8)
            },
        }
        for i in range(50)
    }
    state: dict[str, Any] = {"products": products, "users": {}, "orders": {}, "returns": {}}
    n = 0
    while len(json.dumps(state)) < mb * 1_000_000:
        for _ in range(100):
            user_id = f"user_{n:05d}"
            state["users"][user_id] = {
                "user_id": user_id,
                "name": {"first": f"First{n}", "last": f"Last{n}"},
                "email": f"user{n}@example.com",
                "address": {"street": f"{n} Main St", "city": "Springfield", "zip": f"{n:05d}"},
                "payment_methods": {"card": {"brand": "visa", "last4": f"{n % 10000:04d}"}},
                "notes": [],
            }
            for k in range(3):
                order_id = f"#W{n:05d}{k}"
                state["orders"][order_id] = {
                    "order_id": order_id,
                    "user_id": user_id,
                    "status": rng.choice(["pending", "pending", "delivered", "processed"]),
                    "address": dict(state["users"][user_id]["address"]),
                    "items": [
                        {
                            "item_id": f"V{rng.randrange(50):04d}{rng.randrange(8)}",
                            "quantity": rng.randint(1, 3),
                            "price": round(rng.uniform(5, 500), 2),
                        }
                        for _ in range(rng.randint(1, 4))
                    ],
                    "payment_history": [
                        {"type": "payment", "amount": round(rng.uniform(5, 900), 2)}
                    ],
                }
            n += 1
    return state


def make_suite(folder: Path, cases: int, mb: float, seed: int) -> tuple[Path, Path, dict]:
    """The suite folder's files; returns (suite.yaml, script.yaml, state)."""
    import yaml

    rng = random.Random(seed)
    state = make_state(mb, rng)
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    (folder / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    pending = [o for o, row in state["orders"].items() if row["status"] == "pending"]
    chosen = rng.sample(pending, cases)
    suite_cases, script = [], {}
    for i, order_id in enumerate(chosen):
        user_id = state["orders"][order_id]["user_id"]
        item = state["orders"][order_id]["items"][0]["item_id"]
        gold = [
            {
                "tool": "cancel_order",
                "args": {"order_id": order_id, "reason": "ordered by mistake"},
            },
            {"tool": "add_note", "args": {"user_id": user_id, "note": f"cancelled {order_id}"}},
        ]
        if i % 2:
            gold[0] = {"tool": "create_return", "args": {"order_id": order_id, "item_ids": [item]}}
            gold.append(
                {
                    "tool": "modify_address",
                    "args": {"order_id": order_id, "address": {"street": "1 New Road"}},
                }
            )
        case_id = f"case-{i:03d}"
        suite_cases.append(
            {
                "id": case_id,
                "prompt": f"Please sort out my order {order_id}.",
                "max_steps": len(gold) + 4,
                "trajectory": {"mode": "superset", "steps": gold},
                "end_state": {"actions": gold},
            }
        )
        steps: list[dict[str, Any]] = [
            {"tool_calls": [{"name": "get_order", "arguments": {"order_id": order_id}}]},
            {"tool_calls": [{"name": "get_user", "arguments": {"user_id": user_id}}]},
        ]
        if i % 2 == 0:  # a scan of the whole orders table
            steps.append(
                {"tool_calls": [{"name": "find_orders", "arguments": {"user_id": user_id}}]}
            )
        steps += [{"tool_calls": [{"name": g["tool"], "arguments": g["args"]}]} for g in gold]
        if i % 4 == 3:  # a wrong extra change: fails on the end state
            steps.append(
                {
                    "tool_calls": [
                        {"name": "add_note", "arguments": {"user_id": user_id, "note": "extra"}}
                    ]
                }
            )
        steps.append({"text": f"Done: order {order_id} is taken care of."})
        script[case_id] = {"steps": steps}
    suite = {
        "format": 1,
        "suite": "bench-multistep-state",
        "system": "You are a retail support agent.",
        "tools": [
            {
                "name": name,
                "description": f"The {name.replace('_', ' ')} tool.",
                "parameters": {"type": "object", "properties": props, "required": list(props)},
            }
            for name, props in TOOL_SCHEMAS.items()
        ],
        "environment": {"state": "state.json", "tools": "tools.py"},
        "cases": suite_cases,
    }
    suite_path = folder / "suite.yaml"
    suite_path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    script_path = folder / "script.yaml"
    script_path.write_text(
        yaml.safe_dump({"model": "scripted-bench", "cases": script}), encoding="utf-8"
    )
    return suite_path, script_path, script


class Timers:
    """Seconds spent in wrapped functions, by label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, owner: Any, name: str, label: str) -> None:
        if not hasattr(owner, name):
            return
        original: Callable[..., Any] = getattr(owner, name)
        timers = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                timers.seconds[label] += time.thread_time() - started
                timers.calls[label] += 1

        setattr(owner, name, timed)


def tool_code_alone(
    state: dict[str, Any], script: dict[str, Any], tools: Any, repeats: int
) -> float:
    """Seconds the scripted tool calls take on plain in-memory copies (the copies not counted)."""
    total = 0.0
    for _ in range(repeats):
        for answer in script.values():
            work = copy.deepcopy(state)
            for step in answer["steps"]:
                for call in step.get("tool_calls", []):
                    started = time.thread_time()
                    with contextlib.suppress(Exception):  # a tool's own error is an answer
                        getattr(tools, call["name"])(work, call["arguments"])
                    total += time.thread_time() - started
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mb", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from toolproof.evaluate import evaluate
    from toolproof.grade import _multistep as multistep
    from toolproof.grade import _score as score
    from toolproof.run import RunOptions, Target, run_suite
    from toolproof.run import _env as env
    from toolproof.suite import load_suite
    from toolproof.trust import Trust

    trust = Trust(allow_code=True)
    timers = Timers()
    timers.wrap(env.LoadedEnvironment, "session", "copy")
    timers.wrap(env.EnvSession, "call", "tool calls")
    timers.wrap(env.EnvSession, "snapshot", "snapshot/diff")
    timers.wrap(env.EnvSession, "changes", "snapshot/diff")
    timers.wrap(score.Scorer, "grade", "grade")
    timers.wrap(multistep, "compare_states", "grade: compare")
    timers.wrap(multistep, "rebuild_end_state", "grade: rebuild")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite_path, script_path, script = make_suite(folder, args.cases, args.mb, args.seed)
        size = (folder / "state.json").stat().st_size
        suite = load_suite(suite_path, trust=trust)
        started = time.perf_counter()
        result = run_suite(
            suite,
            [Target(spec=f"scripted:{script_path}")],
            RunOptions(
                repeats=args.repeats,
                out=folder / "run",
                cache=False,
                fsync=False,
                trust=trust,
                observer=None,
            ),
        )
        run_s = time.perf_counter() - started
        attempts = len(result.records)
        errors = [r for r in result.records if r.outcome != "ok"]
        if errors:
            sys.exit(f"{len(errors)} attempt(s) did not end ok: {errors[0].error}")
        run_timers = dict(timers.seconds)
        run_calls = dict(timers.calls)
        timers.seconds.clear()
        timers.calls.clear()
        records = folder / "run" / "records.jsonl"
        lines = records.read_bytes().splitlines()

        started = time.perf_counter()
        ev = evaluate(suite, [records], trust=trust)
        score_s = time.perf_counter() - started
        verdicts = [v for t in ev.targets.values() for v in t.verdicts]
        passed = sum(1 for v in verdicts if v.passed)
        grade_timers = dict(timers.seconds)
        expected_s = grade_timers.pop("copy", 0.0) + grade_timers.pop("snapshot/diff", 0.0)
        grade_timers.pop("tool calls", 0.0)

        tools = env._load_module(folder / "tools.py", (folder / "tools.py").read_bytes())
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        alone = tool_code_alone(state, script, tools, args.repeats)

    def ms(seconds: float) -> str:
        return f"{seconds / attempts * 1000:8.2f} ms"

    copy_s = run_timers.get("copy", 0.0)
    calls_s = run_timers.get("tool calls", 0.0)
    snap_s = run_timers.get("snapshot/diff", 0.0)
    grade_s = grade_timers.get("grade", 0.0)
    overhead = max(0.0, calls_s - alone)
    own = copy_s + overhead + snap_s + grade_s
    print(
        f"state: {size / 1e6:.2f} MB JSON, {args.cases} cases x {args.repeats} repeats = "
        f"{attempts} attempts, {run_calls.get('tool calls', 0)} tool calls"
    )
    print(f"verdicts: {passed} passed, {len(verdicts) - passed} failed")
    print("toolproof's own work per attempt (CPU time):")
    print(f"  copy                       {ms(copy_s)}")
    print(
        f"  tool calls, beyond tools   {ms(overhead)}   (calls {ms(calls_s).strip()}, "
        f"the tools' own code {ms(alone).strip()})"
    )
    print(f"  snapshot/diff              {ms(snap_s)}")
    print(f"  grade                      {ms(grade_s)}")
    for label in ("grade: rebuild", "grade: compare"):
        if label in grade_timers:
            print(f"    {label[7:]:<23}{ms(grade_timers[label])}")
    print(f"  total                      {ms(own)}")
    print(f"expected states (once per case, {args.cases} cases): {expected_s * 1000:.1f} ms")
    print(f"run: {run_s:.2f} s; score (evaluate): {score_s:.2f} s")
    sizes = sorted(len(line) + 1 for line in lines)
    print(
        f"records line: mean {sum(sizes) / len(sizes) / 1e3:.1f} KB, "
        f"largest {sizes[-1] / 1e3:.1f} KB, file {sum(sizes) / 1e6:.2f} MB"
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: {rss / 1024:.0f} MB")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

"""toolproof's verdict on BFCL's multi-turn categories against BFCL's own multi-turn checker.

The multi-turn categories are imported (``toolproof import bfcl``). For each
entry, conversations are made from the ground truth (a list per turn of calls):

- ``gold``: every turn's ground-truth calls, in order;
- ``drop_call``: the last call of the last turn that has calls, left out;
- ``change_arg``: one argument of the first call that has one, changed (text
  gets a character added, a number grows by 1, a boolean flips, a list loses
  its last item);
- ``shift_call``: the last call of the first turn with calls that has a later
  turn, made at the start of the next turn instead (the same calls, the same
  end state, another state after that turn);
- ``early_call`` (``multi_turn_miss_func`` only): the first ground-truth call of
  a function held back until a turn (``missed_function``), made at the end of
  the turn before instead, when the function is not offered yet.

(A variant that would give the gold calls again is not made.) Each
conversation is scored twice, in this process:

- by toolproof: the real runner runs the imported case, its scripted user
  saying each turn, and a scripted model making the turn's calls (all in one
  step, run in order, then a text answer), on BFCL's classes through the suite's tools file
  (``--allow-code``); ``evaluate()`` grades the records. The figure is whether
  the verdict passed: every ground-truth call made (the trajectory), and the
  end state, with its digest of the state after each checked turn and whether
  the model called anything in it, equal to the gold calls';
- by BFCL: the same calls, as call strings (one step per turn), go to
  ``multi_turn_checker`` (bfcl_eval's), which runs them on fresh instances of
  its classes and checks, after every turn with ground truth, the instances'
  state and that the turn's ground-truth results are among the model's results.

The BFCL checker is also run on the whole conversation as one turn (its
state and results compared once, at the end), to count the rows its
per-turn checks decide.

Needs bfcl-eval (``pip install --no-deps bfcl-eval``) and mpmath (MathAPI).
``--no-trajectory`` grades on the end state alone (the cases' superset
trajectory of the ground-truth calls left out), to show what the trajectory
adds.

Usage: python bench/bfcl_multiturn_agreement.py [--entries N] [--category NAME ...]
       [--no-trajectory] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_param",
    "multi_turn_long_context",
    "multi_turn_miss_func",
)
VARIANTS = ("gold", "drop_call", "change_arg", "shift_call", "early_call")

Call = tuple[str, dict[str, Any]]
Turns = list[list[Call]]


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, list) and len(value) > 1:
        return value[:-1]
    if isinstance(value, str):
        return value + "0"
    if isinstance(value, int | float):
        return value + 1
    return None


def variants(gold: Turns, held: dict[int, list[str]] | None = None) -> dict[str, Turns]:
    """The conversations made from one entry's ground truth (see the module doc);
    ``held``: by turn, the functions held back until that turn (``missed_function``)."""
    out: dict[str, Turns] = {"gold": gold}
    for turn, names in sorted((held or {}).items()):
        first = next((c for c, (name, _) in enumerate(gold[turn]) if name in names), None)
        if turn > 0 and first is not None:
            turns = copy.deepcopy(gold)
            turns[turn - 1].append(turns[turn].pop(first))
            out["early_call"] = turns
            break
    with_calls = [i for i, t in enumerate(gold) if t]
    if with_calls:
        last = with_calls[-1]
        turns = copy.deepcopy(gold)
        turns[last] = turns[last][:-1]
        out["drop_call"] = turns
    for t, turn in enumerate(gold):
        done = False
        for c, (name, args) in enumerate(turn):
            for key, value in args.items():
                changed = _changed(value)
                if changed is not None:
                    turns = copy.deepcopy(gold)
                    turns[t][c] = (name, {**args, key: changed})
                    out["change_arg"] = turns
                    done = True
                    break
            if done:
                break
        if done:
            break
    for t in with_calls:
        if t + 1 < len(gold):
            turns = copy.deepcopy(gold)
            moved = turns[t].pop()
            turns[t + 1].insert(0, moved)
            out["shift_call"] = turns
            break
    return out


def _first_change(gold: Turns, turns: Turns) -> Call:
    """The first call of ``turns`` that is not the gold call in its place."""
    flat = [c for t in turns for c in t]
    return next(c for c, g in zip(flat, [c for t in gold for c in t], strict=False) if c != g)


def call_text(name: str, args: dict[str, Any]) -> str:
    """A call as the string BFCL's checker runs (Python literals)."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


# --- BFCL's side ------------------------------------------------------------------------------


def bfcl_verdicts(
    rows: list[tuple[str, str, dict[str, Any], list[list[str]], Turns]],
) -> list[dict[str, Any]]:
    """BFCL's multi_turn_checker on each row (full, and end state only)."""
    os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-root-"))
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as mtc
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as mtu

    out = []
    for n, (_, variant, entry, truth, turns) in enumerate(rows):
        decoded = [[[call_text(c, a) for c, a in turn]] if turn else [] for turn in turns]
        model = f"tp{n}_{variant}"
        started = time.process_time()
        full = mtc.multi_turn_checker(decoded, truth, entry, entry["id"].rsplit("_", 1)[0], model)
        cpu = time.process_time() - started
        # the end state only: every turn's calls, then one state check after the last turn
        flat_model = [[[call_text(c, a) for turn in turns for c, a in turn]]]
        flat_truth = [[t for turn in truth for t in turn]]
        end_only = mtc.multi_turn_checker(
            flat_model if flat_truth[0] else [[]],
            flat_truth,
            entry,
            entry["id"].rsplit("_", 1)[0],
            model + "_end",
        )
        for key in [k for k in vars(mtu) if k.startswith(f"tp{n}_")]:
            delattr(mtu, key)  # BFCL keeps each run's instances in its module globals
        out.append(
            {
                "valid": bool(full["valid"]),
                "error_type": full.get("error_type", ""),
                "message": full.get("error_message", ""),
                "end_valid": bool(end_only["valid"]),
                "end_error_type": end_only.get("error_type", ""),
                "cpu": cpu,
            }
        )
    return out


# --- toolproof's side -------------------------------------------------------------------------


def toolproof_verdicts(
    suite_dir: Path, plan: dict[str, dict[str, Turns]], run_dir: Path, trajectory: bool = True
) -> dict[tuple[str, str], tuple[bool | None, str]]:
    """(entry id, variant) -> (the verdict passed; its failure), None: not as planned."""
    import yaml

    from toolproof.evaluate import evaluate
    from toolproof.run import RunOptions, Target, run_suite
    from toolproof.suite import load_suite
    from toolproof.trust import Trust
    from toolproof.types import Outcome

    trust = Trust(allow_code=True)
    suite = load_suite(suite_dir, trust=trust)
    cases = [c for c in suite.cases if c.id in plan]
    if not trajectory:  # the end state alone
        cases = [c.model_copy(update={"trajectory": None}) for c in cases]
    suite = suite.model_copy(update={"cases": cases})
    out: dict[tuple[str, str], tuple[bool | None, str]] = {}
    for variant in VARIANTS:
        script: dict[str, Any] = {}
        for case_id, made in plan.items():
            turns = made.get(variant)
            if turns is None:
                continue
            steps: list[dict[str, Any]] = []
            for t, turn in enumerate(turns):
                if turn:  # one step per turn: its calls, run in order
                    calls = [
                        {"id": f"c{t}_{i}", "name": c, "arguments": a}
                        for i, (c, a) in enumerate(turn)
                    ]
                    steps.append({"tool_calls": calls})
                steps.append({"text": "Done."})
            script[case_id] = {"steps": steps}
        cases = [c for c in suite.cases if c.id in script]
        if not cases:
            continue
        path = run_dir / f"script-{variant}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"model": f"bfcl-{variant}", "cases": script}), "utf-8")
        variant_suite = suite.model_copy(update={"cases": cases})
        variant_dir = run_dir / variant
        done = run_suite(
            variant_suite,
            [Target(spec=f"scripted:{path}")],
            RunOptions(out=variant_dir, cache=False, fsync=False, trust=trust, observer=None),
        )
        planned = set()
        for record in done.records:
            made = [
                (c.name, c.arguments)
                for m in record.transcript or []
                if m.role == "assistant"
                for c in m.tool_calls
            ]
            want = [c for turn in plan[record.case_id][variant] for c in turn]
            if record.outcome is Outcome.ok and record.stopped_by == "user_stop" and made == want:
                planned.add(record.case_id)
            else:
                print(
                    f"note: {variant} {record.case_id}: outcome {record.outcome.value}, "
                    f"stopped by {record.stopped_by}, {len(made)} of {len(want)} calls: "
                    f"{record.error}",
                    file=sys.stderr,
                )
        ev = evaluate(variant_suite, [variant_dir / "records.jsonl"], trust=trust)
        for summary in ev.targets.values():
            for verdict in summary.verdicts:
                ok: bool | None = verdict.passed if verdict.case_id in planned else None
                why = verdict.failure.value if verdict.failure is not None else ""
                out[(verdict.case_id, variant)] = (ok, why)
    return out


def classify(variant: str, ours: bool | None, bfcl: dict[str, Any], why: str) -> str:
    if ours is None:
        return "toolproof did not run it as planned"
    if ours and not bfcl["valid"] and bfcl["end_valid"]:
        return f"{variant}: BFCL fails a turn, on a check toolproof makes at the end ({bfcl['error_type']})"
    if ours and not bfcl["valid"]:
        return (
            f"{variant}: toolproof passes, BFCL fails ({bfcl['error_type']}; with the end state only: "
            f"{bfcl['end_error_type']})"
        )
    if not ours and bfcl["valid"]:
        return f"{variant}: toolproof fails ({why}), BFCL passes"
    return f"other ({variant})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=0, help="First N entries (0: all).")
    parser.add_argument("--category", action="append", default=None)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the suites and runs here.")
    parser.add_argument(
        "--no-trajectory",
        action="store_true",
        help="Grade on the end state alone (the cases' trajectory left out).",
    )
    args = parser.parse_args()

    from toolproof.importers import import_bfcl, write_bfcl
    from toolproof.importers._bfcl_multi import parse_call

    categories = args.category or list(CATEGORIES)
    t0 = time.perf_counter()
    result = import_bfcl(None, categories)
    root = result.data_dir
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        write_bfcl(result, out / "suites", force=True)
        t1 = time.perf_counter()
        rows: list[tuple[str, str, dict[str, Any], list[list[str]], Turns]] = []
        ours: dict[tuple[str, str], tuple[bool | None, str]] = {}
        golds: dict[str, Turns] = {}
        run_s = 0.0
        for s in result.suites:
            name = s.category.name
            by_id = {c["id"]: c for c in s.cases}
            entries = [
                json.loads(line)
                for line in (root / f"BFCL_v4_{name}.json").read_text("utf-8").splitlines()
                if line.strip()
            ]
            truths = {
                e["id"]: e["ground_truth"]
                for e in (
                    json.loads(line)
                    for line in (root / "possible_answer" / f"BFCL_v4_{name}.json")
                    .read_text("utf-8")
                    .splitlines()
                    if line.strip()
                )
            }
            if args.entries:
                entries = entries[: args.entries]
            plan: dict[str, dict[str, Turns]] = {}
            params = {t["name"]: list(t["parameters"]["properties"]) for t in s.suite["tools"]}
            for entry in entries:
                if entry["id"] not in by_id:
                    continue
                truth = truths[entry["id"]]
                gold = [[parse_call(c, params) for c in turn] for turn in truth]
                held = {int(k): v for k, v in entry.get("missed_function", {}).items()}
                plan[entry["id"]] = variants(gold, held)
                golds[entry["id"]] = gold
                for v, turns in plan[entry["id"]].items():
                    rows.append((name, v, entry, truth, turns))
            started = time.perf_counter()
            got = toolproof_verdicts(
                out / "suites" / name, plan, out / "runs" / name, not args.no_trajectory
            )
            run_s += time.perf_counter() - started
            ours.update(got)
        t2 = time.perf_counter()
        theirs = bfcl_verdicts(rows)
        t3 = time.perf_counter()

    table: Counter[tuple[str, str, str]] = Counter()
    classes: Counter[str] = Counter()
    examples: dict[str, str] = {}
    per_turn = 0
    changed_calls: Counter[str] = Counter()
    passed_calls: Counter[tuple[str, str]] = Counter()
    for (cat, variant, entry, _, turns), bfcl in zip(rows, theirs, strict=True):
        ok, why = ours.get((entry["id"], variant), (None, "no verdict"))
        for key in ((cat, variant), (cat, "all"), ("all", "all")):
            table[(*key, "n")] += 1
            table[(*key, "bfcl")] += bfcl["valid"]
            table[(*key, "agree")] += ok is not None and ok == bfcl["valid"]
        per_turn += bfcl["valid"] != bfcl["end_valid"]
        if ok is None or ok != bfcl["valid"]:
            cls = classify(variant, ok, bfcl, why)
            classes[cls] += 1
            examples.setdefault(
                cls, f"{entry['id']} {variant}: toolproof {why or 'pass'}; BFCL {bfcl['message']}"
            )
            gold = golds[entry["id"]]
            if variant == "change_arg" and ok is not None and not ok and bfcl["valid"]:
                changed_calls[call_text(*_first_change(gold, turns))] += 1
            if ok and not bfcl["valid"]:
                if variant == "change_arg":
                    name = _first_change(gold, turns)[0]
                elif variant == "drop_call":
                    name = [c for t in gold for c in t][-1][0]
                elif variant == "shift_call":  # the call made a turn late
                    moved = next(t for t, turn in enumerate(gold) if turn and t + 1 < len(gold))
                    name = gold[moved][-1][0]
                else:  # early_call: the held-back function called before it is offered
                    name = ", ".join(n for v in entry["missed_function"].values() for n in v)
                passed_calls[(variant, name)] += 1
    print(f"{'category':<24} {'variant':<11} {'n':>5} {'agree':>6} {'BFCL valid':>11}")
    for cat in [*categories, "all"]:
        for v in [*VARIANTS, "all"]:
            n = table[(cat, v, "n")]
            if n:
                print(
                    f"{cat:<24} {v:<11} {n:>5} {table[(cat, v, 'agree')]:>6} "
                    f"{table[(cat, v, 'bfcl')]:>11}"
                )
    for cls, count in classes.most_common():
        print(f"disagree: {count} {cls}; e.g. {' '.join(examples[cls].split())[:300]}")
    for text, count in changed_calls.most_common(8):
        print(f"changed call BFCL passes, toolproof's trajectory does not: {count} x {text}")
    for v in ("drop_call", "change_arg", "shift_call", "early_call"):
        top = [(n, c) for (w, n), c in passed_calls.most_common() if w == v][:10]
        if top:
            listed = ", ".join(f"{n} {c}" for n, c in top)
            print(f"{v} rows toolproof passes and BFCL fails, by the call changed: {listed}")
    failed: Counter[tuple[str, str]] = Counter(
        (row[1], bfcl["error_type"])
        for row, bfcl in zip(rows, theirs, strict=True)
        if not bfcl["valid"]
    )
    for v in VARIANTS:
        why = [(e, n) for (w, e), n in failed.most_common() if w == v]
        if why:
            print(f"BFCL fails {v} rows: " + ", ".join(f"{e} {n}" for e, n in why))
    print(f"rows whose BFCL verdict changes with the end state only: {per_turn} of {len(rows)}")
    cpu = sum(t["cpu"] for t in theirs) / max(1, len(theirs))
    print(
        f"time: import+write {t1 - t0:.1f} s; toolproof run+score {run_s:.1f} s; "
        f"BFCL {t3 - t2:.1f} s ({cpu * 1000:.1f} ms CPU per row, full check)"
    )
    load = os.getloadavg()
    print(f"load: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()

"""toolproof against BFCL's own AST checker, row by row, and their speed side by side.

Needs bfcl-eval installed (``pip install --no-deps bfcl-eval`` plus the few
packages its checker imports: see docs/bfcl.md). The checker is BFCL's own
``ast_checker``, imported in this process; only its model table
(``bfcl_eval.constants.model_config``, which imports every provider SDK) is
replaced by a stand-in that says no model turns dots into underscores.

Rows: for every single-turn entry, the ground truth's first acceptable answer,
and answers mutated from it the way models go wrong (another acceptable value,
text in another case or spacing, an int for a float, a float for an int, a
wrong value, a wrong or missing function, a missing or extra parameter, a
parameter left out, calls reordered or dropped). Each row is scored by BFCL's
checker and by toolproof (the imported suite, its ``bfcl`` matcher profile, and
again in the strict default), and every disagreement is put in a class.

Usage: python bench/bfcl_agreement.py [--data DIR] [--rounds 5] [--category NAME ...]
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import statistics
import sys
import tempfile
import time
import types
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from toolproof.grade import Scorer
from toolproof.importers import bfcl_data_dir, import_bfcl
from toolproof.importers._bfcl import CATEGORIES, BfclCategory, java_source
from toolproof.types import Record, Response, Suite, ToolCall


def load_checker() -> tuple[Any, Any, Any]:
    """BFCL's ast_checker, Language and is_empty_output, imported in this process."""
    os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-root-"))

    class _NoDots:
        underscore_to_dot = False

    stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    stand_in.MODEL_CONFIG_MAPPING = defaultdict(_NoDots)  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stand_in
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    try:
        from bfcl_eval.utils import is_empty_output
    except ImportError:  # the same rule, should utils need more packages

        def is_empty_output(decoded: Any) -> bool:
            return not decoded or (len(decoded) == 1 and not decoded[0])

    return ast_checker, Language, is_empty_output


# ---------------------------------------------------------------- rows


def _first(options: list[Any]) -> Any:
    for o in options:
        if not (type(o) is str and o == ""):
            return o
    return _OMIT


_OMIT: Any = object()


def _plain(value: Any) -> Any:
    """A ground-truth value as a model would give it (dict values: their first option)."""
    if isinstance(value, dict):
        out = {}
        for k, opts in value.items():
            v = _first(opts) if isinstance(opts, list) else opts
            if v is not _OMIT:
                out[k] = _plain(v)
        return out
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _answer(truth: list[dict[str, Any]], pick: Any = _first) -> list[dict[str, Any]]:
    calls = []
    for call in truth:
        ((name, params),) = call.items()
        args = {}
        for p, options in params.items():
            v = pick(options)
            if v is not _OMIT:
                args[p] = _plain(v)
        calls.append({name: args})
    return calls


def _types(functions: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {
        f["name"]: {k: v.get("type", "string") for k, v in f["parameters"]["properties"].items()}
        for f in functions
    }


def _enums(functions: list[dict[str, Any]]) -> dict[str, set[str]]:
    return {
        f["name"]: {k for k, v in f["parameters"]["properties"].items() if "enum" in v}
        for f in functions
    }


def _variant_text(text: str) -> str:
    """The same text as BFCL standardises it, written otherwise (case, spacing, dots)."""
    flipped = text.swapcase() if text.lower() != text.upper() else text
    return flipped.replace(" ", "  ").replace(".", "") + ("." if "." not in text else "")


def mutations(
    truth: list[dict[str, Any]], functions: list[dict[str, Any]], rng: random.Random
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Named answers mutated from the ground truth's first acceptable answer."""
    base = _answer(truth)
    out: list[tuple[str, list[dict[str, Any]]]] = [("ground truth", base)]
    out.append(("last alternative", _answer(truth, lambda o: _first(list(reversed(o))))))
    kinds = _types(functions)
    name0 = next(iter(base[0]))
    args0 = base[0][name0]
    params0 = next(iter(truth[0].values()))
    ptypes = kinds.get(name0, {})
    enums = _enums(functions).get(name0, set())
    strings = [p for p, v in args0.items() if isinstance(v, str) and v and p not in enums]
    in_enum = [p for p, v in args0.items() if isinstance(v, str) and v and p in enums]
    if in_enum:
        p = rng.choice(in_enum)
        m = copy.deepcopy(base)
        m[0][name0][p] = _variant_text(args0[p])
        out.append(("enum value in another case/spacing", m))
    if strings:
        p = rng.choice(strings)
        m = copy.deepcopy(base)
        m[0][name0][p] = _variant_text(args0[p])
        out.append(("text case/spacing", m))
        m = copy.deepcopy(base)
        m[0][name0][p] = args0[p] + " extra"
        out.append(("wrong text", m))
    ints = [p for p, v in args0.items() if type(v) is int]
    if ints:
        p = rng.choice(ints)
        m = copy.deepcopy(base)
        m[0][name0][p] = float(args0[p])
        out.append(("float for int" if ptypes.get(p) == "integer" else "float given", m))
        m = copy.deepcopy(base)
        m[0][name0][p] = args0[p] + 1
        out.append(("wrong number", m))
        m = copy.deepcopy(base)
        m[0][name0][p] = str(args0[p])
        out.append(("string for number", m))
    floats = [p for p, v in args0.items() if type(v) is float and v.is_integer()]
    if floats:
        p = rng.choice(floats)
        m = copy.deepcopy(base)
        m[0][name0][p] = int(args0[p])
        out.append(("int for float", m))
    bools = [p for p, v in args0.items() if type(v) is bool]
    if bools:
        p = rng.choice(bools)
        m = copy.deepcopy(base)
        m[0][name0][p] = not args0[p]
        out.append(("wrong boolean", m))
    optional = [p for p, opts in params0.items() if "" in opts and p in args0]
    if optional:
        m = copy.deepcopy(base)
        del m[0][name0][rng.choice(optional)]
        out.append(("optional left out", m))
    needed = [p for p, opts in params0.items() if "" not in opts and p in args0]
    if needed:
        m = copy.deepcopy(base)
        del m[0][name0][rng.choice(needed)]
        out.append(("needed parameter left out", m))
    m = copy.deepcopy(base)
    m[0][name0]["unexpected_param"] = "x"
    out.append(("extra parameter", m))
    m = copy.deepcopy(base)
    m[0] = {name0 + "_v2": args0}
    out.append(("wrong function", m))
    if len(base) > 1:
        out.append(("calls reversed", list(reversed(base))))
        out.append(("a call dropped", base[:-1]))
    else:
        out.append(("call repeated", base + base))
    return out


def java_rows(
    truth: list[dict[str, Any]], functions: list[dict[str, Any]], language: str
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Java/JavaScript answers: every value is source text."""

    props = {f["name"]: f["parameters"]["properties"] for f in functions}
    base = []
    for call in truth:
        ((name, params),) = call.items()
        args = {}
        for p, options in params.items():
            v = _first(options)
            if v is not _OMIT:
                args[p] = java_source(v, language, props.get(name, {}).get(p))  # type: ignore[arg-type]
        base.append({name: args})
    out = [("ground truth", base)]
    name0 = next(iter(base[0]))
    args0 = base[0][name0]
    if args0:
        p = sorted(args0)[0]
        m = copy.deepcopy(base)
        m[0][name0][p] = args0[p] + "Wrong"
        out.append(("wrong text", m))
        m = copy.deepcopy(base)
        del m[0][name0][p]
        out.append(("parameter left out", m))
    m = copy.deepcopy(base)
    m[0] = {name0 + "_v2": args0}
    out.append(("wrong function", m))
    return out


def response_of(answer: list[dict[str, Any]]) -> Response:
    calls = []
    for i, call in enumerate(answer):
        ((name, args),) = call.items()
        calls.append(ToolCall(id=f"c{i}", name=name, arguments=args))
    return Response(tool_calls=calls)


# ---------------------------------------------------------------- scoring


def classify(row: str, bfcl: bool, verdict: Any, language: str) -> str:
    """The class of a disagreement in the bfcl profile, or '' when both agree."""
    if bfcl == verdict.passed:
        return ""
    if language != "python" and not verdict.passed:
        return (
            "Java/JavaScript: BFCL parses the source text (and ignores text after a "
            "collection's end); toolproof compares the text"
        )
    if language != "python":
        return (
            "Java/JavaScript: BFCL's parser refuses the importer's spelling of this value "
            "(an array of strings, a nested value)"
        )
    if bfcl and verdict.failure is not None and verdict.failure.value == "schema_mismatch":
        detail = next((c.detail for c in verdict.checks if c.failure is not None), "")
        if "is not one of" in detail:
            return "schema: the value is not in the parameter's enum (BFCL never checks enums)"
        if "null is not of type" in detail:
            return "schema: null for a parameter that is not nullable (BFCL accepts a null the ground truth lists)"
        if "is not of type" in detail:
            return "schema: a value of another type than the schema's, which BFCL accepts as a 'variable' when the ground truth has that type"
        return f"schema: other ({detail[:80]})"
    if row == "calls reversed" and verdict.passed:
        return "parallel pairing: BFCL pairs calls greedily in order, toolproof optimally"
    return f"other ({row}; BFCL {'passes' if bfcl else 'fails'}, toolproof {'passes' if verdict.passed else 'fails'})"


def build(data: Path, categories: list[str] | None) -> tuple[Any, ...]:
    # (BFCL scores the multi-turn categories by state and responses, not with its AST
    # checker: they are compared in docs/bfcl.md by a run, not here)
    categories = categories or [c.name for c in CATEGORIES.values() if c.kind != "multi_turn"]
    imported = import_bfcl(data, categories, "bfcl")
    strict_imported = import_bfcl(data, categories, "strict")
    return imported, strict_imported


def _entries(path: Path) -> dict[str, dict[str, Any]]:
    import json

    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            e = json.loads(line)
            out[e["id"]] = e
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="BFCL's data folder (default: installed)")
    ap.add_argument("--category", action="append", default=None)
    ap.add_argument("--rounds", type=int, default=5, help="speed rounds (min and median)")
    ap.add_argument("--seed", type=int, default=28)
    opts = ap.parse_args()
    ast_checker, Language, is_empty_output = load_checker()
    data = bfcl_data_dir(opts.data)
    imported, strict_imported = build(data, opts.category)
    print(f"data: {data}")
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average) at start")
    rng = random.Random(opts.seed)
    table: dict[str, Counter[str]] = defaultdict(Counter)
    classes: dict[str, list[tuple[str, str, Any]]] = defaultdict(list)
    strict_classes: dict[str, list[tuple[str, str]]] = defaultdict(list)
    timed: list[tuple[Any, ...]] = []  # (bfcl args, scorer, case id, response)
    for s, s_strict in zip(imported.suites, strict_imported.suites, strict=True):
        cat: BfclCategory = s.category
        entries = _entries(data / f"BFCL_v4_{cat.name}.json")
        answers = {}
        if cat.kind not in ("irrelevance", "relevance"):
            answers = _entries(data / "possible_answer" / f"BFCL_v4_{cat.name}.json")
        suite = Suite(
            name=s.suite["suite"], tools=[], cases=s.cases, defaults=s.suite.get("defaults", {})
        )
        strict_suite = Suite(name=s.suite["suite"], tools=[], cases=s_strict.cases)
        scorer, strict_scorer = Scorer(suite), Scorer(strict_suite)
        language = {
            "python": Language.PYTHON,
            "java": Language.JAVA,
            "javascript": Language.JAVASCRIPT,
        }[cat.language]
        for case in s.cases:
            entry = entries[case["id"]]
            functions = entry["function"]
            if cat.kind in ("irrelevance", "relevance"):
                rows = [("no call", [])]
                if functions:
                    fn = functions[0]
                    arg = {p: "x" for p in fn["parameters"].get("required", [])}
                    rows.append(("a call", [{fn["name"]: arg}]))
            else:
                truth = answers[case["id"]]["ground_truth"]
                rows = (
                    mutations(truth, functions, rng)
                    if cat.language == "python"
                    else java_rows(truth, functions, cat.language)
                )
            for row, answer in rows:
                if cat.kind in ("irrelevance", "relevance"):
                    called = not is_empty_output(answer)
                    b = not called if cat.kind == "irrelevance" else called
                else:
                    r = ast_checker(
                        functions,
                        answer,
                        answers[case["id"]]["ground_truth"],
                        language,
                        cat.name,
                        "bench",
                    )
                    b = bool(r["valid"])
                    timed.append(
                        (
                            (
                                functions,
                                answer,
                                answers[case["id"]]["ground_truth"],
                                language,
                                cat.name,
                                "bench",
                            ),
                            scorer,
                            case["id"],
                            response_of(answer),
                        )
                    )
                response = response_of(answer)
                verdict = scorer.grade_response(case["id"], response)
                t = verdict.passed
                # (an entry the strict import skips: no answer passes it there)
                sv = (
                    strict_scorer.grade_response(case["id"], response)
                    if case["id"] in strict_scorer.cases
                    else None
                )
                st = sv is not None and sv.passed
                table[cat.name]["rows"] += 1
                table[cat.name]["agree"] += b == t
                table[cat.name]["agree_strict"] += b == st
                table[cat.name]["noted"] += any(n.startswith("schema (") for n in verdict.notes)
                cls = classify(row, b, verdict, cat.language)
                if cls:
                    classes[cls].append((case["id"], row, answer))
                if b != st:
                    strict_classes[
                        classify(row, b, sv, cat.language)
                        if cat.language != "python" and sv is not None
                        else strict_class(row, b, sv)
                    ].append((case["id"], row))
    report(table, classes, strict_classes, imported)
    speed(timed, ast_checker, opts.rounds)


def strict_class(row: str, bfcl: bool, verdict: Any) -> str:
    """The class of a row where the strict default and BFCL's checker disagree."""
    if verdict is None:
        return (
            "BFCL's ground truth breaks its own schema: no acceptable value of a parameter "
            "fits it, so the strict import skips the entry"
        )
    detail = next((c.detail for c in verdict.checks if c.failure is not None), "")
    if not bfcl:  # the strict default passes what BFCL fails
        if row == "float for int":
            return (
                "strict on purpose, looser here: 10.0 accepted for an integer 10 (JSON has one "
                "number type, and JSON Schema agrees); BFCL refuses"
            )
        if row == "calls reversed":
            return "pairing: BFCL pairs parallel calls greedily, toolproof optimally"
        return f"strict default passes, BFCL fails ({row})"
    if verdict.failure is not None and verdict.failure.value == "schema_mismatch":
        if "is not one of" in detail:
            return (
                "strict on purpose: the enum is checked as written (BFCL never checks enums)"
                if row == "enum value in another case/spacing"
                else "BFCL's ground truth breaks its own schema: a value outside the enum"
            )
        if "null is not of type" in detail:
            return "BFCL's ground truth breaks its own schema: null for a parameter not nullable"
        if "is not of type" in detail:
            # (no mutation makes a value of another type that BFCL passes: it is the ground
            # truth's, in the row's other arguments)
            return (
                "BFCL's ground truth breaks its own schema: a value of another type (a BFCL "
                "'variable')"
            )
        return f"strict default: schema ({row}; {detail[:60]})"
    if row in ("text case/spacing", "last alternative", "ground truth"):
        return "strict on purpose: text compared exactly (BFCL ignores case, spaces, , . / - _ * ^)"
    if row == "optional left out":
        return (
            "BFCL's ground truth breaks its own schema: the values of an optional parameter "
            "the strict import left out (a null, a value outside the enum) make it needed"
        )
    return f"strict default fails, BFCL passes ({row}; {detail[:60]})"


def report(table: Any, classes: Any, strict_classes: Any, imported: Any) -> None:
    print()
    print("| category | rows | agree (bfcl profile) | % | agree (strict default) | % |")
    print("|---|---:|---:|---:|---:|---:|")
    tot = Counter()
    for name in CATEGORIES:
        if name not in table:
            continue
        c = table[name]
        tot.update(c)
        print(
            f"| {name} | {c['rows']} | {c['agree']} | {100 * c['agree'] / c['rows']:.2f} | {c['agree_strict']} | {100 * c['agree_strict'] / c['rows']:.2f} |"
        )
    print(
        f"| **all** | {tot['rows']} | {tot['agree']} | {100 * tot['agree'] / tot['rows']:.2f} | {tot['agree_strict']} | {100 * tot['agree_strict'] / tot['rows']:.2f} |"
    )
    print(
        f"\nrows whose calls break the JSON Schema (noted in the verdict, not deciding in the "
        f"bfcl profile): {tot['noted']}"
    )
    print(f"\nentries not imported in the bfcl profile: {len(imported.skipped)}")
    for skip in imported.skipped:
        print(f"- {skip.where.rsplit('/', 1)[-1]}: {skip.reason}")
    print(
        f"cases with acceptable values left out (BFCL's type check refuses them): "
        f"{len(imported.dropped)}"
    )
    for drop in imported.dropped[:5]:
        print(f"- {drop.where.rsplit('/', 1)[-1]}: {drop.reason}")
    print("\ndisagreements in the bfcl profile, by class:")
    for cls, items in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        case_id, row, answer = items[0]
        print(f"- {len(items)}: {cls}\n    e.g. {case_id} ({row}): {str(answer)[:160]}")
    print("\ndisagreements in the strict default, by class:")
    for cls, items in sorted(strict_classes.items(), key=lambda kv: -len(kv[1])):
        print(f"- {len(items)}: {cls}; e.g. {items[0][0]} ({items[0][1]})")


def speed(timed: list[tuple[Any, ...]], ast_checker: Any, rounds: int) -> None:
    """BFCL's checker and toolproof's grading over the same rows, one after the other in
    each round (which goes first alternates), in wall time and in this thread's CPU time
    (which other processes on a busy machine disturb less). toolproof grades each row as
    a run's records are graded (``Scorer.grade``, what ``score``, ``gate`` and ``run``
    call); the records and BFCL's arguments are built before timing."""
    records = [
        (scorer, Record(case_id=case_id, response=response))
        for _a, scorer, case_id, response in timed
    ]
    args = [a for a, _s, _c, _r in timed]
    clocks = {"wall": time.perf_counter, "cpu": time.thread_time}
    got: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in clocks}

    def run_bfcl() -> dict[str, float]:
        start = {k: c() for k, c in clocks.items()}
        for a in args:
            ast_checker(*a)
        return {k: c() - start[k] for k, c in clocks.items()}

    def run_toolproof() -> dict[str, float]:
        start = {k: c() for k, c in clocks.items()}
        for scorer, record in records:
            scorer.grade(record)
        return {k: c() - start[k] for k, c in clocks.items()}

    for n in range(rounds):
        if n % 2:
            tp, bf = run_toolproof(), run_bfcl()
        else:
            bf, tp = run_bfcl(), run_toolproof()
        for k in clocks:
            got[k][0].append(bf[k] / len(timed))
            got[k][1].append(tp[k] / len(timed))
    us = 1e6
    print(
        f"\nspeed over {len(timed)} rows, {rounds} rounds, one process (load "
        f"{os.getloadavg()[0]:.2f}):"
    )
    for k in clocks:
        bfcl_times, tp_times = got[k]
        ratios = [t / b for t, b in zip(tp_times, bfcl_times, strict=True)]
        print(
            f"  {k:4}  BFCL ast_checker: min {min(bfcl_times) * us:.1f} µs/row, median "
            f"{statistics.median(bfcl_times) * us:.1f}; toolproof: min {min(tp_times) * us:.1f}, "
            f"median {statistics.median(tp_times) * us:.1f}; toolproof / BFCL per round: min "
            f"{min(ratios):.2f}x, median {statistics.median(ratios):.2f}x"
        )


if __name__ == "__main__":
    main()

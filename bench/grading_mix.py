"""A realistic single-step grading workload: a generated suite and answers to it.

The suite has 32 tools of four shapes (nested objects, enums, arrays of
enums and of objects, bounded numbers, ID patterns, optional parameters;
no two parameter schemas alike). Each case expects one to three calls
(about 55% one, 30% two, 15% three), some in strict order, with matchers
mixed into the literal values (optional, one_of, normalized, ignore,
range) and two or three distracting tools offered beside the expected ones.

About 60% of the answers pass (some give optional arguments, some reorder
keys or unordered calls); about 40% fail in one of the ways models fail:
a wrong enum or nested value, a schema violation (pattern, enum, missing
required, wrong type, unexpected property), a wrong or unknown tool, a
missing or extra call, calls out of order, no call, or arguments that are
not JSON.

Used by ``score_throughput.py`` (timing) and ``verdict_compare.py``
(verdicts before and after a change).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from toolproof.suite import load_suite
from toolproof.types import Suite

N_TOOLS = 32
STATUSES = ["pending_payment", "processing", "shipped", "delivered", "cancelled", "returned"]
REASONS = ["damaged", "late", "wrong_item", "not_needed", "other"]
COUNTRIES = ["CZ", "DE", "AT", "SK", "PL"]
CITIES = ["Praha", "Brno", "Wien", "Berlin", "Kraków"]
INCLUDES = ["items", "payments", "shipping", "notes"]


def _tool(i: int) -> dict[str, Any]:
    shape = i % 4
    own = {f"opt_{i}": {"type": "boolean", "description": f"Option of tool {i}."}}
    if shape == 0:
        props: dict[str, Any] = {
            "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
            "include": {"type": "array", "items": {"type": "string", "enum": INCLUDES}},
            "verbose": {"type": "boolean"},
        }
        required = ["order_id"]
    elif shape == 1:
        props = {
            "customer": {"type": "string", "minLength": 1},
            "status": {"type": "string", "enum": STATUSES},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "filter": {
                "type": "object",
                "properties": {
                    "since": {"type": "string", "format": "date"},
                    "status": {"type": "string", "enum": STATUSES},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "additionalProperties": False,
            },
        }
        required = ["customer"]
    elif shape == 2:
        props = {
            "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string", "minLength": 1},
                    "city": {"type": "string"},
                    "postal_code": {"type": "string", "pattern": "^[0-9]{3} ?[0-9]{2}$"},
                    "country": {"type": "string", "enum": COUNTRIES},
                },
                "required": ["street", "city", "country"],
                "additionalProperties": False,
            },
            "notify": {"type": "boolean"},
        }
        required = ["order_id", "address"]
    else:
        props = {
            "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
            "amount": {"type": "number", "minimum": 0},
            "reason": {"type": "string", "enum": REASONS},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": "^SKU-[0-9]{4}$"},
                        "qty": {"type": "integer", "minimum": 1, "maximum": 10},
                    },
                    "required": ["sku", "qty"],
                    "additionalProperties": False,
                },
            },
            "note": {"type": "string"},
        }
        required = ["order_id", "amount", "reason"]
    return {
        "name": f"tool_{i:02d}",
        "description": f"Operation {i} on the order system.",
        "parameters": {
            "type": "object",
            "properties": {**props, **own},
            "required": required,
            "additionalProperties": False,
        },
        "risk": ["low", "medium", "high"][i % 3],
    }


def _args(tool: int, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the answer sends, what the case expects) for a call of ``tool``."""
    shape = tool % 4
    order_id = f"ORD-{rng.randrange(10**6):06d}"
    if shape == 0:
        include = rng.sample(INCLUDES, rng.randint(1, 2))
        sent: dict[str, Any] = {"order_id": order_id, "include": include}
        expect: dict[str, Any] = {"order_id": order_id, "include": list(include)}
        if rng.random() < 0.5:
            expect["verbose"] = {"optional": True}
            if rng.random() < 0.5:
                sent["verbose"] = True
    elif shape == 1:
        customer = rng.choice(["Petra Horáková", "Jan Novák", "CUS-20417", "ana@example.com"])
        status = rng.choice(STATUSES)
        since = f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
        sent = {"customer": customer, "status": status, "filter": {"since": since}}
        expect = {
            "customer": {"normalized": customer},
            "status": status if rng.random() < 0.7 else {"one_of": [status, "processing"]},
            "filter": {"since": since},
            "limit": {"optional": {"range": {"min": 1, "max": 50}}},
        }
        if rng.random() < 0.4:
            sent["limit"] = rng.randint(1, 50)
        if rng.random() < 0.3:
            sent["filter"]["tags"] = ["vip"]
            expect["filter"]["tags"] = ["vip"]
    elif shape == 2:
        city = rng.choice(CITIES)
        address = {
            "street": f"Street {rng.randint(1, 99)}",
            "city": city,
            "postal_code": f"{rng.randint(100, 999)} {rng.randint(10, 99)}",
            "country": rng.choice(COUNTRIES),
        }
        sent = {"order_id": order_id, "address": address}
        expect = {"order_id": order_id, "address": dict(address)}
        if rng.random() < 0.5:
            expect["notify"] = {"optional": True}
    else:
        items = [
            {"sku": f"SKU-{rng.randrange(10**4):04d}", "qty": rng.randint(1, 3)}
            for _ in range(rng.randint(1, 2))
        ]
        sent = {
            "order_id": order_id,
            "amount": round(rng.uniform(5, 500), 2),
            "reason": rng.choice(REASONS),
            "items": items,
        }
        expect = {
            "order_id": order_id,
            "amount": sent["amount"],
            "reason": sent["reason"],
            "items": [dict(x) for x in items],
            "note": {"ignore": True},
        }
        if rng.random() < 0.4:
            sent["note"] = "customer called twice"
    return sent, expect


def _wrong_value(tool: int, sent: dict[str, Any], rng: random.Random) -> None:
    """A schema-valid value the case does not expect (nested or enum)."""
    shape = tool % 4
    if shape == 0:
        sent["order_id"] = "ORD-000000" if sent["order_id"] != "ORD-000000" else "ORD-000001"
    elif shape == 1:
        sent["status"] = "cancelled" if sent["status"] != "cancelled" else "returned"
        sent["filter"] = {**sent["filter"], "since": "2025-12-31"}
    elif shape == 2:
        addr = sent["address"]
        sent["address"] = {**addr, "city": "Ostrava" if addr["city"] != "Ostrava" else "Plzeň"}
    else:
        sent["reason"] = "other" if sent["reason"] != "other" else "late"


def _schema_violation(tool: int, sent: dict[str, Any], rng: random.Random) -> None:
    what = rng.randrange(5)
    shape = tool % 4
    if what == 0:
        sent["unexpected"] = 1
    elif what == 1 and shape != 1:
        sent["order_id"] = sent["order_id"].lower()  # pattern
    elif what == 2 and shape == 2:
        sent["address"] = {k: v for k, v in sent["address"].items() if k != "country"}
    elif what == 2 and shape == 3:
        sent["items"] = [{"sku": "SKU-1", "qty": 0}]
    elif what == 3 and shape == 1:
        sent["status"] = "open"  # not in the enum
    elif what == 3 and shape == 3:
        sent["amount"] = str(sent["amount"])  # wrong type
    else:
        first = next(iter(sent))
        del sent[first]  # a required argument left out (or an optional one)
        if not sent:
            sent["unexpected"] = True


def _case(i: int, rng: random.Random) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    r = rng.random()
    n = 1 if r < 0.55 else 2 if r < 0.85 else 3
    tools = rng.sample(range(N_TOOLS), n)
    planned = [(t, *_args(t, rng)) for t in tools]
    distractors = [t for t in rng.sample(range(N_TOOLS), 5) if t not in tools][:3]
    case: dict[str, Any] = {
        "id": f"mix-{i:05d}",
        "prompt": f"Request {i}: handle the orders as described.",
        "tools": sorted(f"tool_{t:02d}" for t in (*tools, *distractors)),
        "tags": [f"n{n}", ["orders", "search", "address", "refund"][tools[0] % 4]],
    }
    calls = [{"tool": f"tool_{t:02d}", "args": exp} for t, _, exp in planned]
    if n == 1:
        case["expect"] = {"call": calls[0]["tool"], "args": calls[0]["args"]}
    else:
        case["expect"] = {"calls": calls}
        if rng.random() < 0.3:
            case["expect"]["order"] = "strict"
    return case, [(t, sent) for t, sent, _ in planned]


def _answer(
    case: dict[str, Any], planned: list[tuple[int, dict[str, Any]]], rng: random.Random
) -> dict[str, Any]:
    calls = [(f"tool_{t:02d}", json.loads(json.dumps(sent))) for t, sent in planned]
    strict = case["expect"].get("order") == "strict"
    offered = case["tools"]
    if rng.random() < 0.6:  # passing
        if len(calls) > 1 and not strict and rng.random() < 0.5:
            rng.shuffle(calls)
        if rng.random() < 0.3:
            calls = [(name, dict(reversed(list(args.items())))) for name, args in calls]
        return _response(calls)
    k = rng.randrange(len(calls))
    tool, args = planned[k][0], calls[k][1]
    failure = rng.random()
    if failure < 0.25:
        _wrong_value(tool, args, rng)
    elif failure < 0.45:
        _schema_violation(tool, args, rng)
    elif failure < 0.55:
        others = [t for t in offered if t not in {c[0] for c in calls}]
        calls[k] = (rng.choice(others), args)  # wrong tool (offered)
    elif failure < 0.60:
        calls[k] = (calls[k][0] + "_v2", args)  # a tool that does not exist
    elif failure < 0.70:
        if len(calls) > 1:
            del calls[k]  # a call missing
        else:
            calls.append(calls[0])  # the call made twice
    elif failure < 0.76 and len(calls) > 1 and strict:
        calls.reverse()  # out of order
    elif failure < 0.80:
        calls.append((calls[0][0], calls[0][1]))  # an extra call
    elif failure < 0.90:
        return {"text": "Which order do you mean?", "tool_calls": [], "stop_reason": "stop"}
    else:
        raw = json.dumps(args)[:-1] + ","  # truncated: not JSON
        return _response(calls, {k: raw})
    return _response(calls)


def _response(calls: list[tuple[str, Any]], raw: dict[int, str] | None = None) -> dict[str, Any]:
    return {
        "text": None,
        "tool_calls": [
            {
                "id": f"call_{j}",
                "name": name,
                "raw_arguments": (raw or {}).get(j) or json.dumps(args, ensure_ascii=False),
            }
            for j, (name, args) in enumerate(calls)
        ],
        "stop_reason": "tool_calls",
    }


def make_mix(n_cases: int, n_records: int, folder: Path, seed: int = 12) -> tuple[Suite, Path]:
    """The generated suite, and a records file of ``n_records`` answers cycling its cases."""
    rng = random.Random(seed)
    cases = []
    plans = []
    for i in range(n_cases):
        case, planned = _case(i, rng)
        cases.append(case)
        plans.append(planned)
    suite_dir = folder / "mix-suite"
    suite_dir.mkdir()
    document = {
        "format": 1,
        "suite": "grading-mix",
        "version": "1",
        "now": "2026-09-19T10:00:00",
        "timezone": "Europe/Prague",
        "system": "You are the support assistant of an online shop.",
        "tools": [_tool(i) for i in range(N_TOOLS)],
        "cases": cases,
    }
    (suite_dir / "suite.yaml").write_text(json.dumps(document, ensure_ascii=False))
    suite = load_suite(suite_dir)  # checked like any suite: the generated cases are valid
    path = folder / "mix-records.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for r in range(n_records):
            c = r % n_cases
            record = {
                "format": "toolproof.record/1",
                "case_id": cases[c]["id"],
                "target": "generated:mix",
                "attempt": r // n_cases,
                "response": _answer(cases[c], plans[c], rng),
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return suite, path

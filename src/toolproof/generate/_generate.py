"""``toolproof generate``: cases written by a model from tool schemas, verified and deduplicated.

For each slot of the plan (see ``_plan``) the generator model is asked for one
JSON object. Its answer becomes a case only when it passes every check:

- it is JSON (prose, or an answer with no object, is a counted skip);
- an expected call names a known tool, and its arguments validate against
  that tool's schema;
- the case is a valid toolproof case whose expectations compile;
- its request is not a near duplicate of one kept before (rapidfuzz on
  normalised text).

Every kept case carries ``generated: {by, at, status: needs-review}``. The
prompts, the model's spec and fingerprint and the seed are recorded beside
the cases; each answer is cached under its inputs (model, messages, seed,
settings), so a re-run with the same inputs makes no model call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproof._shared.schema_validators import check_value
from toolproof.errors import ProviderError, UserError
from toolproof.generate._plan import Slot, plan_slots, slot_messages
from toolproof.grade import ToolIndex, compile_expectations
from toolproof.match import SpecError, context, normalize_text
from toolproof.types import Case, Message, Suite, SuiteTool

__all__ = [
    "DUPLICATE_SCORE",
    "GenerateResult",
    "case_from_answer",
    "dedupe",
    "extract_json",
    "generate_cases",
    "local_spec",
]

#: rapidfuzz ratio (0-100) of normalised requests at or above which two count as duplicates.
DUPLICATE_SCORE = 90.0
#: Longest answer read as JSON (a longer one is cut and counted as not JSON).
_MAX_ANSWER = 200_000
#: Most places in prose an object is looked for at (each ``{``, in order).
_MAX_STARTS = 200


@dataclass
class GenerateResult:
    cases: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(slot id, reason) of every slot that gave no case."""
    meta: dict[str, Any] = field(default_factory=dict)
    model_calls: int = 0
    cache_hits: int = 0
    cached: bool = False
    """Whether answers were read from and written to the cache (never for a scripted or
    replayed model: its file is its answers, and an edited file must be read again)."""


class _Skip(Exception):
    def __init__(self, reason: str, count: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.count = count


def local_spec(spec: str) -> str:
    """``local`` is the bundled model (``local:``)."""
    return "local:" if spec.strip() == "local" else spec


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def extract_json(text: str) -> dict[str, Any] | None:
    """The JSON object an answer holds: the whole text, a fenced block, or the first
    balanced ``{...}``; None when there is none (prose)."""
    text = text[:_MAX_ANSWER].strip()
    for candidate in (text, *_FENCE.findall(text)):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    # in prose: the first "{" a whole object starts at, whatever follows it; an object
    # cut short ends the search (an object inside it is not the answer)
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(_MAX_STARTS):
        if start < 0:
            break
        try:
            value = decoder.raw_decode(text, start)[0]
        except json.JSONDecodeError as exc:
            if exc.pos >= len(text) or exc.msg.startswith("Unterminated string"):
                return None
            value = None
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _tags(slot: Slot) -> list[str]:
    tags = ["generated", slot.kind.replace("_", "-")]
    if slot.edge:
        tags += ["edge", f"edge:{slot.edge}"]
        if slot.edge.startswith("lang:"):
            tags += ["multilingual", slot.edge[5:]]
    return tags


def case_from_answer(
    slot: Slot,
    answer: dict[str, Any],
    tools: dict[str, SuiteTool],
    stamp: dict[str, Any],
) -> dict[str, Any]:
    """The case one parsed answer gives; raises _Skip with the reason it gives none."""
    prompt = answer.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise _Skip("the answer has no 'prompt' string", "no_prompt")
    case: dict[str, Any] = {"id": slot.id, "prompt": prompt.strip()}
    if slot.kind in ("positive", "confusion"):
        call = answer.get("call")
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _Skip("the answer has no 'call' with a 'name'", "no_call_given")
        name, args = call["name"], call.get("arguments", {})
        if name not in tools:
            raise _Skip(f"the expected call names an unknown tool '{name}'", "unknown_tool")
        if not isinstance(args, dict):
            raise _Skip("the call's 'arguments' is not an object", "schema")
        problem = check_value(tools[name].parameters, args)
        if problem is not None:
            raise _Skip(f"the expected arguments break {name}'s schema: {problem}", "schema")
        expect: dict[str, Any] = {"call": name, "args": args}
        if slot.kind == "confusion":
            expect["forbidden"] = [slot.tool]
            if name == slot.tool:
                raise _Skip("a confusion case must call the neighbouring tool", "invalid_case")
        case["expect"] = expect
    elif slot.kind == "no_call":
        case["expect"] = {"kind": "none", "forbidden": [slot.tool]}
    else:
        case["expect"] = {"kind": slot.kind, "forbidden": [slot.tool]}
    case["tags"] = _tags(slot)
    case["generated"] = dict(stamp)
    return case


def _check_case(case: dict[str, Any], suite: Suite, index: ToolIndex) -> None:
    """Raise _Skip unless the case is one `validate` accepts (its expectations compile)."""
    try:
        parsed = Case.model_validate(case)
        compile_expectations(parsed, suite, index, context(suite))
    except (ValueError, SpecError) as exc:
        raise _Skip(f"not a valid case: {str(exc).splitlines()[0][:200]}", "invalid_case") from None


def dedupe(cases: list[dict[str, Any]], score: float = DUPLICATE_SCORE) -> tuple[list[Any], int]:
    """The cases without near-duplicate requests (the first of each kept), and how many left."""
    from rapidfuzz import fuzz, process

    kept: list[dict[str, Any]] = []
    seen: list[str] = []
    for case in cases:
        text = normalize_text(case["prompt"], True, True)
        if seen and process.extractOne(text, seen, scorer=fuzz.ratio, score_cutoff=score):
            continue
        seen.append(text)
        kept.append(case)
    return kept, len(cases) - len(kept)


def _key(spec: str, messages: list[dict[str, str]], seed: int, slot: str) -> str:
    blob = json.dumps(
        {"model": spec, "messages": messages, "seed": seed, "slot": slot, "v": 1},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def _cacheable(spec: str) -> bool:
    """Whether the provider ``spec`` names may have its answers cached (see
    ``Provider.cacheable``: not a scripted or replayed model, nor a target)."""
    from toolproof.providers._registry import provider_class

    return provider_class(spec).cacheable


def _cached(cache: Path | None, key: str) -> tuple[str, str | None, str | None] | None:
    """The cached answer, the model version that gave it and when, if any."""
    if cache is None:
        return None
    path = cache / key[:2] / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        return None
    version, at = data.get("model_version"), data.get("at")
    return (
        data["text"],
        version if isinstance(version, str) else None,
        at if isinstance(at, str) else None,
    )


def _store(cache: Path | None, key: str, text: str, version: str | None, at: str) -> None:
    if cache is None:
        return
    path = cache / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"text": text, "model_version": version, "at": at}
    path.write_text(json.dumps(entry), encoding="utf-8")


async def _ask(
    spec: str,
    todo: list[tuple[Slot, list[dict[str, str]], int]],
    note: Callable[[str], None],
) -> tuple[dict[str, str | Exception], str | None]:
    """The generator's text per slot (an exception where the call failed), and its version."""
    from toolproof.providers import ModelSettings, ProviderRequest, create_provider
    from toolproof.providers._base import with_defaults
    from toolproof.providers._http import HttpTransport
    from toolproof.providers._registry import split_spec

    transport = HttpTransport()
    out: dict[str, str | Exception] = {}
    model = split_spec(spec)[1]
    provider = create_provider(spec, ModelSettings(), transport)
    try:
        await provider.prepare(note)
        for n, (slot, messages, seed) in enumerate(todo, 1):
            settings = with_defaults(
                ModelSettings(temperature=0.7, seed=seed, max_tokens=400),
                provider.default_settings,
            )
            request = ProviderRequest(
                model=model,
                messages=[Message.model_validate(m) for m in messages],
                tools=[],
                settings=settings,
                case_id=slot.id,
            )
            try:
                exchange = await provider.generate(request)
                out[slot.id] = exchange.response.text or ""
            except ProviderError as exc:
                out[slot.id] = exc
            note(f"generated {n}/{len(todo)}: {slot.id}")
        version = provider.model_version()
    finally:
        await provider.aclose()
        await transport.aclose()
    return out, version


def generate_cases(
    tools: list[SuiteTool],
    spec: str,
    mix: dict[str, float],
    *,
    seed: int = 0,
    cache: Path | None = None,
    note: Callable[[str], None] = lambda _: None,
    now: datetime | None = None,
) -> GenerateResult:
    """Generate, verify and deduplicate cases for ``tools`` with the model ``spec``."""
    spec = local_spec(spec)
    if not tools:
        raise UserError("no tools to generate cases for")
    by_name = {t.name: t for t in tools}
    if len(by_name) != len(tools):
        raise UserError("two tools share a name; generate needs one definition per name")
    slots = plan_slots(tools, mix)
    result = GenerateResult()
    if cache is not None and not _cacheable(spec):
        cache = None  # as in a run: a scripted or replayed model's answers are not cached
    result.cached = cache is not None
    asked: list[tuple[Slot, list[dict[str, str]], int, str]] = []
    for n, slot in enumerate(slots):
        messages = slot_messages(slot, by_name)
        messages[-1]["content"] += f"\n(Variant {n}: pick a situation unlike the usual one.)"
        asked.append((slot, messages, seed + n, _key(spec, messages, seed + n, slot.id)))
    texts: dict[str, str | Exception] = {}
    todo = []
    version: str | None = None
    now_text = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    when: dict[str, str] = {}
    for slot, messages, s, key in asked:
        hit = _cached(cache, key)
        if hit is not None:
            texts[slot.id], version = hit[0], hit[1] or version
            when[slot.id] = hit[2] or now_text
            result.cache_hits += 1
        else:
            todo.append((slot, messages, s))
    if todo:
        answered, version = asyncio.run(_ask(spec, todo, note))
        result.model_calls = len(todo)
        keys = {slot.id: key for slot, _, _, key in asked}
        for slot_id, text in answered.items():
            texts[slot_id] = text
            if isinstance(text, str):
                _store(cache, keys[slot_id], text, version, now_text)
    suite = Suite(name="generated", tools=tools, cases=[])
    index = ToolIndex(tools)
    made: list[dict[str, Any]] = []
    for slot, *_ in asked:
        text = texts.get(slot.id, "")
        try:
            if isinstance(text, Exception):
                raise _Skip(f"the model call failed: {text}", "model_error")
            answer = extract_json(text)
            if answer is None:
                raise _Skip("the answer is not JSON (prose?)", "not_json")
            stamp = {"by": spec, "at": when.get(slot.id, now_text), "status": "needs-review"}
            case = case_from_answer(slot, answer, by_name, stamp)
            _check_case(case, suite, index)
        except _Skip as skip:
            result.counts[skip.count] += 1
            result.skipped.append((slot.id, skip.reason))
            continue
        made.append(case)
    result.cases, result.counts["duplicate"] = dedupe(made)
    result.counts["kept"] = len(result.cases)
    result.counts["asked"] = len(slots)
    result.meta = {
        "model": spec,
        "model_version": version,
        "seed": seed,
        "mix": mix,
        "prompts": {slot.id: messages for slot, messages, _, _ in asked},
    }
    return result


async def _answers(
    spec: str, suite: Suite, cache: Path | None, counts: Counter[str]
) -> dict[str, Any]:
    """One answer of the model ``spec`` per case (a ProviderError where the call failed).

    ``cache``: the response cache ``toolproof run`` uses (the same fingerprints), so a
    rerun asks the model only for what it has not answered yet; ``counts["cached"]``
    counts the answers taken from it. Providers that answer without a model (scripted,
    replay) are not cached, as in a run.
    """
    from toolproof.providers import ModelSettings, ProviderRequest, create_provider
    from toolproof.providers._base import with_defaults
    from toolproof.providers._http import HttpTransport
    from toolproof.providers._registry import split_spec
    from toolproof.run._cache import Fingerprinter, ResponseCache

    transport = HttpTransport()
    provider = create_provider(spec, ModelSettings(), transport)
    settings = with_defaults(ModelSettings(), provider.default_settings)
    store = ResponseCache(cache) if cache is not None and provider.cacheable else None
    key_of = Fingerprinter(spec, settings)
    out: dict[str, Any] = {}
    prepared = False  # only when a case needs the model: a rerun from the cache does not
    try:
        for case in suite.cases:
            request = ProviderRequest(
                model=split_spec(spec)[1],
                messages=case.conversation(suite.system),
                tools=suite.tools_for(case),
                settings=settings,
                case_id=case.id,
            )
            key = key_of(request) if store is not None else ""
            hit = store.get(key, 0) if store is not None else None
            if hit is not None:
                out[case.id] = hit.response
                counts["cached"] += 1
                continue
            if not prepared:
                await provider.prepare(lambda _: None)
                prepared = True
            try:
                exchange = await provider.generate(request)
            except ProviderError as exc:
                out[case.id] = exc
                continue
            out[case.id] = exchange.response
            if store is not None:
                store.put(key, 0, exchange)
    finally:
        await provider.aclose()
        await transport.aclose()
    return out


def verify_with(
    result: GenerateResult, tools: list[SuiteTool], spec: str, cache: Path | None = None
) -> Counter[str]:
    """Run each kept case against a second model; mark in ``generated`` whether its answer
    passed. A case it fails is flagged, not dropped: the model or the case may be wrong.
    Returns the counts of passed, failed and errors, and of answers taken from
    ``cache`` (the run's response cache: see :func:`_answers`)."""
    from toolproof.grade import Scorer

    spec = local_spec(spec)
    suite = Suite(
        name="generated", tools=tools, cases=[Case.model_validate(c) for c in result.cases]
    )
    counts: Counter[str] = Counter()
    answers = asyncio.run(_answers(spec, suite, cache, counts))
    scorer = Scorer(suite)
    for case in result.cases:
        answer = answers.get(case["id"])
        case["generated"]["verified_by"] = spec
        if answer is None or isinstance(answer, Exception):
            counts["errors"] += 1
            continue
        passed = scorer.grade_response(case["id"], answer).passed
        case["generated"]["verify_passed"] = passed
        counts["passed" if passed else "failed"] += 1
    return counts

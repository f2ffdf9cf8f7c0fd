from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import islice
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any, TextIO

import orjson
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from toolproof._shared.json_text import _escape_surrogates, finite, has_surrogates, indented_pieces
from toolproof._version import __version__
from toolproof.stats import FailureItem, Summary

if TYPE_CHECKING:
    from toolproof.gate import Comparison, GateResult

REPORT_FORMAT = "toolproof.report/2"
GATE_FORMAT = "toolproof.gate/1"
COMPARE_FORMAT = "toolproof.compare/1"


def summary_json(summaries: dict[str, Summary]) -> dict[str, Any]:
    """The report as JSON-ready data, versioned."""
    return {
        "format": REPORT_FORMAT,
        "toolproof": __version__,
        "targets": {t: s.model_dump(mode="json") for t, s in summaries.items()},
    }


def write_summary_json(out: TextIO, summaries: dict[str, Summary]) -> None:
    """Write ``dumps(summary_json(summaries), indent=2)`` and a newline, the same text,
    a piece at a time: neither the text nor the failure lists are ever whole in memory,
    and each case's stability is made JSON-ready only when it is written."""
    token = secrets.token_hex(8)
    markers: dict[str, Callable[[int], Iterator[str]]] = {}
    targets: dict[str, Any] = {}
    for i, (target, s) in enumerate(summaries.items()):
        data = s.model_dump(mode="json", exclude={"failures": True, "stability": {"per_case"}})
        marker = f"toolproof-failures-{token}-{i}"
        markers[f'"{marker}"'] = partial(_failure_list, s.failures)
        targets[target] = {f: marker if f == "failures" else data[f] for f in Summary.model_fields}
        stability = s.stability
        if stability is not None:
            cases = f"toolproof-cases-{token}-{i}"
            markers[f'"{cases}"'] = partial(_model_list, stability.per_case)
            dumped = data["stability"]
            targets[target]["stability"] = {
                f: cases if f == "per_case" else dumped[f] for f in type(stability).model_fields
            }
    report = {"format": REPORT_FORMAT, "toolproof": __version__, "targets": targets}
    pieces = indented_pieces(report)
    if pieces is None:  # (not plain data: the standard library's encoder, a chunk at a time)
        pieces = list(_ENCODER.iterencode(finite(report)))
    run: list[str] = []  # the text since the last list written
    for piece in pieces:
        write_list = markers.get(piece)
        if write_list is None:
            run.append(piece)
            continue
        # a string value is a piece of its own; its list is laid out at its key's indentation
        text = "".join(run)
        run.clear()
        line = text[text.rfind("\n") + 1 :]
        out.write(_escape_surrogates(text) if has_surrogates(text) else text)
        for part in write_list(len(line) - len(line.lstrip(" "))):
            out.write(part)
    text = "".join(run)
    out.write(_escape_surrogates(text) if has_surrogates(text) else text)
    out.write("\n")


#: What ``dumps(..., indent=2)`` uses.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, indent=2, default=to_jsonable_python
)


def _model_list(items: Sequence[BaseModel], indent: int) -> Iterator[str]:
    """A list of models as ``dumps(..., indent=2)`` writes it at this indentation, one at a time."""
    newline = "\n" + " " * (indent + 2)
    first = True
    for item in items:
        data = item.model_dump(mode="json")
        pieces = indented_pieces(data)
        text = _ENCODER.encode(finite(data)) if pieces is None else "".join(pieces)
        # JSON text holds a newline only where the layout puts one: none inside a string
        text = ("[" if first else ",") + newline + text.replace("\n", newline)
        first = False
        yield _escape_surrogates(text) if has_surrogates(text) else text
    yield "[]" if first else "\n" + " " * indent + "]"


def _rows(items: Iterable[FailureItem]) -> Iterator[tuple[str, int, str, str, list[str], str]]:
    """Each failure's fields, JSON-ready; straight from a failure log when it keeps them so."""
    rows = getattr(items, "rows", None)
    if callable(rows):
        yield from rows()
        return
    for item in items:
        yield (
            item.case_id,
            item.attempt,
            item.risk.value,
            item.failure.value,
            item.reasons,
            item.diff,
        )


#: Failures encoded together: orjson writes a batch at a time, in the layout of ``indent=2``.
_BATCH = 512
_KEYS = ("case_id", "attempt", "risk", "failure", "reasons", "diff")


def _failure_list(items: Iterable[FailureItem], indent: int) -> Iterator[str]:
    """A failure list as ``dumps(..., indent=2)`` writes it at this indentation.

    orjson writes strings as ``json.dumps(..., ensure_ascii=False)`` does and lays
    an indented list out the same way; a batch it refuses (a lone surrogate)
    is written by :func:`_failure_texts`, as the standard library would.
    """
    indented = getattr(items, "indented", None)
    if callable(indented):  # a failure log: its failures are laid out already
        yield from indented(indent)
        return
    newline = "\n" + " " * indent
    first = True
    batch: list[tuple[str, int, str, str, list[str], str]] = []
    rows = _rows(items)
    while True:
        batch.extend(islice(rows, _BATCH))
        if not batch:
            break
        try:
            text = orjson.dumps(
                [dict(zip(_KEYS, row, strict=True)) for row in batch], option=orjson.OPT_INDENT_2
            ).decode("utf-8")
        except TypeError:  # a lone surrogate: orjson refuses it
            text = "".join(_failure_texts(batch, indent, first))
        else:
            # "[\n  {...},\n  {...}\n]": the items, at this indentation, without the brackets
            text = ("[" if first else ",") + text[1:-2].replace("\n", newline)
        first = False
        batch.clear()
        yield text
    yield "[]" if first else newline + "]"


def _failure_texts(
    rows: Iterable[tuple[str, int, str, str, list[str], str]], indent: int, first: bool
) -> Iterator[str]:
    """Failures as ``dumps(..., indent=2)`` writes them, one at a time, surrogates escaped."""
    pad = " " * (indent + 2)
    inner = pad + "  "
    for case_id, attempt, risk, failure, reasons, diff in rows:
        listed = (
            "[\n" + ",\n".join(f"{inner}  {encode_basestring(r)}" for r in reasons)
            + f"\n{inner}]"
            if reasons
            else "[]"
        )
        text = (
            f"{',' if not first else '['}\n{pad}{{\n"
            f'{inner}"case_id": {encode_basestring(case_id)},\n'
            f'{inner}"attempt": {int(attempt)!r},\n'
            f'{inner}"risk": {encode_basestring(risk)},\n'
            f'{inner}"failure": {encode_basestring(failure)},\n'
            f'{inner}"reasons": {listed},\n'
            f'{inner}"diff": {encode_basestring(diff)}\n'
            f"{pad}}}"
        )
        first = False
        yield _escape_surrogates(text) if has_surrogates(text) else text


def gate_json(result: GateResult) -> dict[str, Any]:
    """The gate decision, every check, comparison and metric, as JSON-ready data."""
    return {"format": GATE_FORMAT, "toolproof": __version__, **result.model_dump(mode="json")}


def compare_json(comparisons: list[Comparison], warnings: list[str]) -> dict[str, Any]:
    return {
        "format": COMPARE_FORMAT,
        "toolproof": __version__,
        "warnings": warnings,
        "comparisons": [c.model_dump(mode="json") for c in comparisons],
    }

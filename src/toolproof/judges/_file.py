"""Judgements on disk: a JSONL file beside the records, never mixed into them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from toolproof._shared.loaded_keys import redactor
from toolproof._shared.safe_io import UnsafePath, open_write, read_inside, refused
from toolproof.errors import SuiteError
from toolproof.judges._judge import Judgement
from toolproof.trust import TooDeep, loads_json

JUDGEMENTS_FILE = "judgements.jsonl"
#: Far above the judgements of any real run; a bigger file is not one toolproof wrote.
MAX_JUDGEMENTS_BYTES = 1024 * 1024 * 1024

Key = tuple[str, str | None, int, str, str | None, str, int]


def key_of(j: Judgement) -> Key:
    return (j.case_id, j.target, j.attempt, j.rubric, j.subject, j.fingerprint, j.repeat)


def read_judgements(path: Path) -> list[Judgement]:
    """Every judgement in a file; a bad line is an error naming the file, line and field."""
    out: list[Judgement] = []
    try:
        text = read_inside(path.parent, path, MAX_JUDGEMENTS_BYTES).decode("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, UnsafePath) as exc:
        raise SuiteError(str(path), f"cannot read: {exc}") from None
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = loads_json(line, unique_keys=True)  # a key given twice: which verdict?
        except TooDeep as exc:
            raise SuiteError(str(path), str(exc), line=number) from None
        except json.JSONDecodeError as exc:
            torn = number == len(lines) and not text.endswith("\n")
            if torn and not exc.msg.startswith("duplicate key"):
                continue  # a torn last line: a writer was stopped mid-line
            raise SuiteError(
                str(path), f"not valid JSON: {exc.msg}", line=number, column=exc.colno
            ) from None
        try:
            out.append(Judgement.model_validate(data))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise SuiteError(str(path), err["msg"], line=number, path=tuple(err["loc"])) from None
    return out


def latest_judgements(items: Iterable[Judgement]) -> list[Judgement]:
    """The last judgement per (record, rubric, argument, judge fingerprint, repeat)."""
    latest: dict[Key, Judgement] = {}
    for j in items:
        latest[key_of(j)] = j
    return list(latest.values())


def append_judgements(path: Path, items: Iterable[Judgement]) -> None:
    secrets = redactor()  # a judge's reply can echo a key, like a model's
    data = "".join(
        secrets.model(j).model_dump_json(exclude_none=True) + "\n" for j in items
    ).encode("utf-8")
    try:  # never through a link
        with open_write(path, append=True) as fh:
            fh.write(data)
    except UnsafePath as exc:
        raise refused(path, exc) from None

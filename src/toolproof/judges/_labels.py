"""Human labels: a JSONL file whose first line says what was labelled, then one item a line.

::

    {"format": "toolproof.labels/1", "rubric": "selection", "suite": "suite.yaml",
     "records": ["records.jsonl"], "note": "labelled by reading each transcript"}
    {"case_id": "lookup-exact-id", "target": "records", "attempt": 0, "record": "9f2c...",
     "fields": {"appropriate": true, "issue": "none"}, "labeller": "jan", "labelled_at": "..."}

For rubric ``argument_meaning`` an item is one judge-decided argument, and
it carries what the judge is shown, so the file alone is enough to calibrate::

    {"format": "toolproof.labels/1", "rubric": "argument_meaning"}
    {"argument": {"tool": "cancel_order", "tool_description": "Cancel an order.",
                  "parameter": "note", "parameter_description": "Note for the history.",
                  "expected_text": "customer ordered twice", "value": "duplicate order"},
     "fields": {"same_meaning": true}, "labeller": "jan"}

(``case_id``, ``target``, ``attempt`` and ``record`` say where the argument
came from, when it came from a run.) Paths in the header are relative to the
labels file and may not leave its folder (a labels file is untrusted input: it
must not make toolproof send other files to a judge). Every field value is
checked against the rubric.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolproof._shared.safe_io import UnsafePath, open_write, read_inside, refused, write_bytes
from toolproof.errors import SuiteError
from toolproof.judges._parse import FieldValue, JudgeReplyError, check_value
from toolproof.judges._prompt import ArgumentItem
from toolproof.trust import TooDeep, loads_json
from toolproof.types import ARGUMENT_RUBRIC, Rubric

LABELS_FORMAT = "toolproof.labels/1"
#: Far above any labelling session; a bigger file is not a labels file.
MAX_LABELS_BYTES = 256 * 1024 * 1024


class LabelsHeader(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["toolproof.labels/1"]
    rubric: str
    suite: str | None = None
    records: list[str] = Field(default_factory=list)
    note: str | None = None


class Label(BaseModel):
    """One labelled record (or, for ``argument_meaning``, one labelled argument): the
    rubric's fields as a person decided them."""

    model_config = ConfigDict(extra="forbid")

    case_id: str | None = Field(default=None, min_length=1)
    target: str | None = None
    attempt: int = Field(default=0, ge=0)
    record: str | None = Field(default=None, description="Digest of the labelled record.")
    argument: ArgumentItem | None = Field(
        default=None, description="argument_meaning: the argument labelled, whole."
    )
    fields: dict[str, FieldValue]
    labeller: str | None = None
    labelled_at: datetime | None = None
    note: str | None = None

    @property
    def key(self) -> LabelKey:
        """What a label is of: the record, and for an argument the question's digest."""
        subject = self.argument.question().subject if self.argument is not None else None
        return (self.case_id, self.target, self.attempt, subject)


#: (case, target, attempt, argument digest or None)
LabelKey = tuple[str | None, str | None, int, str | None]


class LabelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    header: LabelsHeader
    labels: list[Label]

    def resolve(self, name: str, where: str) -> Path:
        """A header path, relative to the labels file, that stays inside its folder."""
        pure = PurePosixPath(name)
        if pure.is_absolute() or ".." in pure.parts or "\\" in name:
            raise SuiteError(
                self.path,
                f"{name!r} must be a path inside the labels file's folder",
                line=1,
                path=(where,),
            )
        return Path(self.path).parent / name


def read_labels(path: Path, rubric: Rubric | None = None) -> LabelsFile:
    """Read and check a labels file; errors name the file, line and field."""
    try:
        text = read_inside(path.parent, path, MAX_LABELS_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise SuiteError(str(path), "file not found") from None
    except (OSError, UnicodeDecodeError, UnsafePath) as exc:
        raise SuiteError(str(path), f"cannot read: {exc}") from None
    rows = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not rows:
        raise SuiteError(str(path), "empty labels file (the first line is the header)")
    header = LabelsHeader.model_validate(_check(path, rows[0], LabelsHeader))
    labels: list[Label] = []
    seen: dict[LabelKey, int] = {}
    per_argument = header.rubric == ARGUMENT_RUBRIC
    for number, line in rows[1:]:
        label = Label.model_validate(_check(path, (number, line), Label))
        if per_argument and label.argument is None:
            raise SuiteError(
                str(path),
                f"required for rubric '{ARGUMENT_RUBRIC}': the argument labelled "
                "(tool, parameter, expected_text, value)",
                line=number,
                path=("argument",),
            )
        if not per_argument and label.argument is not None:
            raise SuiteError(
                str(path),
                f"only labels of rubric '{ARGUMENT_RUBRIC}' label an argument",
                line=number,
                path=("argument",),
            )
        if not per_argument and label.case_id is None:
            raise SuiteError(
                str(path), "required: the labelled record's case", line=number, path=("case_id",)
            )
        key = label.key
        if key in seen:
            labels[seen[key]] = label  # a later label of the same item wins (relabelling)
        else:
            seen[key] = len(labels)
            labels.append(label)
        if rubric is not None:
            _check_fields(path, number, label.fields, rubric)
    return LabelsFile(path=str(path), header=header, labels=labels)


def _check(path: Path, row: tuple[int, str], model: type[BaseModel]) -> Any:
    number, line = row
    try:
        data = loads_json(line, unique_keys=True)  # a label given twice: which one counts?
    except json.JSONDecodeError as exc:
        raise SuiteError(
            str(path), f"not valid JSON: {exc.msg}", line=number, column=exc.colno
        ) from None
    except TooDeep as exc:
        raise SuiteError(str(path), str(exc), line=number) from None
    try:
        model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SuiteError(str(path), err["msg"], line=number, path=tuple(err["loc"])) from None
    return data


def _check_fields(path: Path, number: int, fields: dict[str, FieldValue], rubric: Rubric) -> None:
    missing = sorted(set(rubric.fields) - set(fields))
    if missing:
        raise SuiteError(str(path), f"missing {', '.join(missing)}", line=number, path=("fields",))
    for name, value in fields.items():
        spec = rubric.fields.get(name)
        if spec is None:
            raise SuiteError(
                str(path), "not a field of the rubric", line=number, path=("fields", name)
            )
        try:
            check_value(name, spec.type, spec.min, spec.max, spec.values, value)
        except JudgeReplyError as exc:
            raise SuiteError(str(path), str(exc), line=number, path=("fields", name)) from None


def write_header(path: Path, header: LabelsHeader) -> None:
    try:  # never through a link
        write_bytes(path, (header.model_dump_json(exclude_none=True) + "\n").encode("utf-8"))
    except UnsafePath as exc:
        raise refused(path, exc) from None


def append_label(path: Path, label: Label) -> None:
    """Append one label and flush it, so a stopped session loses nothing."""
    try:  # never through a link
        with open_write(path, append=True) as fh:
            fh.write((label.model_dump_json(exclude_none=True) + "\n").encode("utf-8"))
            os.fsync(fh.fileno())
    except UnsafePath as exc:
        raise refused(path, exc) from None

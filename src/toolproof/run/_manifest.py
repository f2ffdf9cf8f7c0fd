"""The run manifest: what a run ran against, written atomically.

``manifest.json`` sits beside ``records.jsonl`` in a run folder. It holds
the fingerprints of the suite, its tool schemas and its system prompt, the
targets with their settings (never credentials) and the model versions they
reported, the toolproof version, times, repeats and status. It is rewritten
(temporary file + rename) at the start, at the end, and when a run stops.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolproof._shared.json_text import dump_model
from toolproof._shared.loaded_keys import redactor
from toolproof._shared.safe_io import UnsafePath, read_inside, refused, replace_bytes, save
from toolproof.errors import SuiteError
from toolproof.providers import ModelSettings
from toolproof.trust import Trust
from toolproof.types import Suite

__all__ = [
    "MANIFEST_FORMAT",
    "TOOLS_FILE",
    "Manifest",
    "Schedule",
    "ScheduledTarget",
    "TargetEntry",
    "ThresholdLook",
    "read_manifest",
    "system_fingerprint",
    "tools_fingerprint",
    "with_run_tools",
    "write_manifest",
    "write_run_tools",
]

MANIFEST_FORMAT: Literal["toolproof.manifest/1"] = "toolproof.manifest/1"
#: The tools a run sent when they replaced the suite's (``run --tools FILE``).
TOOLS_FILE = "tools.json"
#: A manifest is a few kilobytes; a bigger file is not one toolproof wrote.
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
Status = Literal["running", "complete", "interrupted", "failed"]


class TargetEntry(BaseModel):
    """One model or agent the run asked."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    kind: Literal["model", "target"] = "model"
    settings: ModelSettings = Field(default_factory=ModelSettings)
    model_versions: list[str] = Field(default_factory=list)


class ThresholdLook(BaseModel):
    """A gate threshold as ``--until-decided`` last checked it (mixture SPRT)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="SCOPE: METRIC, as the gate names it.")
    required: float
    successes: int
    n: int
    p_value: float = Field(description="Anytime-valid p-value of the side the rate is on.")
    level: float = Field(description="The confidence a decision is held to.")
    decided: Literal["pass", "fail"] | None = None


class ScheduledTarget(BaseModel):
    """How an adaptive schedule went for one target."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    planned: int = Field(description="Attempts of the fixed plan: cases × max repeats.")
    attempts: int = Field(description="Attempts the schedule ran (each has a record).")
    full_rounds: int = Field(
        description="Rounds every case ran: the gate reads its rates over these attempt "
        "numbers; what it says of cases and its counts read every attempt."
    )
    stopped: dict[str, int] = Field(
        default_factory=dict,
        description="Cases stopped before max repeats, by why: mixed (passed and failed), "
        "repeats (temperature 0, a seed, the same answer each time), decided "
        "(--until-decided: every threshold decided).",
    )
    repeating: list[str] = Field(
        default_factory=list, description="Cases stopped because their target repeats itself."
    )
    ended: str | None = Field(
        default=None, description="planned, decided or settled (no case open); None: running."
    )
    looks: list[ThresholdLook] = Field(default_factory=list)

    @property
    def saved(self) -> int:
        return self.planned - self.attempts

    @property
    def stopped_early(self) -> int:
        return sum(self.stopped.values())


class Schedule(BaseModel):
    """``--repeats auto``: repeats scheduled case by case (see docs/adaptive-repeats.md)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["auto"] = "auto"
    max_repeats: int = Field(ge=1)
    min_repeats: int = Field(ge=1)
    until_decided: bool = False
    confidence: float = 0.95
    targets: list[ScheduledTarget] = Field(default_factory=list)

    def target(self, spec: str) -> ScheduledTarget | None:
        return next((t for t in self.targets if t.spec == spec), None)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["toolproof.manifest/1"] = MANIFEST_FORMAT
    run_id: str
    toolproof_version: str
    suite_name: str
    suite_version: str | None = None
    suite_source: str | None = None
    suite_fingerprint: str
    tools_fingerprint: str
    system_fingerprint: str | None = None
    tools_source: str | None = Field(
        default=None,
        description="The tools file given with --tools: its tools replaced the suite's. "
        f"The tools sent are kept in {TOOLS_FILE} in the run folder, and scoring uses them.",
    )
    targets: list[TargetEntry]
    repeats: int = Field(ge=1)
    tags: list[str] = Field(
        default_factory=list, description="Only cases with one of these tags were run."
    )
    cache: bool = True
    pricing_file: str | None = None
    config_file: str | None = None
    started_at: datetime
    ended_at: datetime | None = None
    status: Status = "running"
    resumed: int = Field(default=0, description="How many times the run was resumed.")
    counts: dict[str, int] = Field(default_factory=dict)
    error: str | None = Field(
        default=None, description="Why the run stopped, when it failed or was stopped."
    )
    changes: list[str] = Field(
        default_factory=list,
        description="Settings changed when the run was resumed, one line each, in order.",
    )
    extra: dict[str, Any] = Field(default_factory=dict)
    git_commit: str | None = Field(default=None, description="The commit checked out, if any.")
    shard: str | None = Field(
        default=None, description="INDEX/COUNT: this run holds one shard of the cases."
    )
    schedule: Schedule | None = Field(
        default=None,
        description="--repeats auto: the adaptive schedule (repeats is then the most any "
        "case may run).",
    )
    user_model: TargetEntry | None = Field(
        default=None,
        description="The model that plays the simulated user of the conversation cases "
        "with an LLM user (--user-model), with its settings.",
    )
    user_fingerprint: str | None = Field(
        default=None,
        description="A hash of the simulated user's guidelines, model and settings: "
        "conversations are comparable across runs only when it is the same.",
    )


def _sha(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def user_fingerprint(spec: str, settings: ModelSettings, guidelines: str) -> str:
    """A hash of what the simulated user is: its guidelines, model and generation settings."""
    from toolproof.providers._base import GENERATION_FIELDS

    generation = settings.model_dump(mode="json", include=set(GENERATION_FIELDS))
    return _sha([guidelines, spec, generation])


def tools_fingerprint(suite: Suite) -> str:
    """A hash of the tool schemas exactly as offered to models.

    The suite's tools, and the cases' own definitions when any case has them
    (a suite without them keeps the hash it always had).
    """
    data: list[Any] = [t.canonical().model_dump(mode="json") for t in suite.tools]
    own = [
        {"case": c.id, "tools": [t.canonical().model_dump(mode="json") for t in c.definitions]}
        for c in suite.cases
        if c.definitions
    ]
    return _sha([data, own] if own else data)


def write_run_tools(run_dir: Path, suite: Suite) -> None:
    """Keep the tools of a run whose tools replaced the suite's, beside its records."""
    data = [t.model_dump(mode="json", exclude_defaults=True) for t in suite.tools]
    text = json.dumps({"tools": data}, ensure_ascii=False, indent=2) + "\n"
    save(run_dir / TOOLS_FILE, text, atomic=True)


def with_run_tools(suite: Suite, run_dir: Path, manifest: Manifest, trust: Trust) -> Suite:
    """The suite with the tools the run sent, when they replaced the suite's (``--tools``).

    The tools are read from the run folder, never from the file named on the
    command line then: the records were made with what was sent. They must
    give the tools fingerprint the manifest recorded.
    """
    if manifest.tools_source is None:
        return suite
    from toolproof.suite import load_tools_file

    path = run_dir / TOOLS_FILE
    if not path.is_file():
        raise SuiteError(
            str(path),
            f"missing: the run's tools replaced the suite's (--tools {manifest.tools_source}), "
            "and scoring needs the tools that were sent",
        )
    replaced = suite.with_tools(load_tools_file(path, trust), manifest.tools_source)
    found = tools_fingerprint(replaced)
    if found != manifest.tools_fingerprint:
        raise SuiteError(
            str(path),
            f"with the suite's cases these tools have fingerprint {found}, but the run sent "
            f"{manifest.tools_fingerprint}: the file or the cases' own tool definitions "
            "changed since the run",
        )
    return replaced


def system_fingerprint(suite: Suite) -> str | None:
    """A hash of the system prompts (the suite's and any case overrides)."""
    prompts = [suite.system] + [c.system for c in suite.cases if c.system is not None]
    if not any(prompts):
        return None
    return _sha(prompts)


def git_commit(where: str | Path | None = None) -> str | None:
    """The commit checked out in the working folder (or CI's variable), if any."""
    for name in ("GITHUB_SHA", "CI_COMMIT_SHA"):
        if os.environ.get(name):
            return os.environ[name]
    import subprocess

    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and len(out) == 40 else None


def now_utc() -> datetime:
    return datetime.now(UTC)


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Replace ``manifest.json`` atomically."""
    manifest = redactor().model(manifest)  # never a loaded API key on disk
    data = dump_model(manifest, indent=2, exclude_none=True).encode() + b"\n"
    try:  # never into a folder or file that is a link
        replace_bytes(run_dir / "manifest.json", data, sync=True)
    except UnsafePath as exc:
        raise refused(run_dir / "manifest.json", exc) from None


def read_manifest(run_dir: str | Path) -> Manifest:
    path = Path(run_dir) / "manifest.json"
    try:
        text = read_inside(run_dir, path, MAX_MANIFEST_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise SuiteError(str(path), "not a run folder: manifest.json is missing") from None
    except (UnsafePath, UnicodeDecodeError) as exc:
        raise SuiteError(str(path), str(exc)) from None
    try:
        return Manifest.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SuiteError(str(path), err["msg"], path=[str(p) for p in err["loc"]]) from None

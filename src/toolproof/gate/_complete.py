"""Is a run complete? Its manifest says it finished, and its records cover every attempt.

A run is complete when its manifest's status is ``complete`` and its records
hold an attempt (answered or not) for every selected case × target × repeat:
the cases the run's ``--tags`` selected (all cases when it selected none), the
targets and the repeats the manifest names (for an adaptive schedule, the
full rounds it ran, at least its min repeats). A shard's run (``--shard I/N``,
named in its manifest) is meant to hold its own share of the cases only, and
is complete when it holds those. A run without a manifest cannot show either,
so it is never complete. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from toolproof.types import Record, Suite

if TYPE_CHECKING:
    from toolproof.run import Manifest

__all__ = ["Coverage", "check_coverage"]

#: How many missing attempts a message names.
_EXAMPLES = 5


class Coverage(BaseModel):
    """What a run was meant to hold against what it holds."""

    model_config = ConfigDict(extra="forbid")

    status: str | None = Field(description="The manifest's status; None without a manifest.")
    expected: int = Field(description="Selected cases × targets × repeats.")
    present: int = Field(description="Of those, the attempts with a record.")
    missing: int
    shard: str | None = Field(
        default=None, description="INDEX/COUNT when the run holds one shard of the cases."
    )
    examples: list[str] = Field(
        default_factory=list, description="The first missing attempts, as CASE #ATTEMPT · TARGET."
    )
    foreign: int = Field(
        default=0,
        description="Records that are not of the run the manifest describes: another run's "
        "ID, or a target it does not name.",
    )
    foreign_examples: list[str] = Field(
        default_factory=list, description="The first such records, each with why."
    )

    @property
    def complete(self) -> bool:
        return self.status == "complete" and self.missing == 0 and self.foreign == 0

    def message(self) -> str:
        """Why the run is not complete (empty when it is)."""
        if self.complete:
            return ""
        if self.status is None:
            return (
                "the run has no manifest, so toolproof cannot tell whether every case was run; "
                "gate a run folder written by `toolproof run`"
            )
        parts = []
        if self.status != "complete":
            parts.append(f"the manifest says the run is '{self.status}', not 'complete'")
        if self.missing:
            parts.append(
                f"{self.missing} of {self.expected} attempts (case × target × repeat) "
                f"have no record ({_listed(self.examples, self.missing, ', ')})"
            )
        if self.foreign:
            parts.append(
                f"{self.foreign} record(s) are not of the run its manifest describes "
                f"({_listed(self.foreign_examples, self.foreign, '; ')}): they were not "
                "written by this run"
            )
        return "; ".join(parts)


def _listed(examples: Sequence[str], total: int, sep: str) -> str:
    """The examples shown, and "…" when there are more of them (``total``)."""
    return sep.join(examples) + (f"{sep}…" if total > len(examples) else "")


def _rounds(manifest: Manifest, target: str) -> int:
    """The attempts every case must have: the repeats, or an adaptive schedule's full
    rounds (at least its min repeats; the attempts beyond are the schedule's to skip)."""
    schedule = manifest.schedule
    if schedule is None:
        return manifest.repeats
    entry = schedule.target(target)
    full = entry.full_rounds if entry is not None else 0
    return max(full, schedule.min_repeats)


def check_coverage(manifest: Manifest | None, suite: Suite, records: Iterable[Record]) -> Coverage:
    """Compare the attempts a run's manifest selected with the records it holds."""
    if manifest is None:
        return Coverage(status=None, expected=0, present=0, missing=0)
    from toolproof.run._shard import in_shard, parse_shard

    wanted = set(manifest.tags)
    cases = [c.id for c in suite.cases if not wanted or wanted.intersection(c.tags)]
    if manifest.shard is not None:
        index, count = parse_shard(manifest.shard)
        cases = [c for c in cases if in_shard(c, index, count)]
    targets = [t.spec for t in manifest.targets]
    records = list(records)
    foreign, foreign_examples = _foreign(manifest, set(targets), records)
    have = {(r.case_id, r.target, r.attempt) for r in records}
    missing: list[str] = []
    count = 0
    expected = 0
    for target in targets:
        rounds = _rounds(manifest, target)
        expected += len(cases) * rounds
        for attempt in range(rounds):
            for case in cases:
                if (case, target, attempt) in have:
                    continue
                count += 1
                if len(missing) < _EXAMPLES:
                    missing.append(f"{case} #{attempt} · {target}")
    return Coverage(
        status=manifest.status,
        expected=expected,
        present=expected - count,
        missing=count,
        shard=manifest.shard,
        examples=missing,
        foreign=foreign,
        foreign_examples=foreign_examples,
    )


def _run_ids(manifest: Manifest) -> set[str]:
    """The run IDs this run's records may carry: its own, and a merged run's shards'."""
    ids = {manifest.run_id}
    merged = manifest.extra.get("merged_from")
    if isinstance(merged, list):
        ids.update(str(m).rsplit(" (", 1)[0] for m in merged)
    return ids


def _foreign(manifest: Manifest, targets: set[str], records: list[Record]) -> tuple[int, list[str]]:
    """How many records the run its manifest describes cannot have written (as ``run
    --resume`` refuses them), and the first few, each with why. A record that names no
    run (an imported one) is not checked for its run ID."""
    run_ids = _run_ids(manifest)
    count = 0
    shown: list[str] = []
    for r in records:
        if r.run_id is not None and r.run_id not in run_ids:
            why = f"run_id {r.run_id!r} is not this run's ({manifest.run_id!r})"
        elif r.target not in targets:
            why = f"target {r.target!r} is not one of the manifest's targets"
        else:
            continue
        count += 1
        if len(shown) < _EXAMPLES:  # (a million foreign records: counted, not all held)
            shown.append(f"{r.case_id} #{r.attempt} · {r.target}: {why}")
    return count, shown

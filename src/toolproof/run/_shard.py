"""Sharded runs: one deterministic share of the cases per CI job, merged afterwards.

``--shard 2/8`` runs the cases whose stable hash (SHA-256 of the case ID)
falls in the second of eight buckets. The same case always lands in the same
shard, whatever the order of the suite or the machine. ``merge_runs`` joins
the shards' run folders into one, after checking that they ran the same
suite, tools, system prompt, targets, settings and repeats.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from toolproof._shared.safe_io import (
    MAX_RUN_FILE_BYTES,
    UnsafePath,
    open_write,
    read_inside,
    refused,
    replace_bytes,
)
from toolproof.errors import UserError
from toolproof.run._manifest import (
    TOOLS_FILE,
    Manifest,
    Schedule,
    ScheduledTarget,
    read_manifest,
    write_manifest,
)

__all__ = ["in_shard", "merge_runs", "parse_shard"]

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
RECORDS_FILE = "records.jsonl"


def parse_shard(text: str) -> tuple[int, int]:
    """``2/8`` → (2, 8): (index from 1, count)."""
    m = _SPEC.match(text)
    if m is None:
        raise UserError(f"--shard {text!r}: give INDEX/COUNT, e.g. 2/8")
    index, count = int(m[1]), int(m[2])
    if count < 1 or not 1 <= index <= count:
        raise UserError(f"--shard {text!r}: INDEX must be between 1 and COUNT")
    return index, count


def in_shard(case_id: str, index: int, count: int) -> bool:
    """Whether a case belongs to shard ``index`` of ``count`` (stable across machines)."""
    digest = hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def _same(manifests: Sequence[tuple[Path, Manifest]]) -> None:
    first_path, first = manifests[0]

    def identity(m: Manifest) -> dict[str, object]:
        return {
            "suite fingerprint": m.suite_fingerprint,
            "tool schemas": m.tools_fingerprint,
            "tools file": m.tools_source,
            "system prompt": m.system_fingerprint,
            "repeats": m.repeats,
            "adaptive schedule": m.schedule.model_dump(exclude={"targets"})
            if m.schedule is not None
            else None,
            "tags": sorted(m.tags),
            "targets": [(t.spec, t.kind, t.settings.model_dump(mode="json")) for t in m.targets],
        }

    want = identity(first)
    for path, m in manifests[1:]:
        got = identity(m)
        for name, value in want.items():
            if got[name] != value:
                raise UserError(
                    f"{path}: its {name} differs from {first_path}'s; only shards of one run "
                    "can be merged"
                )


def merge_runs(runs: Sequence[str | Path], out: str | Path, *, partial: bool = False) -> Manifest:
    """Merge the run folders of a sharded run into ``out``; returns the merged manifest.

    Every shard of one count must be there once (``partial`` allows gaps). The
    records are copied byte for byte, shard by shard.
    """
    if not runs:
        raise UserError("give the run folders to merge")
    dest = Path(out)
    if dest.exists() and any(dest.iterdir()):
        raise UserError(f"{dest} already exists and is not empty")
    manifests = [(Path(r), read_manifest(r)) for r in runs]
    for path, m in manifests:
        if m.shard is None:
            raise UserError(f"{path}: not a shard (its manifest has no shard)")
        if not (path / RECORDS_FILE).is_file():
            raise UserError(f"{path}: not a run folder (no {RECORDS_FILE})")
    _same(manifests)
    shards: dict[tuple[int, int], Path] = {}
    for path, m in manifests:
        shard = parse_shard(m.shard or "")
        if shard in shards:
            raise UserError(f"{path}: shard {m.shard} is given twice (also {shards[shard]})")
        shards[shard] = path
    counts = {count for _, count in shards}
    if len(counts) > 1:
        given = ", ".join(f"{i}/{n}" for i, n in shards)
        raise UserError(f"the shards split the cases differently: {given}")
    count = counts.pop()
    missing = [f"{i}/{count}" for i in range(1, count + 1) if (i, count) not in shards]
    if missing and not partial:
        raise UserError(f"shard {', '.join(missing)} missing (merge with --partial to allow it)")
    ordered = sorted(manifests, key=lambda pm: parse_shard(pm[1].shard or "")[0])
    try:
        merged_fh = open_write(dest / RECORDS_FILE)
    except UnsafePath as exc:
        raise refused(dest / RECORDS_FILE, exc) from None
    with merged_fh as fh:
        for path, _ in ordered:
            try:
                data = read_inside(path, path / RECORDS_FILE, MAX_RUN_FILE_BYTES)
            except UnsafePath as exc:
                raise refused(path / RECORDS_FILE, exc) from None
            if data and not data.endswith(b"\n"):
                data = data[: data.rfind(b"\n") + 1]  # a torn last line: as readers skip it
            fh.write(data)
    sent = ordered[0][0] / TOOLS_FILE
    if ordered[0][1].tools_source is not None and sent.is_file():
        # the tools sent (the same in every shard: the same tools fingerprint)
        try:
            replace_bytes(dest / TOOLS_FILE, read_inside(ordered[0][0], sent, 64 << 20))
        except UnsafePath as exc:
            raise refused(sent, exc) from None
    merged = _merged(dest, [m for _, m in ordered], missing)
    write_manifest(dest, merged)
    return merged


def _merged(dest: Path, parts: list[Manifest], missing: list[str]) -> Manifest:
    first = parts[0]
    counts: dict[str, int] = {}
    for m in parts:
        for k, v in m.counts.items():
            counts[k] = counts.get(k, 0) + v
    statuses = {m.status for m in parts}
    status = next(
        (s for s in ("failed", "interrupted", "running") if s in statuses), "complete"
    )
    ends = [m.ended_at for m in parts if m.ended_at is not None]
    targets = []
    for i, entry in enumerate(first.targets):
        versions = sorted({v for m in parts for v in m.targets[i].model_versions})
        targets.append(entry.model_copy(update={"model_versions": versions}))
    commits = {m.git_commit for m in parts}
    extra = {**first.extra, "merged_from": [f"{m.run_id} ({m.shard})" for m in parts]}
    if missing:
        extra["missing_shards"] = missing
    return first.model_copy(
        update={
            "run_id": dest.name,
            "shard": None,
            "started_at": min(m.started_at for m in parts),
            "ended_at": max(ends) if len(ends) == len(parts) else None,
            "status": status,
            "counts": counts,
            "targets": targets,
            "resumed": sum(m.resumed for m in parts),
            "git_commit": commits.pop() if len(commits) == 1 else None,
            "extra": extra,
            "schedule": _merged_schedule(parts),
        }
    )


def _merged_schedule(parts: list[Manifest]) -> Schedule | None:
    """The shards' adaptive schedules as one: attempts added up, the full rounds every
    shard ran (the least). A case's rule is its own, so the merged run holds what one
    unsharded run would have; ``--until-decided`` decided each shard on its own cases,
    and its looks stay in the shards' manifests."""
    first = parts[0].schedule
    if first is None:
        return None
    targets = []
    for entry in first.targets:
        mine = [t for m in parts if m.schedule for t in m.schedule.targets if t.spec == entry.spec]
        stopped: dict[str, int] = {}
        for t in mine:
            for why, n in t.stopped.items():
                stopped[why] = stopped.get(why, 0) + n
        ends = {t.ended for t in mine}
        targets.append(
            ScheduledTarget(
                spec=entry.spec,
                planned=sum(t.planned for t in mine),
                attempts=sum(t.attempts for t in mine),
                full_rounds=min(t.full_rounds for t in mine),
                stopped=dict(sorted(stopped.items())),
                repeating=sorted({c for t in mine for c in t.repeating}),
                ended=ends.pop() if len(ends) == 1 else "per shard",
            )
        )
    return first.model_copy(update={"targets": targets})

"""Where the viewer finds runs: a small interface, and run folders behind it.

A :class:`RunSource` gives the list of runs and one run's evaluation; the
viewer grades and keeps each run (``_index.RunCache``) and derives the rest.
The viewer's pages reach run folders and the history store through one
interface, ``_views.Pages``: :class:`FolderSource` is behind its
``FolderPages``, :class:`~toolproof.web.StoreSource` behind its ``StorePages``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from toolproof.errors import UserError

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation
    from toolproof.trust import Trust

RECORDS = "records.jsonl"
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class RunInfo:
    """What the runs list shows before a run is opened."""

    run_id: str
    suite: str
    suite_version: str | None
    targets: list[str]
    started: datetime | None
    status: str
    records_file: Path
    version: tuple[int, int] = (0, 0)
    """Changes when the records change (mtime_ns, size): cached figures are then stale."""
    error: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        """How links name the run."""
        return self.run_id


class RunSource(Protocol):
    """Runs the viewer can show."""

    def runs(self) -> list[RunInfo]:
        """Every run, newest first."""
        ...

    def info(self, run_id: str) -> RunInfo:
        """One run; :class:`KeyError` when there is none of that ID."""
        ...

    def evaluation(self, run_id: str) -> Evaluation:
        """The run graded and summarised (the one pipeline, :func:`toolproof.evaluate`)."""
        ...


class FolderSource:
    """Run folders (records.jsonl, manifest.json) directly under one folder.

    ``suite`` is used for folders whose manifest names no suite, or that have
    no manifest (a folder holding only a records file). ``trust`` is what the
    suites may do (default: the safe default of :mod:`toolproof.trust`).
    """

    def __init__(
        self, root: str | Path, suite: str | Path | None = None, trust: Trust | None = None
    ) -> None:
        self.root = Path(root)
        self.suite = Path(suite) if suite is not None else None
        self.trust = trust

    def _folders(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        out = [p for p in self.root.iterdir() if p.is_dir() and (p / RECORDS).is_file()]
        if (self.root / RECORDS).is_file():
            out.append(self.root)
        return out

    def _info(self, folder: Path) -> RunInfo:
        from toolproof.run import read_manifest

        records = folder / RECORDS
        st = records.stat()
        run_id = folder.name if folder != self.root else "."
        try:
            m = read_manifest(folder) if (folder / MANIFEST).is_file() else None
        except UserError as exc:
            return RunInfo(run_id, "?", None, [], None, "invalid", records, error=str(exc))
        if m is None:
            return RunInfo(
                run_id,
                "?" if self.suite is None else self.suite.stem,
                None,
                [],
                datetime.fromtimestamp(st.st_mtime).astimezone(),
                "records only",
                records,
                (st.st_mtime_ns, st.st_size),
            )
        return RunInfo(
            run_id=run_id,
            suite=m.suite_name,
            suite_version=m.suite_version,
            targets=[t.spec for t in m.targets],
            started=m.started_at,
            status=m.status,
            records_file=records,
            version=(st.st_mtime_ns, st.st_size),
        )

    def runs(self) -> list[RunInfo]:
        infos = [self._info(f) for f in self._folders()]
        return sorted(
            infos,
            key=lambda i: (i.started.timestamp() if i.started else 0.0, i.run_id),
            reverse=True,
        )

    def info(self, run_id: str) -> RunInfo:
        if run_id == ".":
            folder = self.root
        elif "/" in run_id or "\\" in run_id or run_id in ("", "..") or run_id.startswith("."):
            raise KeyError(run_id)
        else:
            folder = self.root / run_id
        if not (folder / RECORDS).is_file():
            raise KeyError(run_id)
        return self._info(folder)

    def evaluation(self, run_id: str) -> Evaluation:
        from toolproof.evaluate import load_run

        info = self.info(run_id)
        folder = info.records_file.parent
        suite = None
        if self.suite is not None and _manifest_suite_missing(folder):
            suite = self.suite
        # raw payloads are read back from the records file by the case page only
        if self.trust is None:
            return load_run(folder, suite=suite, keep_raw=False)
        return load_run(folder, suite=suite, keep_raw=False, trust=self.trust)


def _manifest_suite_missing(folder: Path) -> bool:
    path = folder / MANIFEST
    if not path.is_file():
        return True
    try:
        source = json.loads(path.read_text("utf-8")).get("suite_source")
    except (OSError, ValueError, AttributeError):
        return True
    return not source or not Path(source).exists()

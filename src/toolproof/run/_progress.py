"""What a run tells the person watching it: one protocol, two implementations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from toolproof.types import Outcome, Record

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["RichProgress", "RunObserver", "SilentObserver"]


class RunObserver(Protocol):
    """Receives events from the runner, on the event loop. Must not block."""

    def started(self, totals: dict[str, int]) -> None:
        """Work about to run, attempts per target."""

    def recorded(self, record: Record) -> None:
        """One attempt finished (any outcome) and was written."""

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        """An attempt failed and will be tried again after ``delay_s``."""

    def note(self, target: str, text: str) -> None:
        """What a target is doing before its first answer (e.g. loading a model)."""

    # Optional, asked for with getattr: ``replanned(target, total)``, an adaptive schedule
    # ended a target after ``total`` attempts instead of the fixed plan's.

    def finished(self) -> None:
        """The run stopped (done, interrupted or failed)."""


class SilentObserver:
    """Says nothing (``--quiet``)."""

    def started(self, totals: dict[str, int]) -> None:
        pass

    def recorded(self, record: Record) -> None:
        pass

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        pass

    def note(self, target: str, text: str) -> None:
        pass

    def replanned(self, target: str, total: int) -> None:
        pass

    def finished(self) -> None:
        pass


class RichProgress:
    """One progress bar per target: done/total, ETA, errors, retries and spend so far."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("errors {task.fields[errors]}"),
            TextColumn("retries {task.fields[retries]}"),
            TextColumn("{task.fields[cost]}"),
            console=console,
            transient=False,
            refresh_per_second=4,
        )
        self._tasks: dict[str, Any] = {}
        self._stats: dict[str, list[float]] = {}

    def started(self, totals: dict[str, int]) -> None:
        self._progress.start()
        for target, total in totals.items():
            self._stats[target] = [0, 0, 0.0]
            self._tasks[target] = self._progress.add_task(
                target, total=total, errors=0, retries=0, cost="cost –"
            )

    def recorded(self, record: Record) -> None:
        target = record.target or ""
        stats = self._stats.get(target)
        if stats is None:
            return
        if record.outcome is not Outcome.ok:
            stats[0] += 1
        update: dict[str, Any] = {"errors": int(stats[0])}
        if record.cost_usd is not None and not record.cached:
            stats[2] += record.cost_usd
            update["cost"] = f"${stats[2]:.4f} spent"
        self._progress.update(self._tasks[target], advance=1, description=target, **update)

    def note(self, target: str, text: str) -> None:
        from rich.markup import escape as escape_markup

        task = self._tasks.get(target)
        if task is not None:
            self._progress.update(task, description=f"{target}: {escape_markup(text)}")

    def replanned(self, target: str, total: int) -> None:
        task = self._tasks.get(target)
        if task is not None:
            self._progress.update(task, total=total)

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        stats = self._stats.get(target)
        if stats is not None:
            stats[1] += 1
            self._progress.update(self._tasks[target], retries=int(stats[1]))

    def finished(self) -> None:
        self._progress.stop()

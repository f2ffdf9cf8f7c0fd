"""The calibration records a suite names, read once for every command that gates."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from toolproof.errors import UserError
from toolproof.judges._calibrate import Calibration, read_calibration
from toolproof.types import Suite


def suite_calibrations(suite: Suite, extra: Sequence[Path] = ()) -> list[Calibration]:
    """The calibration records the suite names (``judge.calibration``, relative to its
    file), plus any given. A record the suite names but that is not made yet leaves its
    judge uncalibrated; a name outside the suite's folder is refused."""
    paths: list[tuple[Path, Path | None]] = []
    if suite.judge is not None and suite.source is not None:
        base = Path(suite.source).parent
        for name in suite.judge.calibration:
            pure = PurePosixPath(name)
            if pure.is_absolute() or ".." in pure.parts:
                raise UserError(
                    f"{suite.source}: judge.calibration: {name!r} must stay inside the suite folder"
                )
            path = base / name
            if os.path.lexists(path):  # one not yet made leaves the judge uncalibrated
                paths.append((path, base))  # read only from inside the suite's folder
    paths += [(p, None) for p in extra]  # after the suite's (``gate --calibration``)
    return [read_calibration(p, root) for p, root in paths]

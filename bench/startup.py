"""Start-up cost of the command line: ``toolproof --help`` wall time and peak memory.

Runs ``python -m toolproof --help`` (and ``toolproof run --help``) in fresh
processes, reports the median and best wall time, the peak resident memory,
and the heaviest modules imported (from ``-X importtime``).

    python bench/startup.py [--runs 15]

Prints each median with its ratio to ``python -c pass`` measured alongside,
and the load average before and after (the machine may be shared).

Target: <= 0.3 s (vendor SDKs and heavy modules are imported lazily).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(.*)")


def measure(args: list[str], runs: int) -> tuple[list[float], int]:
    walls: list[float] = []
    peak_kb = 0
    for _ in range(runs):
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execv(sys.executable, [sys.executable, "-m", "toolproof", *args])
        _, status, usage = os.wait4(pid, 0)
        walls.append(time.perf_counter() - started)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"toolproof {' '.join(args)} failed")
        peak_kb = max(peak_kb, usage.ru_maxrss)
    return walls, peak_kb


def heaviest(args: list[str], top: int = 8) -> list[tuple[float, str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolproof", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        m = LINE.match(line)
        if m and not m.group(3).startswith(" "):  # top-level imports only
            rows.append((int(m.group(2)) / 1e6, m.group(3).strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}")
    bare, _ = measure_python(args.runs)
    floor = statistics.median(bare)
    for command in (["--help"], ["run", "--help"]):
        walls, peak_kb = measure(command, args.runs)
        name = "toolproof " + " ".join(command)
        mid = statistics.median(walls)
        print(
            f"{name:22s} median {mid:.3f} s  best {min(walls):.3f} s  "
            f"{mid / floor:.1f}x python -c pass  peak RSS {peak_kb / 1024:.1f} MiB   "
            "(target <= 0.3 s)"
        )
    print(f"{'python -c pass':22s} median {floor:.3f} s  (interpreter floor)")
    print(f"load {os.getloadavg()[0]:.1f}")
    print("heaviest top-level imports of `toolproof --help` (cumulative):")
    for seconds, module in heaviest(["--help"]):
        print(f"  {seconds * 1000:7.1f} ms  {module}")


def measure_python(runs: int) -> tuple[list[float], int]:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        walls.append(time.perf_counter() - started)
    return walls, 0


if __name__ == "__main__":
    main()

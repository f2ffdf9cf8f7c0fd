"""What an MCP environment adds to each multi-step attempt: start, one call, stop.

Starts examples/mcp's notes server the way a run does (a fresh process in a
temporary copy of the folder), calls one tool, stops it, several times, and
prints each phase. Needs the mcp extra: pip install 'toolproof[mcp]'.

    python bench/mcp_env_attempt.py [--times 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from toolproof.mcpenv import McpEnvironmentSpec, McpSession

ROOT = Path(__file__).resolve().parents[1]


async def _once(spec: McpEnvironmentSpec) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    session = McpSession(spec, allow_code=True)
    await session.__aenter__()
    t1 = time.perf_counter()
    try:
        call = await session.call("all_notes", {})
        if call.failed:
            raise SystemExit(f"the call failed: {call.answer().content}")
        t2 = time.perf_counter()
    finally:
        await session.__aexit__(None, None, None)
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


async def _main(times: int) -> None:
    folder = ROOT / "examples" / "mcp"
    spec = McpEnvironmentSpec.parse("stdio:python notes_server.py", folder)
    rows = [await _once(spec) for _ in range(times)]
    print(f"examples/mcp notes server, {times} attempts, load average {os.getloadavg()[0]:.2f}")
    for name, i in (("start", 0), ("one call", 1), ("stop", 2)):
        values = [r[i] for r in rows]
        print(
            f"{name:9} median {statistics.median(values):6.3f} s   "
            f"min {min(values):6.3f} s   max {max(values):6.3f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--times", type=int, default=5)
    asyncio.run(_main(parser.parse_args().times))


if __name__ == "__main__":
    main()

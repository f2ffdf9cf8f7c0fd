"""Open a 100,000-attempt run in `toolproof view` and print how long the pages take.

The run is generated: the example suite's 21 single-step cases of
cases/extra.jsonl cloned into 5,000 cases, two targets, ten attempts each
(2 x 5,000 x 10 = 100,000 records), the answers taken from the suite's two
recorded demo models and mixed over attempts so that some cases are flaky.
It is loaded into a new history store with `toolproof history import` (in a
separate process: grading is the import's work, not the viewer's), then the
viewer serves that store on 127.0.0.1, set up as `toolproof view` sets it up,
and pages are fetched over HTTP, as a browser would (the time to the last byte
of the HTML).

Printed:
- the import (grade 100,000 records and write the store), once per run;
- the viewer's start (the statistics library the diff uses is imported once);
- the run page's first request: it opens the run from the store (nothing is
  graded, and neither the suite nor the attempts are read);
- the run page, first page of cases, then page 50 and a filtered page;
- a case page (ten attempts, each read back from the records file);
- the runs list, the diff of the run with itself and its trend;
- the viewer process's peak memory;
- the self-contained HTML report of the example suite (size).

Usage: python bench/view_open.py [CASES] [ATTEMPTS] [STORE]
(STORE: a postgresql://… URL to use instead of a new SQLite file.)
"""

from __future__ import annotations

import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web

from toolproof.evaluate import load_run
from toolproof.gate import run_gate
from toolproof.report import html_report
from toolproof.run._manifest import Manifest, TargetEntry, write_manifest
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.web import StoreSource, make_app
from toolproof.web._app import STORE, warm_store

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"
TARGETS = ("bench:model-a", "bench:model-b")
#: The example suite's environment tools are its own Python; this benchmark trusts it.
TRUST = Trust(allow_code=True)


def make_run(root: Path, cases: int, attempts: int) -> tuple[Path, int]:
    suite_dir = root / "suite"
    shutil.copytree(SUITE, suite_dir)
    extra = [json.loads(x) for x in (SUITE / "cases" / "extra.jsonl").read_text().splitlines() if x]
    with (suite_dir / "cases" / "bench.jsonl").open("w") as out:
        for i in range(cases - len(extra)):
            case = dict(extra[i % len(extra)])
            case["id"] = f"{case['id']}-{i:05d}"
            out.write(json.dumps(case, ensure_ascii=False) + "\n")
    answers: dict[str, list[dict[str, Any]]] = {}
    for name in ("records.jsonl", "records-b.jsonl"):
        for line in (SUITE / name).read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                answers.setdefault(d["case_id"], []).append(d["response"])
    run = root / "runs" / "bench-100k"
    run.mkdir(parents=True)
    ids = [c["id"] for c in extra] + [
        f"{extra[i % len(extra)]['id']}-{i:05d}" for i in range(cases - len(extra))
    ]
    n = 0
    with (run / "records.jsonl").open("w") as out:
        for t, target in enumerate(TARGETS):
            for cid in ids:
                base = cid.rsplit("-", 1)[0] if cid not in answers else cid
                choices = answers[base]
                for a in range(attempts):
                    resp = choices[(a + t) % len(choices)] if a % 3 == 0 else choices[t % len(choices)]
                    rec = {
                        "format": "toolproof.record/1",
                        "case_id": cid,
                        "target": target,
                        "attempt": a,
                        "response": resp,
                        "latency_ms": 200 + (hash((cid, a, t)) % 1800),
                    }
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    n += 1
    suite = load_suite(suite_dir, TRUST)
    write_manifest(
        run,
        Manifest(
            run_id=run.name,
            toolproof_version="bench",
            suite_name=suite.name,
            suite_version=suite.version,
            suite_source=str(suite_dir / "suite.yaml"),
            suite_fingerprint=suite.fingerprint(),
            tools_fingerprint="bench",
            targets=[TargetEntry(spec=t) for t in TARGETS],
            repeats=attempts,
            started_at=datetime.now(UTC),
            status="complete",
        ),
    )
    return run, n


class Server:
    def __init__(self, app: web.Application) -> None:
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(app, access_log=None)
        ready = threading.Event()

        async def start() -> None:
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
            ready.set()

        def main() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(start())
            self.loop.run_forever()

        threading.Thread(target=main, daemon=True).start()
        ready.wait(30)


def fetch(url: str, ok: tuple[int, ...] = (200,)) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url) as resp:
        body = resp.read()
        assert resp.status in ok, (url, resp.status)
    return time.perf_counter() - t0, len(body), resp.status


def timed(label: str, url: str, rounds: int = 5) -> None:
    times, size = [], 0
    for _ in range(rounds):
        t, size, _ = fetch(url)
        times.append(t)
    print(
        f"{label:<44} median {1000 * statistics.median(times):7.1f} ms, "
        f"max {1000 * max(times):7.1f} ms  ({size / 1000:.0f} kB HTML)"
    )


def main() -> None:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    attempts = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with tempfile.TemporaryDirectory() as tmp:
        run, n = make_run(Path(tmp), cases, attempts)
        size_mb = (run / "records.jsonl").stat().st_size / 1e6
        print(f"run: {n:,} attempts ({cases:,} cases x {len(TARGETS)} targets x {attempts}), "
              f"{size_mb:.1f} MB of records")
        store = sys.argv[3] if len(sys.argv) > 3 else str(Path(tmp) / "history.db")
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "toolproof", "history", "import", str(run), "--store", store,
             "--allow-code"],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            sys.exit(f"import failed: {done.stderr.strip()}")
        print(f"{'import into the store (grade and write), once':<44} "
              f"{time.perf_counter() - t0:7.1f} s")
        source = StoreSource(store, TRUST, suites_in_background=True)
        app = make_app(source, page_size=50)
        t0 = time.perf_counter()
        server = Server(app)
        warm_store(source)  # `toolproof view` does it in a thread as it starts listening
        print(f"{'viewer started and warmed up':<44} {time.perf_counter() - t0:7.1f} s")
        base = f"{server.url}/run?id={run.name}"
        first, size, _ = fetch(base)
        print(f"{'run page, first request (opens the run)':<44} {1000 * first:7.1f} ms "
              f"({size / 1000:.0f} kB HTML; opening it took "
              f"{1000 * app[STORE].open(run.name).seconds:.0f} ms of that)")
        timed("run page (page 1 of cases)", base)
        timed("run page, page 50", base + "&page=50")
        timed("run page, filtered (failure, target)",
              base + "&failure=wrong_tool&target=bench%3Amodel-b")
        opened = app[STORE].open(run.name)
        entry = opened.view.entries[len(opened.view.entries) // 2]
        timed("case page (10 attempts)",
              f"{server.url}/case?run={run.name}&id={quote(entry.case_id)}"
              f"&target={quote(entry.target)}")
        timed("runs list", server.url + "/")
        diff = f"{server.url}/diff?a={run.name}&b={run.name}"
        t, size, _ = fetch(diff)
        print(f"{'diff of the run with itself, first request':<44} {1000 * t:7.1f} ms "
              f"({size / 1000:.0f} kB HTML)")
        timed("diff of the run with itself, again", diff)
        timed("trend of a target", f"{server.url}/trends?suite=support&target=bench%3Amodel-a")
        t0 = time.perf_counter()
        while app[STORE].open(run.name).suite is None and time.perf_counter() - t0 < 600:
            time.sleep(0.2)
        timed("run page, with the suite's contracts", base)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"viewer process peak memory (max RSS): {rss:.0f} MB")

    ev = load_run(SUITE / "records.jsonl", suite=SUITE, trust=TRUST)
    size = len(html_report(ev, run_gate(ev)).encode())
    print(f"HTML report of examples/support/records.jsonl: {size:,} bytes")


if __name__ == "__main__":
    main()

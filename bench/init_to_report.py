"""Time from `toolproof init` to the first report, as a newcomer would run it.

Runs, each as its own `toolproof` process, in a scratch folder:

    toolproof init suite --tools SOURCE
    toolproof validate suite
    toolproof run suite --model MODEL

and prints the wall time of each step and the total. The default model is
the scripted fake (answers every template with an example call, or a
question), so the figure is toolproof's own cost; `--model local:` measures
the bundled local model (needs `toolproof[local]`).

    python bench/init_to_report.py [--tools examples/tools/petstore.yaml] [--model local:]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolproof.scaffold._templates import example_args
from toolproof.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]


def _step(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", *argv], cwd=cwd, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return elapsed


def _script(suite_dir: Path, path: Path) -> None:
    suite = load_suite(suite_dir)
    cases: dict[str, object] = {}
    for case in suite.cases:
        tool = suite.tool(case.expect.call) if isinstance(case.expect.call, str) else None
        if tool is not None:
            cases[case.id] = {"tool_calls": [{"name": tool.name, "arguments": example_args(tool)}]}
        else:
            cases[case.id] = {"text": "Could you tell me which one you mean?"}
    path.write_text(json.dumps({"model": "scripted-init", "cases": cases}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", default=str(ROOT / "examples" / "tools" / "petstore.yaml"))
    parser.add_argument("--model", default=None, help="default: a scripted model")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        t_init = _step(["init", "suite", "--tools", str(Path(args.tools).resolve())], cwd)
        t_validate = _step(["validate", "suite"], cwd)
        model = args.model
        if model is None:
            _script(cwd / "suite", cwd / "script.json")
            model = "scripted:script.json"
        cases = len(load_suite(cwd / "suite").cases)
        t_run = _step(["run", "suite", "--model", model, "--quiet", "--no-cache", "-o", "run"], cwd)
    total = t_init + t_validate + t_run
    print(f"source: {args.tools}  model: {model}  cases: {cases}")
    print(f"init      {t_init:6.2f} s")
    print(f"validate  {t_validate:6.2f} s")
    print(f"run       {t_run:6.2f} s  (prints the first report)")
    print(f"total     {total:6.2f} s  from init to the first report")


if __name__ == "__main__":
    main()

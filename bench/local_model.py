"""The local model's costs: assembly, server start, memory, latency, tokens/s, threads.

Runs the cases of ``examples/support/suite.yaml`` through the ``local`` provider
(llama.cpp behind the OpenAI-compatible adapter, exactly as a run uses it) and
prints, for each thread count and for an idle or a busy second core:

* server start (spawn, verify, load, ready) and the server's resident memory;
* wall time per call (mean, median, p90, max) and for all calls;
* generation and prompt tokens/s as llama.cpp reports them;
* how the model answered: structured calls, calls recovered from text, text.

    python bench/local_model.py [--calls 48] [--threads 1,2] [--busy both|idle|busy]
                                [--assembly] [--install xllamacpp,llama-cpp-python]
                                [--compare-python PYTHON]

``--assembly`` assembles the bundled model into a fresh temporary cache and
times it. ``--install`` times ``pip install`` of each runtime into a fresh
virtual environment (it downloads from the package index; llama-cpp-python
compiles llama.cpp, about 5-10 minutes on two cores, run at ``nice 19``).
``--compare-python`` runs the same prompts through llama-cpp-python's
``Llama.create_chat_completion`` in that interpreter, which must have
llama-cpp-python installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from toolproof.providers import HttpTransport, ModelSettings, ProviderRequest
from toolproof.providers._local import LocalProvider
from toolproof.providers._local._gguf import BUNDLED_MODEL, ensure_bundled_model
from toolproof.providers._textcalls import extract_text_calls
from toolproof.types import Message, Response, Tool

SUITE = Path(__file__).resolve().parent.parent / "examples" / "support" / "suite.yaml"
SETTINGS = ModelSettings(temperature=0, max_tokens=256, timeout_s=300)
_TOOL_FIELDS = set(Tool.model_fields)


def load_requests(limit: int) -> list[ProviderRequest]:
    """One request per case of the example suite: its system prompt, tools and turns."""
    suite = yaml.safe_load(SUITE.read_text())
    tools = [Tool(**{k: v for k, v in t.items() if k in _TOOL_FIELDS}) for t in suite["tools"]]
    system = Message(role="system", content=suite["system"])
    requests = []
    for case in suite["cases"][:limit]:
        if "prompt" in case:
            turns = [Message(role="user", content=case["prompt"])]
        else:
            turns = [Message(**m) for m in case["messages"]]
        requests.append(
            ProviderRequest(
                model=BUNDLED_MODEL.name, messages=[system, *turns], tools=tools, settings=SETTINGS
            )
        )
    return requests


@dataclass
class Result:
    label: str
    start_s: float = 0.0
    walls: list[float] = field(default_factory=list)
    gen_tps: list[float] = field(default_factory=list)
    prompt_tps: list[float] = field(default_factory=list)
    out_tokens: int = 0
    structured: int = 0
    from_text: int = 0
    text_only: int = 0
    memory: dict[str, int] = field(default_factory=dict)
    load_avg: tuple[float, float] = (0.0, 0.0)

    def add(self, wall: float, response: Response) -> None:
        self.walls.append(wall)
        timings = (response.raw or {}).get("timings") or {}
        if timings.get("predicted_per_second"):
            self.gen_tps.append(float(timings["predicted_per_second"]))
        if timings.get("prompt_per_second"):
            self.prompt_tps.append(float(timings["prompt_per_second"]))
        if response.usage and response.usage.output_tokens:
            self.out_tokens += response.usage.output_tokens
        calls = response.tool_calls
        if not calls:
            self.text_only += 1
        elif any(c.extracted_from_text for c in calls):
            self.from_text += 1
        else:
            self.structured += 1


async def run_config(label: str, threads: int, requests: list[ProviderRequest]) -> Result:
    os.environ["TOOLPROOF_LOCAL_THREADS"] = str(threads)
    result = Result(label)
    before = os.getloadavg()[0]
    async with HttpTransport() as transport:
        provider = LocalProvider("", SETTINGS, transport)
        try:
            started = time.perf_counter()
            await provider._adapter()  # start the server alone, to time it
            result.start_s = time.perf_counter() - started
            assert provider.server is not None
            result.memory["rss_after_load"] = provider.server.memory().get("rss", 0)
            for request in requests:
                t0 = time.perf_counter()
                exchange = await provider.generate(request)
                result.add(time.perf_counter() - t0, exchange.response)
            result.memory["peak_rss"] = provider.server.memory().get("peak_rss", 0)
        finally:
            await provider.aclose()
    result.load_avg = (before, os.getloadavg()[0])
    return result


@contextmanager
def busy_core(enabled: bool):  # type: ignore[no-untyped-def]
    """One process spinning on a core for as long as the block runs (bounded to 30 min)."""
    if not enabled:
        yield
        return
    spin = "import time\nend = time.time() + 1800\nwhile time.time() < end: pass\n"
    proc = subprocess.Popen([sys.executable, "-c", spin])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(r: Result) -> None:
    w = r.walls
    total = sum(w)
    print(f"\n== {r.label}")
    print(f"machine load average (1 min) before {r.load_avg[0]:.2f}, after {r.load_avg[1]:.2f}")
    print(f"server start (spawn + verify + load + ready): {r.start_s:.2f} s")
    print(
        f"server RSS after load {r.memory.get('rss_after_load', 0) / 2**20:.0f} MiB, "
        f"peak {r.memory.get('peak_rss', 0) / 2**20:.0f} MiB"
    )
    print(
        f"{len(w)} calls: total {total:.1f} s; per call mean {statistics.mean(w):.2f} s, "
        f"median {statistics.median(w):.2f} s, p90 {_pct(w, 0.9):.2f} s, max {max(w):.2f} s"
    )
    print(
        f"generation {statistics.mean(r.gen_tps):.1f} tokens/s (llama.cpp timings, mean); "
        f"prompt {statistics.mean(r.prompt_tps):.1f} tokens/s; "
        f"{r.out_tokens} output tokens, {r.out_tokens / total:.1f} per wall second"
    )
    print(
        f"answers: {r.structured} structured calls, {r.from_text} calls recovered from text, "
        f"{r.text_only} text only"
    )


def time_assembly() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path = ensure_bundled_model(cache=Path(tmp), report=lambda _: None)
        assembled = time.perf_counter() - started
        started = time.perf_counter()
        ensure_bundled_model(cache=Path(tmp), report=lambda _: None)
        verified = time.perf_counter() - started
        print(
            f"\nassembly of {path.name} ({BUNDLED_MODEL.size:,} bytes): {assembled:.2f} s "
            f"(join + per-part and whole sha256); verify of the cached file: {verified:.2f} s"
        )


def time_install(names: list[str]) -> None:
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "venv", tmp], check=True)
            cmd = [f"{tmp}/bin/pip", "install", "--no-cache-dir", "-q", name]
            if name == "llama-cpp-python":
                cmd = ["nice", "-n", "19", *cmd]
            started = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True)
            took = time.perf_counter() - started
            status = "ok" if done.returncode == 0 else f"failed ({done.returncode})"
            print(f"\npip install {name} into a fresh venv: {took:.1f} s, {status}")


_LLAMA_CPP_PYTHON = r"""
import json, statistics, sys, time
from llama_cpp import Llama
model, threads, payload = sys.argv[1], int(sys.argv[2]), json.load(sys.stdin)
t0 = time.perf_counter()
llm = Llama(model_path=model, n_ctx=8192, n_threads=threads, verbose=False)
load = time.perf_counter() - t0
walls, toks, calls, texts = [], 0, 0, []
for messages in payload["requests"]:
    t0 = time.perf_counter()
    out = llm.create_chat_completion(messages=messages, tools=payload["tools"],
                                     temperature=0, max_tokens=256)
    walls.append(time.perf_counter() - t0)
    toks += out["usage"]["completion_tokens"]
    msg = out["choices"][0]["message"]
    calls += bool(msg.get("tool_calls"))
    texts.append(msg.get("content") or "")
print(json.dumps({"load": load, "walls": walls, "tokens": toks, "calls": calls, "texts": texts}))
"""


def compare_llama_cpp_python(python: str, requests: list[ProviderRequest], threads: int) -> None:
    from toolproof.providers._openai_chat import OpenAICompatibleProvider

    settings = ModelSettings(base_url="http://127.0.0.1:1/v1")
    adapter = OpenAICompatibleProvider("m", settings, HttpTransport())
    payloads = [adapter.build_payload(r) for r in requests]
    body = {"tools": payloads[0]["tools"], "requests": [p["messages"] for p in payloads]}
    model = str(ensure_bundled_model(report=lambda _: None))
    done = subprocess.run(
        [python, "-c", _LLAMA_CPP_PYTHON, model, str(threads)],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(done.stdout)
    w = r["walls"]
    names = [t.name for t in requests[0].tools]
    recovered = sum(1 for text in r["texts"] if extract_text_calls(text, names).calls)
    print(f"\n== llama-cpp-python, {threads} thread(s), Llama.create_chat_completion in-process")
    mean = statistics.mean(w)
    print(f"load {r['load']:.2f} s; {len(w)} calls: total {sum(w):.1f} s, mean {mean:.2f} s")
    print(
        f"{r['tokens']} output tokens, {r['tokens'] / sum(w):.1f} per wall second; "
        f"answers: {r['calls']} structured calls; {recovered} of the text answers hold a call "
        "that toolproof's text-call recovery finds"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=48)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--busy", choices=["both", "idle", "busy"], default="both")
    parser.add_argument("--assembly", action="store_true")
    parser.add_argument("--install", default="")
    parser.add_argument("--compare-python", default="")
    args = parser.parse_args()

    if args.install:
        time_install([n for n in args.install.split(",") if n])
    if args.assembly:
        time_assembly()
    ensure_bundled_model()
    requests = load_requests(args.calls)
    print(f"{len(requests)} requests from {SUITE.name}, temperature 0, max_tokens 256")
    loads = {"both": [False, True], "idle": [False], "busy": [True]}[args.busy]
    for threads in [int(t) for t in args.threads.split(",")]:
        for busy in loads:
            label = f"{threads} thread(s), other core {'busy' if busy else 'idle'}"
            with busy_core(busy):
                report(asyncio.run(run_config(label, threads, requests)))
    if args.compare_python:
        for threads in [int(t) for t in args.threads.split(",")]:
            compare_llama_cpp_python(args.compare_python, requests, threads)


if __name__ == "__main__":
    main()

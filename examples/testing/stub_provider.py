"""Test a provider setup offline: toolproof's stub server stands in for the OpenAI API.

The stub is a real HTTP server on 127.0.0.1 that answers in the provider's wire
format (OpenAI, Anthropic, Gemini, OpenRouter) with canned replies and
injected faults. Point a target's ``base_url`` at it and run a suite as usual:
nothing leaves the machine and no key is spent. Run it with:

    python examples/testing/stub_provider.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from toolproof.grade import Scorer
from toolproof.providers import ModelSettings
from toolproof.run import RetryPolicy, RunOptions, Target, run_suite
from toolproof.suite import load_suite
from toolproof.testing import RateLimit, Reply, StubServer

HERE = Path(__file__).resolve().parent


def main() -> int:
    os.environ.setdefault("OPENAI_API_KEY", "sk-stub-not-a-real-key")  # the stub takes any key
    suite = load_suite(HERE / "suite.yaml")
    script = [
        RateLimit(retry_after="0.2"),  # the first request is refused with 429 ...
        Reply.call("lookup_order", {"order_id": "ORD-104821"}),  # ... the retry answers
    ]
    with StubServer(script, default=Reply.say("Hello! How can I help?")) as stub:
        settings = ModelSettings(base_url=stub.base_url("openai"), max_retries=2)
        target = Target("openai:gpt-4.1-mini", settings=settings)
        with tempfile.TemporaryDirectory() as tmp:
            options = RunOptions(out=Path(tmp) / "run", cache=False, retry=RetryPolicy(0.01, 0.2))
            result = run_suite(suite, [target], options)
        sent = stub.requests[0].body  # the exact JSON the OpenAI adapter sent
    scorer = Scorer(suite)
    for record in result.records:
        verdict = scorer.grade(record)
        status = "pass" if verdict is not None and verdict.passed else "FAIL"
        print(f"{status} {record.case_id}: retries {record.retries or []}")
    print(f"the stub answered {stub.request_count} requests; the first sent tools", end=" ")
    print([t["function"]["name"] for t in sent["tools"]])
    failed = [r for r in result.records if not (v := scorer.grade(r)) or not v.passed]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

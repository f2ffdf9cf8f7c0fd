from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from toolproof.providers._scripted import ScriptedProvider
from toolproof.run import RetryPolicy, RichProgress, RunOptions, Target, run_suite
from toolproof.types import Suite


def test_the_progress_bar_shows_counts_errors_retries_and_spend(
    suite: Suite, tmp_path: Path
) -> None:
    out = io.StringIO()
    console = Console(file=out, width=140, force_terminal=False, color_system=None)
    priced = ScriptedProvider.from_dict(
        {"default": {"text": "x", "usage": {"input_tokens": 1000, "output_tokens": 0}}}
    )
    down = ScriptedProvider.from_dict({"default": {"error": "server_error"}})
    opts = RunOptions(
        out=tmp_path / "r",
        observer=RichProgress(console),
        retry=RetryPolicy(base_s=0.001, cap_s=0.001),
        cache=False,
        fsync=False,
    )
    targets = [
        Target("openai:gpt-4.1-mini", provider=priced),
        Target("scripted:down", provider=down),
    ]
    for t in targets:
        t.settings = t.settings.model_copy(update={"max_retries": 2})
    run_suite(suite, targets, opts)
    text = out.getvalue()
    first, second = (line for line in text.splitlines() if "6/6" in line)
    assert first.startswith("openai:gpt-4.1-mini") and "errors 0" in first
    assert "$0.0024 spent" in first  # 6 x 1000 input tokens at the shipped gpt-4.1-mini price
    assert second.startswith("scripted:down") and "errors 6" in second and "retries 12" in second
    assert "cost –" in second

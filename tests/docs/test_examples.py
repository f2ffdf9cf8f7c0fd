"""Every matcher example in the documentation passes or fails as the page says.

The examples are the ```yaml blocks marked `<!-- examples: matchers -->`
(tests/docs/markdown.py); each runs exactly as written through `assert_tool_call`,
which takes the matchers of a suite's `expect.args`.
"""

from __future__ import annotations

import importlib.util
import json
import os
from datetime import datetime
from typing import Any

import pytest

from tests.docs.markdown import ROOT, matcher_examples, site_pages
from toolproof.assertions import assert_tool_call
from toolproof.types import ToolCall

PAGES = [ROOT / "README.md", *site_pages()]
EXAMPLES = [example for page in PAGES for example in matcher_examples(page)]
NOW = datetime(2026, 9, 19, 10, 0, 0)
ZONE = "Europe/Prague"

#: Examples the docs state for behaviour the code does not have yet (strict: when the
#: code changes, the test says so, and the entry goes).
PENDING: dict[tuple[str, str], str] = {}


def _key(example: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(example["matcher"]), json.dumps(example.get("value"))


def _params() -> list[Any]:
    out = []
    for where, example in EXAMPLES:
        marks = []
        if (reason := PENDING.get(_key(example))) is not None:
            marks.append(pytest.mark.xfail(reason=reason, strict=True))
        out.append(pytest.param(example, id=where, marks=marks))
    return out


def test_the_docs_have_matcher_examples_for_every_matcher() -> None:
    from toolproof.match import REGISTRY

    used = {next(iter(e["matcher"])) for _, e in EXAMPLES if isinstance(e["matcher"], dict)}
    documented = set(REGISTRY)
    assert documented - used == set(), "matchers with no example in the docs"
    assert {True, False} <= {e["passes"] for _, e in EXAMPLES}


def test_pending_examples_are_still_in_the_docs() -> None:
    keys = {_key(e) for _, e in EXAMPLES}
    assert set(PENDING) <= keys


@pytest.mark.parametrize("example", _params())
def test_matcher_example(example: dict[str, Any]) -> None:
    assert set(example) <= {"matcher", "value", "omitted", "passes"}, example
    assert ("value" in example) != bool(example.get("omitted")), example
    matcher = example["matcher"]
    semantic = isinstance(matcher, dict) and "semantic" in matcher
    if semantic and importlib.util.find_spec("onnxruntime") is None:
        if os.environ.get("TOOLPROOF_REQUIRE_SEMANTIC") == "1":
            pytest.fail("the semantic extra is not installed")
        pytest.skip("needs the semantic extra")
    arguments = {} if example.get("omitted") else {"x": example["value"]}
    call = ToolCall(id="c", name="f", raw_arguments=json.dumps(arguments), arguments=arguments)
    try:
        assert_tool_call([call], "f", {"x": matcher}, now=NOW, timezone=ZONE)
        passed, why = True, ""
    except AssertionError as exc:
        passed, why = False, str(exc)
    assert passed is example["passes"], why or "it passed"


def test_every_example_in_the_matcher_table_is_a_valid_matcher() -> None:
    """The table's example column (`{normalized: ...}`) reads as the matcher its row names."""
    import re

    import yaml

    from toolproof.match import Context, Embeddings, compile_value, zone

    page = (ROOT / "docs" / "matchers.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| .+ \|$", page, re.M)
    assert len(rows) >= 13
    ctx = Context(now=NOW, tz=zone(ZONE), embeddings=Embeddings())
    # the semantic matcher compiles only with its extra (CI requires it)
    semantic_extra = importlib.util.find_spec("onnxruntime") is not None
    if not semantic_extra and os.environ.get("TOOLPROOF_REQUIRE_SEMANTIC") == "1":
        pytest.fail("the semantic extra is not installed")
    for name, cell in rows:
        examples = re.findall(r"`([^`]+)`", cell)
        assert examples, name
        for text in examples:
            spec = yaml.safe_load(text)
            assert isinstance(spec, dict) and name in spec, (name, text)
            if name == "semantic" and not semantic_extra:
                continue
            compile_value({"x": spec}, ctx, False)  # raises on a malformed matcher

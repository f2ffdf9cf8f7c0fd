"""The viewer marks what a judge decided, and shows what the judge wrote as escaped text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.gate.judged_runs import SUITE_YAML, close, note, said
from tests.web.runs import TRUST, make_run
from toolproof.judges import JUDGEMENTS_FILE
from toolproof.web import FolderSource, make_app

HOSTILE = "<script>alert('judge')</script> | x | \x1b[2J \u202eevil"
MARK = 'aria-label="decided by a judge"'


def _run(runs: Path, suite: Path, run_id: str, records: list, judgements: list, day: int) -> None:  # type: ignore[type-arg]
    lines = [r.model_dump_json() + "\n" for r in records]
    folder = make_run(runs, run_id, suite, lines, datetime(2026, 11, day, 10, tzinfo=UTC))
    (folder / JUDGEMENTS_FILE).write_text(
        "".join(j.model_dump_json() + "\n" for j in judgements), encoding="utf-8"
    )


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE_YAML, encoding="utf-8")
    runs = tmp_path / "runs"
    b = [note("c0"), note("c1"), close("c2"), close("c3")]
    _run(runs, suite, "base", b, [said(b[0], True), said(b[1], True)], 1)
    c = [note("c0"), note("c1"), close("c2"), close("c3")]
    _run(runs, suite, "cur", c, [said(c[0], False, reasoning=HOSTILE), said(c[1], True)], 2)
    app = make_app(FolderSource(runs, trust=TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as cl:
        yield cl


async def test_the_run_page_marks_the_figures_a_judge_decided(client: TestClient) -> None:  # type: ignore[type-arg]
    resp = await client.get("/run?id=cur")
    assert resp.status == 200
    page = await resp.text()
    assert page.count(MARK) >= 3  # strict pass, argument values, pass^k
    assert "⚖ = decided by a judge" in page


async def test_the_case_page_shows_the_judges_reasoning_escaped(client: TestClient) -> None:  # type: ignore[type-arg]
    resp = await client.get("/case?run=cur&id=c0&target=m")
    assert resp.status == 200
    page = await resp.text()
    assert MARK in page and "decided by a judge</span>" in page
    assert "<script>alert('judge')</script>" not in page
    assert "&lt;script&gt;alert(&#39;judge&#39;)&lt;/script&gt;" in page
    assert "\x1b" not in page and "\u202e" not in page
    assert "\\x1b[2J" in page and "\\u202eevil" in page


async def test_the_diff_marks_the_rows_a_judge_decided(client: TestClient) -> None:  # type: ignore[type-arg]
    resp = await client.get("/diff?a=base&b=cur")
    assert resp.status == 200
    page = await resp.text()
    assert "<td>⚖ strict pass</td>" in page and "<td>tool selection</td>" in page
    assert "judged by model openai:judge-model" in page

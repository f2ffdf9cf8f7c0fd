"""`toolproof view` over the history store (SQLite, then PostgreSQL), without a browser:
the pages show what the store holds, equal to what grading the run folders gives."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.cli.cli_support import toolproof
from tests.web.runs import SUPPORT, TRUST, make_runs, make_store
from toolproof.evaluate import load_run
from toolproof.gate import compare_runs, run_gate
from toolproof.report import run_view
from toolproof.store import open_store
from toolproof.web import StoreSource, make_app
from toolproof.web._pages import filter_entries, stored_comparisons

RUNS = ("support-a", "support-b", "support-c", "xss")


@pytest.fixture
def stored(store_url: str, runs_dir: Path) -> str:
    make_store(runs_dir, store_url)
    return store_url


@pytest.fixture
async def client(stored: str) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    app = make_app(StoreSource(stored, TRUST), page_size=10)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


def _row(entry: Any) -> tuple[Any, ...]:
    return (
        entry.target, entry.case_id, entry.status, entry.attempts, entry.passes, entry.errors,
        entry.failures, entry.risk, entry.tags, entry.kind, entry.pass_hat_k,
    )  # fmt: skip


def test_opened_from_the_store_equals_graded_from_the_folder(stored: str, runs_dir: Path) -> None:
    source = StoreSource(stored, TRUST)
    for run_id in RUNS:
        from_store = source.open(run_id).view
        graded = load_run(runs_dir / run_id, trust=TRUST)
        from_folder = run_view(graded, run_gate(graded), details=False)
        assert [_row(e) for e in from_store.entries] == [_row(e) for e in from_folder.entries]
        for a, b in zip(from_store.targets, from_folder.targets, strict=True):
            assert a.target == b.target and a.metrics == b.metrics and a.failures == b.failures
            assert a.confusion == b.confusion and a.latency == b.latency
            by_case = lambda rows: sorted(rows, key=lambda r: r.case_id)  # noqa: E731
            assert by_case(a.stability) == by_case(b.stability)  # the same rows
        assert from_store.failure_classes == from_folder.failure_classes
        assert from_store.tags == from_folder.tags and from_store.risks == from_folder.risks
        params = {"failure": "wrong_tool", "status": "fail"}
        assert [_row(e) for e in filter_entries(from_store, params)] == [
            _row(e) for e in filter_entries(from_folder, params)
        ]
    gated = source.open("support-a").view
    assert gated.gate == ("pass" if run_gate(load_run(runs_dir / "support-a", trust=TRUST)).passed
                          else "fail")  # fmt: skip
    assert source.open("support-b").view.gate is None  # never gated


async def test_the_runs_list_shows_every_run_with_figures_without_opening_any(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    text = await (await client.get("/")).text()
    for run_id in RUNS:
        assert f">{run_id}</a>" in text
    assert "77.3% (58/75)" in text  # support-a's strict pass, from the store's metrics
    assert text.count("not gated") == 3
    assert "not opened yet" not in text


async def test_the_runs_list_is_paginated(stored: str) -> None:
    app = make_app(StoreSource(stored, TRUST), page_size=3)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        first = await (await c.get("/")).text()
        assert "page 1 of 2 (1–3 of 4)" in first
        assert ">xss</a>" in first and ">support-a</a>" not in first  # newest first
        second = await (await c.get("/?page=2")).text()
        assert ">support-a</a>" in second and ">xss</a>" not in second


async def test_pages_answer_with_security_headers(client: TestClient) -> None:  # type: ignore[type-arg]
    for path in ("/", "/run?id=support-a", "/run?id=support-a&page=3&failure=wrong_tool",
                 "/case?run=support-a&id=lookup-exact-id&target=recorded:demo-model",
                 "/diff?a=support-a&b=support-b",
                 "/trends?suite=support&target=recorded:demo-model"):
        resp = await client.get(path)
        assert resp.status == 200, path
        assert "default-src 'none'" in resp.headers["Content-Security-Policy"]
        assert resp.headers["X-Content-Type-Options"] == "nosniff"


async def test_unknown_things_are_404_and_the_viewer_is_read_only(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    for path in ("/run?id=nope", "/run?id=", "/case?run=support-a&id=nope&target=x",
                 "/diff?a=support-a&b=nope", "/trends?suite=nope&target=x", "/missing"):
        resp = await client.get(path)
        assert resp.status == 404, path
    for method in ("POST", "PUT", "DELETE"):
        assert (await client.request(method, "/run?id=support-a")).status == 405


async def test_the_run_page_paginates_and_filters_on_the_server(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    text = await (await client.get("/run?id=support-a")).text()
    assert text.count('<details class="entry"') == 10 and "page 1 of 8" in text
    assert "opened from the store in" in text
    last = await (await client.get("/run?id=support-a&page=99")).text()
    assert "page 8 of 8" in last and last.count('<details class="entry"') == 6
    wrong = await (await client.get("/run?id=support-a&failure=wrong_tool")).text()
    assert 0 < wrong.count('<details class="entry"') < 10


async def test_the_case_page_reads_the_raw_exchange_from_the_run_folder(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    text = await (
        await client.get("/case?run=support-a&id=lookup-not-search&target=recorded:demo-model")
    ).text()
    assert text.count('<div class="attempt') == 1
    assert "search_orders" in text and "wrong_tool" in text
    assert 'class="diff"' in text  # expected against actual, from the suite's scorer
    assert "The name and the date" in text  # the contract's reason, from the suite


async def test_a_run_folder_gone_leaves_the_figures_and_says_where_the_exchange_was(
    store_url: str, tmp_path: Path
) -> None:
    runs = make_runs(tmp_path)
    make_store(runs, store_url)
    shutil.rmtree(runs / "support-b")
    app = make_app(StoreSource(store_url, TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        run = await (await c.get("/run?id=support-b")).text()
        assert "strict pass" in run
        case = await c.get("/case?run=support-b&id=lookup-exact-id&target=recorded:demo-model")
        text = await case.text()
        assert case.status == 200 and "the raw exchange is not found at" in text
        assert "support-b/records.jsonl:" in text and "Traceback" not in text


async def test_the_diff_equals_the_gates_comparison(
    client: TestClient,  # type: ignore[type-arg]
    runs_dir: Path,
) -> None:
    text = await (await client.get("/diff?a=support-a&b=support-b")).text()
    a, b = (load_run(runs_dir / r, trust=TRUST) for r in ("support-a", "support-b"))
    comp = compare_runs(a, b)[0]
    assert comp.newly_failing or comp.newly_fixed
    assert f"Newly failing ({len(comp.newly_failing)})" in text
    assert f"Newly fixed ({len(comp.newly_fixed)})" in text
    strict = next(m for m in comp.metrics if m.metric == "strict_pass")
    assert strict.test is not None and strict.delta is not None
    row = re.search(r"<tr><td>strict pass</td>(.*?)</tr>", text)
    assert row is not None
    assert f"{strict.test.p_value:.3f}" in row[1] and f"{100 * strict.delta:+.1f}" in row[1]
    for case in comp.newly_failing:
        assert re.search(rf'<tr class="newly-failing"><td class="mono">{re.escape(case)}<', text)
    flaky = (await (await client.get("/diff?a=support-a&b=support-c")).text())
    c = load_run(runs_dir / "support-c", trust=TRUST).summaries["recorded:demo-model"].stability
    assert c is not None and f"Flaky in either ({len(c.flaky)})" in flaky


async def test_trends_come_from_the_stores_history(client: TestClient) -> None:  # type: ignore[type-arg]
    text = await (await client.get("/trends?suite=support&target=recorded:demo-model")).text()
    assert "The last 3 runs" in text
    strict = text.split("<h3>strict pass</h3>")[1].split("</section>")[0]
    assert strict.count("<circle") == 3 and "77.3% (58/75)" in strict
    two = await (await client.get("/trends?suite=support&target=recorded:demo-model&n=2")).text()
    assert "The last 2 runs" in two


async def test_a_run_stored_again_is_reopened(store_url: str, tmp_path: Path) -> None:
    import json

    runs = make_runs(tmp_path)
    make_store(runs, store_url)
    source = StoreSource(store_url, TRUST)
    async with TestClient(TestServer(make_app(source), host="127.0.0.1")) as c:
        assert "(58/75)" in await (await c.get("/run?id=support-a")).text()
        path = runs / "support-a" / "records.jsonl"
        lines = path.read_text().splitlines()
        at = next(i for i, x in enumerate(lines) if '"lookup-not-search"' in x)
        fixed = json.loads(lines[at])
        fixed["response"]["tool_calls"][0] = {
            "name": "lookup_order", "raw_arguments": '{"order_id": "ORD-377140"}'
        }
        lines[at] = json.dumps(fixed)  # rewritten in place: a later record may not replace it
        path.write_text("\n".join(lines) + "\n")
        with open_store(store_url) as store:
            store.import_run(runs / "support-a", trust=TRUST)
        assert "(59/75)" in await (await c.get("/run?id=support-a")).text()


def test_view_refuses_a_store_that_is_not_there(tmp_path: Path) -> None:
    done = toolproof("view", "--store", str(tmp_path / "none.db"), timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no history store at" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "none.db").exists()


def test_after_run_the_viewer_shows_that_run(tmp_path: Path) -> None:
    """README command 1 with the scripted model: the run is in the store the viewer reads."""
    db = tmp_path / "h.db"
    done = toolproof(
        "run", str(SUPPORT), "--allow-code", "-q", "--model", f"scripted:{SUPPORT / 'script.yaml'}",
        "--no-cache", "-o", str(tmp_path / "runs" / "demo"), "--store", str(db), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    source = StoreSource(str(db), TRUST)
    listed = source.runs(limit=10, offset=0)
    assert [r.run_id for r in listed.items] == ["demo"]
    run = source.open("demo")
    graded = load_run(tmp_path / "runs" / "demo", trust=TRUST)
    assert [_row(e) for e in run.view.entries] == [
        _row(e) for e in run_view(graded, details=False).entries
    ]
    total, attempts = source.attempts(
        run, run.view.entries[0].case_id, run.view.entries[0].target, offset=0, limit=20
    )
    assert total == 1 and attempts[0].request  # the raw request, from the run folder


async def test_a_record_whose_attempt_is_not_an_integer_is_a_located_error(
    store_url: str, tmp_path: Path
) -> None:
    """A run folder's line saying `"attempt": 1e999` (a float past any integer) where the
    store says an attempt is: the case page names where the exchange was, never a 500."""
    import json

    runs = make_runs(tmp_path)
    make_store(runs, store_url)
    path = runs / "support-b" / "records.jsonl"
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])  # the last line: every stored offset stays where it was
    lines[-1] = re.sub(r'"attempt": *\d+', '"attempt": 1e999', lines[-1])
    assert "1e999" in lines[-1]
    path.write_text("\n".join(lines) + "\n")
    app = make_app(StoreSource(store_url, TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        case = await c.get(
            "/case", params={"run": "support-b", "id": last["case_id"], "target": last["target"]}
        )
        text = await case.text()
        assert case.status == 200, text
        assert "the raw exchange is not found at" in text and "Traceback" not in text
        assert f"support-b/records.jsonl:{len(lines)}" in text


async def test_a_record_too_deep_to_show_is_a_located_error(
    store_url: str, tmp_path: Path
) -> None:
    """A run folder's line whose answer's arguments nest 300 deep (read, but past what can
    be shown): the case page names where the exchange was, never a 500."""
    import json

    runs = make_runs(tmp_path)
    make_store(runs, store_url)
    path = runs / "support-b" / "records.jsonl"
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])  # the last line: every stored offset stays where it was
    last["response"] = {"tool_calls": [{"name": "lookup_order", "arguments": {"deep": 0}}]}
    lines[-1] = json.dumps(last).replace('"deep": 0', '"deep": ' + "[" * 300 + "]" * 300)
    path.write_text("\n".join(lines) + "\n")
    app = make_app(StoreSource(store_url, TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        case = await c.get(
            "/case", params={"run": "support-b", "id": last["case_id"], "target": last["target"]}
        )
        text = await case.text()
        assert case.status == 200, text
        assert "Traceback" not in text and "the raw exchange cannot be shown" in text
        assert f"support-b/records.jsonl:{len(lines)}" in text


def test_a_stored_comparison_names_the_cases_the_gates_comparison_names(
    stored: str, runs_dir: Path
) -> None:
    source = StoreSource(stored, TRUST)
    seen = 0
    for x, y in (
        ("support-a", "support-b"),
        ("support-a", "support-c"),
        ("support-b", "support-c"),
    ):
        _, compared = stored_comparisons(source.open(x), source.open(y))
        gated = compare_runs(*(load_run(runs_dir / r, trust=TRUST) for r in (x, y)))
        for (c, _sa, _sb), g in zip(compared, gated, strict=True):
            got = (c.newly_failing, c.newly_fixed, c.new_critical_failures)
            assert got == (g.newly_failing, g.newly_fixed, g.new_critical_failures)
            seen += len(g.new_critical_failures) + len(g.newly_failing)
    assert seen  # (the runs differ: there is something to name)

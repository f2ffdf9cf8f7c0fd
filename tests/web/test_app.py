"""The viewer over HTTP, without a browser: routes, errors, headers, read-only."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.web.runs import TRUST, make_runs
from toolproof.web import FolderSource, make_app
from toolproof.web._app import CACHE


@pytest.fixture
async def client(runs_dir: Path) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    app = make_app(FolderSource(runs_dir, trust=TRUST), page_size=10)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


async def test_pages_answer_with_security_headers(client: TestClient) -> None:  # type: ignore[type-arg]
    for path in ("/", "/run?id=support-a", "/run?id=support-a&page=3&failure=wrong_tool",
                 "/case?run=support-a&id=lookup-exact-id&target=recorded:demo-model",
                 "/diff?a=support-a&b=support-b",
                 "/trends?suite=support&target=recorded:demo-model"):
        resp = await client.get(path)
        assert resp.status == 200, path
        csp = resp.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.content_type == "text/html"


async def test_unknown_things_are_404(client: TestClient) -> None:  # type: ignore[type-arg]
    for path in ("/run?id=nope", "/run?id=../support-a", "/run?id=.hidden",
                 "/case?run=support-a&id=nope&target=recorded:demo-model",
                 "/diff?a=support-a&b=nope", "/trends?suite=nope&target=x", "/missing"):
        resp = await client.get(path)
        assert resp.status == 404, path
        assert "default-src 'none'" in resp.headers["Content-Security-Policy"]


async def test_the_viewer_is_read_only(client: TestClient) -> None:  # type: ignore[type-arg]
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        resp = await client.request(method, "/run?id=support-a")
        assert resp.status == 405, method
        assert resp.headers["Allow"] == "GET, HEAD"


async def test_a_broken_run_is_shown_as_an_error_not_a_crash(tmp_path: Path) -> None:
    runs = make_runs(tmp_path)
    shutil.copytree(runs / "support-a", runs / "broken")
    with (runs / "broken" / "records.jsonl").open("a") as fh:
        fh.write("{not json\n")
    app = make_app(FolderSource(runs, trust=TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        resp = await c.get("/run?id=broken")
        assert resp.status == 422
        text = await resp.text()
        assert "records.jsonl:77" in text and "Traceback" not in text
        listing = await (await c.get("/")).text()
        assert "cannot open:" in listing and "records.jsonl:77" in listing


async def test_a_changed_run_is_reopened(tmp_path: Path) -> None:
    runs = make_runs(tmp_path)
    app = make_app(FolderSource(runs, trust=TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
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
        assert "(59/75)" in await (await c.get("/run?id=support-a")).text()


async def test_run_page_paginates_on_the_server(client: TestClient) -> None:  # type: ignore[type-arg]
    text = await (await client.get("/run?id=support-a")).text()
    assert text.count('<details class="entry"') == 10
    assert "page 1 of 8" in text
    last = await (await client.get("/run?id=support-a&page=99")).text()
    assert "page 8 of 8" in last and last.count('<details class="entry"') == 6


async def test_warm_opens_every_run(runs_dir: Path) -> None:
    app = make_app(FolderSource(runs_dir, trust=TRUST))
    cache = app[CACHE]
    assert sorted(cache.warm()) == ["support-a", "support-b", "support-c", "xss"]
    for info in cache.source.runs():
        assert cache.peek(info) is not None


async def test_a_folder_of_records_without_a_manifest_is_refused(tmp_path: Path) -> None:
    from tests.web.runs import SUPPORT

    (tmp_path / "bare").mkdir()
    shutil.copy(SUPPORT / "records.jsonl", tmp_path / "bare" / "records.jsonl")
    for source in (
        FolderSource(tmp_path, trust=TRUST),
        FolderSource(tmp_path, suite=SUPPORT, trust=TRUST),
    ):
        async with TestClient(TestServer(make_app(source), host="127.0.0.1")) as c:
            resp = await c.get("/run?id=bare")
            assert resp.status == 422
            assert "manifest.json is missing" in await resp.text()


class _Slow(FolderSource):
    """Run folders whose opening takes a while (a large run)."""

    def __init__(self, root: Path, release: Any) -> None:
        super().__init__(root, trust=TRUST)
        self.release = release

    def evaluation(self, run_id: str) -> Any:
        self.release.wait(10)
        return super().evaluation(run_id)


async def test_a_run_still_opening_answers_at_once_with_a_page_that_reloads(
    runs_dir: Path,
) -> None:
    import asyncio
    import threading

    release = threading.Event()
    app = make_app(_Slow(runs_dir, release), open_wait=0.05)
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        first = await c.get("/run?id=support-a")
        assert first.status == 202
        text = await first.text()
        assert '<meta http-equiv="refresh" content="2">' in text and "Opening support-a" in text
        again = await c.get("/run?id=support-a")  # still opening: no second opening starts
        assert again.status == 202
        release.set()
        for _ in range(100):
            resp = await c.get("/run?id=support-a")
            if resp.status == 200:
                break
            await asyncio.sleep(0.1)
        assert resp.status == 200
        assert "77.3% (58/75)" in await resp.text()

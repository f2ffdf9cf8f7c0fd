"""Every viewer page, over run folders and over the store, renders what it rendered before
the two route sets became one.

``data/pages.json`` holds each page's status and HTML, recorded from the viewer
as it was (one set of routes for run folders, one for the store). The parts
that must differ from machine to machine are replaced before comparing: the
temporary folder the runs are made in, and how long opening a run took; the
inline style and script every page carries are kept as their hashes in the
page's Content-Security-Policy. Run
this file as a module to record the table again::

    python -m tests.web.test_page_parity --write
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from tests.web.runs import TRUST, make_runs, make_store
from toolproof.web import FolderSource, StoreSource, make_app

GOLDEN = Path(__file__).parent / "data" / "pages.json"

TARGET = "recorded:demo-model"
#: The pages asked for, in this order (a folder's runs list shows the runs opened so far).
PATHS = (
    "/",
    "/run?id=support-a",
    "/",
    "/run?id=support-a&page=2",
    "/run?id=support-a&failure=wrong_tool&status=fail",
    "/run?id=support-c&tag=dates",
    "/run?id=xss",
    f"/case?run=support-a&id=lookup-exact-id&target={TARGET}",
    f"/case?run=support-a&id=lookup-not-search&target={TARGET}",
    f"/case?run=support-c&id=lookup-exact-id&target={TARGET}",
    "/case?run=xss&id=%3Cimg%2Fsrc%3Dx%2Fonerror%3Dalert(%27case%27)%3E"
    "&target=evil%3A%3Cscript%3Ealert(%27target%27)%3C%2Fscript%3E",
    "/diff?a=support-a&b=support-b",
    "/diff?a=support-a&b=support-c",
    "/diff?a=support-b&b=support-a&page=2",
    "/diff?a=support-a&b=xss",
    f"/trends?suite=support&target={TARGET}",
    f"/trends?suite=support&target={TARGET}&n=2",
    "/",
    "/?page=2",
    "/run?id=nope",
    "/run?id=",
    "/case?run=support-a&id=nope&target=x",
    "/diff?a=support-a&b=nope",
    "/trends?suite=nope&target=x",
    "/missing",
)


def _normalised(html: str, root: Path) -> str:
    html = html.replace(str(root), "ROOT")
    html = re.sub(r" in \d+\.\d\d s</p>", " in N s</p>", html)
    # the inline style and script, the same on every page, are pinned by their hashes in
    # the page's Content-Security-Policy, which is kept
    return re.sub(r"<(style|script)>.*?</\1>", r"<\1>…</\1>", html, flags=re.S)


async def _pages(kind: str, root: Path) -> dict[str, Any]:
    runs = root / "runs"
    if kind == "store":
        source: Any = StoreSource(str(root / "history.db"), TRUST)
    else:
        source = FolderSource(runs, trust=TRUST)
    out: dict[str, Any] = {}
    async with TestClient(TestServer(make_app(source, page_size=3), host="127.0.0.1")) as c:
        for i, path in enumerate(PATHS):
            resp = await c.get(path)
            html = _normalised(await resp.text(), root)
            out[f"{kind} {i:02d} {path}"] = {"status": resp.status, "html": html}
        resp = await c.get("/", headers={"Host": "attacker.example"})
        out[f"{kind} host check"] = {"status": resp.status, "html": await resp.text()}
    return out


def _record_all(root: Path) -> dict[str, Any]:
    make_runs(root)
    make_store(root / "runs", str(root / "history.db"))
    table: dict[str, Any] = {}
    for kind in ("folders", "store"):
        table.update(asyncio.run(_pages(kind, root)))
    return table


def test_every_page_renders_as_before(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    table = _record_all(tmp_path)
    assert list(table) == list(golden)
    for key, page in table.items():
        assert page["status"] == golden[key]["status"], key
        assert page["html"] == golden[key]["html"], key


def test_the_pages_compared_are_real_pages(tmp_path: Path) -> None:
    """Not a table of error pages: runs, cases, diffs and trends render with their content."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for kind in ("folders", "store"):
        ok = [k for k, p in golden.items() if k.startswith(kind) and p["status"] == 200]
        assert len(ok) >= 18, kind
        assert golden[f"{kind} host check"]["status"] == 421
        case = golden[f"{kind} 10 {PATHS[10]}"]["html"]
        assert "&lt;img/src=x/onerror=alert(&#39;case&#39;)&gt;" in case
        assert "<img/src=x" not in case


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.web.test_page_parity --write")
    with tempfile.TemporaryDirectory() as tmp:
        result = _record_all(Path(tmp))
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(result)} pages to {GOLDEN}")

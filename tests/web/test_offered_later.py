"""The viewer (``toolproof view``) shows what each user turn offered the agent (``offer``),
escaped as all recorded text is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.late_tools import late_tools_run
from toolproof.store import open_store
from toolproof.trust import Trust
from toolproof.web import FolderSource, StoreSource, make_app

HOSTILE = ["<img src=x onerror=alert('offer')>", "[bold]b[/bold]", "esc\x1b[2Jx"]


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """runs/late (the example's run) and runs/hostile (its records naming hostile tools
    in the second user turn's ``offered``)."""
    runs = tmp_path / "runs"
    late_tools_run(runs / "late")
    shutil.copytree(runs / "late", runs / "hostile")
    path = runs / "hostile" / "records.jsonl"
    lines = []
    for line in path.read_text("utf-8").splitlines():
        data = json.loads(line)
        data["user_turns"][1]["offered"] = HOSTILE
        lines.append(json.dumps(data))
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return runs


async def _case_page(
    runs: Path, run: str, case: str, store: Path | None = None, status: int = 200
) -> str:
    source = StoreSource(str(store), Trust()) if store else FolderSource(runs)
    app = make_app(source, page_size=10)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        resp = await client.get(f"/case?run={run}&id={case}&target=scripted:agent.yaml")
        assert resp.status == status, await resp.text()
        return await resp.text()


async def test_the_case_page_shows_what_each_user_turn_offered(runs: Path) -> None:
    said = "I have updated some more functions you can choose from. What about now?</pre>"
    offer = '<div class="note small mut">offers the agent: sort_file (user turn 2)</div>'
    for case in ("waits-for-the-tool", "calls-it-too-soon"):
        page = await _case_page(runs, "late", case)
        assert page.count(said + offer) == 1, case
    page = await _case_page(runs, "late", "calls-it-too-soon")
    assert "called sort_file before it was offered (offered at user turn 2)" in page


async def test_hostile_offered_names_are_refused_with_an_escaped_message(runs: Path) -> None:
    # offers the requests do not show are refused where records are read; the page that
    # says so names the first of them, escaped
    page = await _case_page(runs, "hostile", "calls-it-too-soon", status=422)
    assert "<img src=x" not in page and "\x1b" not in page
    assert "user_turns[1].offered" in page
    assert "&lt;img src=x onerror=alert(&#39;offer&#39;)&gt;" in page


async def test_the_viewer_of_the_history_store_shows_it_too(runs: Path, tmp_path: Path) -> None:
    store = tmp_path / "history.db"
    with open_store(str(store)) as history:
        history.import_run(runs / "late", trust=Trust())
    page = await _case_page(runs, "1", "calls-it-too-soon", store=store)
    assert page.count("offers the agent: sort_file (user turn 2)") == 1
    assert "called sort_file before it was offered (offered at user turn 2)" in page

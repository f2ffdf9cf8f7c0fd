"""Fixtures of the report and viewer tests: run folders, a served viewer, a browser.

Browser tests drive the system's headless Chromium (Debian ``chromium``) through
Playwright; they skip, saying why, when either is missing, unless
TOOLPROOF_REQUIRE_BROWSER=1 (set by CI), where a missing browser fails them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.store.conftest import pg_server, pg_url, store_url  # noqa: F401 (fixtures)
from tests.web.runs import TRUST, make_runs, make_store

CHROMIUM = os.environ.get("TOOLPROOF_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="session")
def store_db(runs_dir: Path) -> Path:
    """A SQLite history store holding the runs of ``runs_dir`` (support-a gated)."""
    path = runs_dir.parent / "history.db"
    make_store(runs_dir, str(path))
    return path


class Served:
    """The viewer serving the store, or a folder of runs, on 127.0.0.1, in a thread of its own."""

    def __init__(self, runs: Path, page_size: int = 50, store: Path | None = None) -> None:
        from aiohttp import web

        from toolproof.web import FolderSource, StoreSource, make_app

        source = StoreSource(str(store), TRUST) if store else FolderSource(runs, trust=TRUST)
        self.store = store is not None
        self.app = make_app(source, page_size=page_size)
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(self.app, access_log=None)
        started = threading.Event()
        self.url = ""

        async def start() -> None:
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
            started.set()

        def main() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(start())
            self.loop.run_forever()

        self.thread = threading.Thread(target=main, daemon=True)
        self.thread.start()
        if not started.wait(30):
            raise RuntimeError("the viewer did not start")

    def close(self) -> None:
        fut = asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop)
        fut.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.fixture(scope="session", params=["store", "folders"])
def viewer(request: pytest.FixtureRequest, runs_dir: Path) -> Iterator[Served]:
    """`toolproof view` (the store), then `toolproof view --runs` (the run folders)."""
    store = request.getfixturevalue("store_db") if request.param == "store" else None
    served = Served(runs_dir, page_size=20, store=store)
    yield served
    served.close()


def _missing_browser() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TOOLPROOF_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One browser per module: Playwright's loop stops with it, so asyncio tests after it run."""
    missing = _missing_browser()
    if missing is not None:
        if os.environ.get("TOOLPROOF_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Watched:
    """A page that records every dialog (a script that ran) and every console error."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def page(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    watched = Watched(context.new_page())
    yield watched
    context.close()


@pytest.fixture(scope="session")
def shots() -> Path | None:
    """Where to save screenshots for the README (TOOLPROOF_SCREENSHOTS), or None."""
    where = os.environ.get("TOOLPROOF_SCREENSHOTS")
    return Path(where) if where else None

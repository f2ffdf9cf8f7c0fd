"""The viewer's HTTP side: aiohttp, GET only, server-side templates with autoescaping."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from toolproof.errors import UserError
from toolproof.report import render_page
from toolproof.report._html import assets, environment
from toolproof.web._pages import FILTERS, RunDiff, filter_entries, paginate, run_diff
from toolproof.web._run_index import RunCache
from toolproof.web._source import FolderSource, RunSource
from toolproof.web._stored import StoreSource
from toolproof.web._views import FolderPages, Opening, PageError, Pages, StorePages, blocking

if TYPE_CHECKING:
    from toolproof.trust import Trust

PACKAGES = ("toolproof.web",)
TEMPLATES = (
    "runs.html",
    "run.html",
    "case.html",
    "diff.html",
    "trends.html",
    "opening.html",
    "error.html",
)
PAGES: web.AppKey[Pages] = web.AppKey("pages", Pages)
CACHE: web.AppKey[RunCache] = web.AppKey("cache", RunCache)
PAGE_SIZE: web.AppKey[int] = web.AppKey("page_size", int)
DIFFS: web.AppKey[dict[Any, RunDiff]] = web.AppKey("diffs", dict)
#: Host names served besides the loopback names and the bound address (--host).
EXTRA_HOSTS: web.AppKey[tuple[str, ...]] = web.AppKey("extra_hosts", tuple)
KEEP_DIFFS = 16
#: Seconds `toolproof view` lets a page wait for a run being opened.
OPENING_WAIT = 0.3
DIFF_ROWS_PER_PAGE = 200


def _page(template: str, status: int = 200, **context: Any) -> web.Response:
    text = render_page(template, PACKAGES, **context)
    return web.Response(text=text, content_type="text/html", charset="utf-8", status=status)


def _error(status: int, message: str) -> web.Response:
    return _page("error.html", status=status, status_code=status, message=message)


def _int(request: web.Request, name: str, default: int) -> int:
    try:
        return int(request.query.get(name, default))
    except ValueError:
        return default


async def runs_list(request: web.Request) -> web.Response:
    pages = request.app[PAGES]
    listing = await pages.runs(_int(request, "page", 1), request.app[PAGE_SIZE])
    return _page("runs.html", listing=listing)


async def run_page(request: web.Request) -> web.Response:
    pages = request.app[PAGES]
    run = await pages.open(request.query.get("id", ""))
    params = {k: request.query.get(k, "") for k in FILTERS}
    chosen = filter_entries(run.view, params)
    page = paginate(chosen, _int(request, "page", 1), request.app[PAGE_SIZE])
    page = replace(page, items=await pages.texts(run, page.items))
    return _page(
        "run.html", index=run, view=run.view, page=page, params=params, opened=pages.opened,
        note=pages.note(run),
    )  # fmt: skip


async def case_page(request: web.Request) -> web.Response:
    pages = request.app[PAGES]
    run = await pages.open(request.query.get("run", ""))
    case_id, target = request.query.get("id", ""), request.query.get("target", "")
    shown = await pages.case(run, case_id, target, _int(request, "page", 1))
    return _page(
        "case.html", index=run, row=shown.row, shown=shown.shown, page=shown.page,
        note=pages.note(run),
    )  # fmt: skip


async def diff_page(request: web.Request) -> web.Response:
    """The diff of two runs, made once and kept among the last few."""
    pages = request.app[PAGES]
    a = await pages.open(request.query.get("a", ""))
    b = await pages.open(request.query.get("b", ""))
    key = (*pages.version(a), *pages.version(b))
    diffs = request.app[DIFFS]
    if key not in diffs:
        try:
            made = await blocking(lambda: run_diff(a, b, *pages.compare(a, b)))
        except UserError as exc:
            return _error(422, str(exc))
        while len(diffs) >= KEEP_DIFFS:
            diffs.pop(next(iter(diffs)))
        diffs[key] = made
    diff = diffs[key]
    rows = {
        t.comparison.target: paginate(t.rows, _int(request, "page", 1), DIFF_ROWS_PER_PAGE)
        for t in diff.targets
    }
    return _page("diff.html", diff=diff, pages=rows, stored=pages.stored)


async def trends_page(request: web.Request) -> web.Response:
    suite, target = request.query.get("suite", ""), request.query.get("target", "")
    n = max(2, min(_int(request, "n", 30), 500))
    shown = await request.app[PAGES].trend(suite, target, n)
    if shown is None:
        return _error(404, f"no runs of suite '{suite}' with target '{target}'")
    return _page("trends.html", trend=shown, n=n)


#: Every page, over either source.
ROUTES = (
    ("/", runs_list),
    ("/run", run_page),
    ("/case", case_page),
    ("/diff", diff_page),
    ("/trends", trends_page),
)


#: The names a browser on this machine uses for a loopback address.
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def allowed_hosts(request: web.Request) -> set[str]:
    """The ``Host`` values served: the loopback names, and the bound address, with its port.

    Anything else is a page of another site whose name was made to resolve to
    this machine (DNS rebinding), reading the viewer from the user's browser.
    """
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if not sockname:
        return set()
    address, port = str(sockname[0]), int(sockname[1])
    names = {*_LOOPBACK_NAMES, f"[{address}]" if ":" in address else address}
    names |= {str(h) for h in request.app.get(EXTRA_HOSTS, ())}
    out = {f"{name}:{port}" for name in names}
    if port == 80:
        out |= names
    return {h.lower() for h in out}


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse
    host = request.headers.get("Host", "").strip().lower()
    if host not in allowed_hosts(request):
        response = _error(421, "this viewer answers only requests addressed to its own address")
    else:
        try:
            response = await handler(request)
        except PageError as exc:
            response = _error(exc.status, exc.message)
        except Opening as exc:
            response = _page("opening.html", status=202, run_id=exc.run_id)
        except web.HTTPException as exc:  # no such route, or not a GET
            if exc.status < 400:
                raise
            response = _error(exc.status, exc.reason)
            if exc.status == 405:
                response.headers["Allow"] = "GET, HEAD"
    response.headers["Content-Security-Policy"] = assets()[2] + "; frame-ancestors 'none'"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    return response


def make_app(
    source: RunSource | StoreSource,
    *,
    page_size: int = 50,
    open_wait: float = 0,
    freeze_gc: bool = False,
) -> web.Application:
    """The viewer as an aiohttp application (GET routes only: it changes nothing).

    ``source``: a :class:`StoreSource` (the history store: nothing is graded to
    open a run) or a :class:`RunSource` such as :class:`FolderSource` (run
    folders, each graded once when first opened).
    ``open_wait``: seconds a page waits for a run being opened (graded) before it
    answers with a page that reloads itself; 0 waits as long as it takes.
    ``freeze_gc``: see :class:`RunCache` (``toolproof view`` sets it).
    """
    env = environment(PACKAGES)
    for name in TEMPLATES:  # compiled now, not on a first request
        env.get_template(name)
    app = web.Application(middlewares=[_headers])
    app[PAGE_SIZE] = page_size
    app[DIFFS] = {}
    if isinstance(source, StoreSource):
        app[PAGES] = StorePages(source)
    else:
        app[CACHE] = RunCache(source, freeze_gc=freeze_gc)
        app[PAGES] = FolderPages(app[CACHE], open_wait)
    for path, route in ROUTES:
        app.router.add_get(path, route)
    return app


def serve(
    runs: str | Path | None = None,
    *,
    store: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    page_size: int = 50,
    suite: str | Path | None = None,
    warm: bool = True,
    trust: Trust | None = None,
) -> None:
    """Serve the history store (``store``: as ``--store`` takes it), or the run
    folders under ``runs`` when given, until interrupted; prints the URL."""
    if runs is None:
        source = StoreSource(store_location(store), trust, suites_in_background=True)
        source.store()  # a store that cannot be opened is one error line, before serving
        app = make_app(source, page_size=page_size)
        where = f"the history store {source.store().location}"
        if warm:
            threading.Thread(target=lambda: warm_store(source), daemon=True).start()
    else:
        app = make_app(
            FolderSource(runs, suite, trust),
            page_size=page_size,
            open_wait=OPENING_WAIT,
            freeze_gc=True,
        )
        where = f"the run folders under {runs}"
        if warm:
            cache = app[CACHE]
            threading.Thread(target=lambda: list(cache.warm()), daemon=True).start()

    app[EXTRA_HOSTS] = (f"[{host}]" if ":" in host else host,)

    def ready(url: str) -> None:
        print(f"toolproof view: {url}  ({where}; Ctrl-C to stop)", flush=True)

    asyncio.run(_serve(app, host, port, ready))


def warm_store(source: StoreSource) -> None:
    """What a server does once it listens: import the statistics library the diff's
    McNemar test uses (seconds, once). A run's suite is loaded only when a case page
    needs it for expected-against-actual diffs."""
    import scipy.stats  # noqa: F401


def store_location(store: str | None) -> str:
    """Where the store to view is; an error when it is off or (SQLite) not there:
    the viewer reads, it does not create a store."""
    from toolproof.store import resolve_location

    where = resolve_location(store)
    if where is None:
        raise UserError(
            "the history store is off (--store off or TOOLPROOF_STORE=off): "
            "name run folders to view with --runs DIR"
        )
    if not where.startswith(("postgresql://", "postgres://")):
        path = Path(where.removeprefix("sqlite:///"))
        if not path.is_file():
            raise UserError(
                f"no history store at {path}: `toolproof run` writes one, "
                "`toolproof history import runs/` builds it from run folders, "
                "and --runs DIR views run folders without it"
            )
    return where


async def _serve(app: web.Application, host: str, port: int, ready: Callable[[str], None]) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    shown = f"[{host}]" if ":" in host else host
    ready(f"http://{shown}:{bound}/")
    try:
        await asyncio.Event().wait()
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    finally:
        await runner.cleanup()
        print("stopped", file=sys.stderr)

"""The viewer's HTTP side: aiohttp, GET only, server-side templates with autoescaping."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from toolproof.errors import UserError
from toolproof.report import render_page
from toolproof.report._html import assets, environment
from toolproof.report._htmlview import attempt_view, entry
from toolproof.web._index import RunCache, RunIndex
from toolproof.web._pages import FILTERS, RunDiff, filter_entries, paginate, run_diff, trend
from toolproof.web._source import FolderSource, RunSource

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
CACHE: web.AppKey[RunCache] = web.AppKey("cache", RunCache)
PAGE_SIZE: web.AppKey[int] = web.AppKey("page_size", int)
OPEN_WAIT: web.AppKey[float] = web.AppKey("open_wait", float)
DIFFS: web.AppKey[dict[Any, RunDiff]] = web.AppKey("diffs", dict)
KEEP_DIFFS = 16
#: Seconds `toolproof view` lets a page wait for a run being opened.
OPENING_WAIT = 0.3
ATTEMPTS_PER_PAGE = 20
DIFF_ROWS_PER_PAGE = 200
T = TypeVar("T")


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


async def _blocking(fn: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(None, fn)


async def _open(request: web.Request, run_id: str) -> RunIndex | web.Response:
    """The opened run; or, while a large run is still being graded, a page that reloads."""
    cache = request.app[CACHE]
    wait = request.app[OPEN_WAIT]
    if wait > 0 and cache.opening(run_id):
        return _page("opening.html", status=202, run_id=run_id)
    future = asyncio.get_running_loop().run_in_executor(None, lambda: cache.get(run_id))
    future.add_done_callback(lambda f: f.cancelled() or f.exception())
    try:
        if wait > 0:
            return await asyncio.wait_for(asyncio.shield(future), wait)
        return await future
    except TimeoutError:
        return _page("opening.html", status=202, run_id=run_id)
    except KeyError:
        return _error(404, f"no run '{run_id}'")
    except UserError as exc:
        return _error(422, str(exc))


async def runs_list(request: web.Request) -> web.Response:
    cache = request.app[CACHE]
    infos = await _blocking(cache.source.runs)
    rows = [(info, cache.peek(info)) for info in infos]
    series = sorted(
        {
            (i.suite, t)
            for i, idx in rows
            if not isinstance(idx, str | None)
            for t in idx.light.targets
        }
    )
    return _page("runs.html", rows=rows, series=series)


async def run_page(request: web.Request) -> web.Response:
    index = await _open(request, request.query.get("id", ""))
    if isinstance(index, web.Response):
        return index
    params = {k: request.query.get(k, "") for k in FILTERS}
    chosen = filter_entries(index.view, params)
    page = paginate(chosen, _int(request, "page", 1), request.app[PAGE_SIZE])
    return _page("run.html", index=index, view=index.view, page=page, params=params)


async def case_page(request: web.Request) -> web.Response:
    index = await _open(request, request.query.get("run", ""))
    if isinstance(index, web.Response):
        return index
    case_id, target = request.query.get("id", ""), request.query.get("target", "")
    case = index.cases.get(case_id)
    row = next((e for e in index.view.entries if e.case_id == case_id and e.target == target), None)
    if case is None or row is None:
        return _error(404, f"no case '{case_id}' for target '{target}' in this run")
    keys = sorted(
        (k for k in index.offsets if k[0] == case_id and k[1] == target), key=lambda k: k[2]
    )
    page = paginate(keys, _int(request, "page", 1), ATTEMPTS_PER_PAGE)

    def load() -> Any:
        records = [index.record(k) for k in page.items]
        found = [r for r in records if r is not None]
        verdicts = [index.verdicts.get((r.case_id, target, r.attempt)) for r in found]
        shown = entry(case, target, found, verdicts, row.pass_hat_k, details=False)
        shown.details = [
            attempt_view(r, v, diff=index.light.diff) for r, v in zip(found, verdicts, strict=True)
        ]
        return shown

    shown = await _blocking(load)
    return _page("case.html", index=index, row=row, shown=shown, page=page)


async def diff_page(request: web.Request) -> web.Response:
    a_id, b_id = request.query.get("a", ""), request.query.get("b", "")
    a = await _open(request, a_id)
    if isinstance(a, web.Response):
        return a
    b = await _open(request, b_id)
    if isinstance(b, web.Response):
        return b
    diffs = request.app[DIFFS]
    key = (a.info.run_id, a.info.version, b.info.run_id, b.info.version)
    if key not in diffs:
        try:
            made = await _blocking(lambda: run_diff(a, b))
        except UserError as exc:
            return _error(422, str(exc))
        while len(diffs) >= KEEP_DIFFS:
            diffs.pop(next(iter(diffs)))
        diffs[key] = made
    diff = diffs[key]
    pages = {
        t.comparison.target: paginate(t.rows, _int(request, "page", 1), DIFF_ROWS_PER_PAGE)
        for t in diff.targets
    }
    return _page("diff.html", diff=diff, pages=pages)


async def trends_page(request: web.Request) -> web.Response:
    suite, target = request.query.get("suite", ""), request.query.get("target", "")
    n = max(2, min(_int(request, "n", 30), 500))
    cache = request.app[CACHE]

    def load() -> list[RunIndex]:
        out = []
        for info in cache.source.runs():
            if info.suite != suite or (info.targets and target not in info.targets):
                continue
            try:
                idx = cache.get(info.run_id)
            except (KeyError, UserError):
                continue
            if target in idx.light.targets:
                out.append(idx)
            if len(out) >= n:
                break
        return list(reversed(out))

    runs = await _blocking(load)
    if not runs:
        return _error(404, f"no runs of suite '{suite}' with target '{target}'")
    return _page("trends.html", trend=trend(runs, suite, target), n=n)


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse
    try:
        response = await handler(request)
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
    source: RunSource, *, page_size: int = 50, open_wait: float = 0, freeze_gc: bool = False
) -> web.Application:
    """The viewer as an aiohttp application (GET routes only: it changes nothing).

    ``open_wait``: seconds a page waits for a run being opened (graded) before it
    answers with a page that reloads itself; 0 waits as long as it takes.
    ``freeze_gc``: see :class:`RunCache` (``toolproof view`` sets it).
    """
    env = environment(PACKAGES)
    for name in TEMPLATES:  # compiled now, not on a first request
        env.get_template(name)
    app = web.Application(middlewares=[_headers])
    app[CACHE] = RunCache(source, freeze_gc=freeze_gc)
    app[PAGE_SIZE] = page_size
    app[OPEN_WAIT] = open_wait
    app[DIFFS] = {}
    app.router.add_get("/", runs_list)
    app.router.add_get("/run", run_page)
    app.router.add_get("/case", case_page)
    app.router.add_get("/diff", diff_page)
    app.router.add_get("/trends", trends_page)
    return app


def serve(
    runs: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    page_size: int = 50,
    suite: str | Path | None = None,
    warm: bool = True,
    trust: Trust | None = None,
) -> None:
    """Serve the run folders under ``runs`` until interrupted; prints the URL."""
    app = make_app(
        FolderSource(runs, suite, trust),
        page_size=page_size,
        open_wait=OPENING_WAIT,
        freeze_gc=True,
    )
    if warm:
        cache = app[CACHE]
        threading.Thread(target=lambda: list(cache.warm()), daemon=True).start()

    def ready(url: str) -> None:
        print(f"toolproof view: {url}  (runs from {runs}; Ctrl-C to stop)", flush=True)

    asyncio.run(_serve(app, host, port, ready))


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

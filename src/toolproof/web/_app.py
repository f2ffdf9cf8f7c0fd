"""The viewer's HTTP side: aiohttp, GET only, server-side templates with autoescaping."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from toolproof.errors import UserError
from toolproof.report import render_page
from toolproof.report._html import assets, environment
from toolproof.report._htmlview import attempt_view, entry
from toolproof.web._index import RunCache, RunIndex
from toolproof.web._pages import (
    FILTERS,
    Page,
    RunDiff,
    filter_entries,
    paginate,
    run_diff,
    stored_diff,
    stored_trend,
    trend,
)
from toolproof.web._source import FolderSource, RunSource
from toolproof.web._stored import StoredRun, StoreSource, metric_view

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
    "stored_runs.html",
)
CACHE: web.AppKey[RunCache] = web.AppKey("cache", RunCache)
STORE: web.AppKey[StoreSource] = web.AppKey("store", StoreSource)
PAGE_SIZE: web.AppKey[int] = web.AppKey("page_size", int)
OPEN_WAIT: web.AppKey[float] = web.AppKey("open_wait", float)
DIFFS: web.AppKey[dict[Any, RunDiff]] = web.AppKey("diffs", dict)
#: Host names served besides the loopback names and the bound address (--host).
EXTRA_HOSTS: web.AppKey[tuple[str, ...]] = web.AppKey("extra_hosts", tuple)
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
    return _page(
        "run.html", index=index, view=index.view, page=page, params=params, opened="",
        note=None,
    )  # fmt: skip


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
        said = [j for j in index.light.judgements if j.target == target and j.case_id == case_id]
        shown.details = [
            attempt_view(
                r,
                v,
                diff=index.light.diff,
                judgements=[j for j in said if j.attempt == r.attempt],
                case=case,
            )
            for r, v in zip(found, verdicts, strict=True)
        ]
        return shown

    shown = await _blocking(load)
    return _page("case.html", index=index, row=row, shown=shown, page=page, note=None)


async def diff_page(request: web.Request) -> web.Response:
    a_id, b_id = request.query.get("a", ""), request.query.get("b", "")
    a = await _open(request, a_id)
    if isinstance(a, web.Response):
        return a
    b = await _open(request, b_id)
    if isinstance(b, web.Response):
        return b
    key = (a.info.run_id, a.info.version, b.info.run_id, b.info.version)
    return await _diff_page(request, key, lambda: run_diff(a, b), stored=False)


async def _diff_page(
    request: web.Request, key: tuple[Any, ...], make: Callable[[], RunDiff], *, stored: bool
) -> web.Response:
    """The diff of two runs, made once and kept among the last few."""
    diffs = request.app[DIFFS]
    if key not in diffs:
        try:
            made = await _blocking(make)
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
    return _page("diff.html", diff=diff, pages=pages, stored=stored)


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


# -- the store ----------------------------------------------------------------


async def _stored(request: web.Request, ref: str) -> StoredRun | web.Response:
    source = request.app[STORE]
    try:
        return await _blocking(lambda: source.open(ref))
    except KeyError:
        return _error(404, f"no run '{ref}' in the store")
    except UserError as exc:
        return _error(422, str(exc))


async def stored_runs(request: web.Request) -> web.Response:
    source = request.app[STORE]
    size = request.app[PAGE_SIZE]
    number = max(1, _int(request, "page", 1))

    def load() -> tuple[Any, list[tuple[str, str]]]:
        return source.runs(limit=size, offset=(number - 1) * size), source.series()

    try:
        got, series = await _blocking(load)
    except UserError as exc:
        return _error(422, str(exc))
    pages = max(1, -(-got.total // size))
    page = Page(got.items, number, pages, got.total, size)
    return _page(
        "stored_runs.html",
        page=page,
        series=series,
        location=_shown_location(source.store().location),
        headline=lambda r, t: metric_view(r.headline.get(t)),
    )


def _shown_location(location: str) -> str:
    """A PostgreSQL store by its URL (without password), a SQLite store by its file name."""
    return location if "://" in location else Path(location).name


async def stored_run_page(request: web.Request) -> web.Response:
    run = await _stored(request, request.query.get("id", ""))
    if isinstance(run, web.Response):
        return run
    params = {k: request.query.get(k, "") for k in FILTERS}
    chosen = filter_entries(run.view, params)
    page = paginate(chosen, _int(request, "page", 1), request.app[PAGE_SIZE])
    source = request.app[STORE]
    page = replace(page, items=await _blocking(lambda: source.with_texts(run, page.items)))
    return _page(
        "run.html", index=run, view=run.view, page=page, params=params,
        opened="from the store", note=run.suite_note,
    )  # fmt: skip


async def stored_case_page(request: web.Request) -> web.Response:
    run = await _stored(request, request.query.get("run", ""))
    if isinstance(run, web.Response):
        return run
    case_id, target = request.query.get("id", ""), request.query.get("target", "")
    row = next((e for e in run.view.entries if e.case_id == case_id and e.target == target), None)
    if row is None:
        return _error(404, f"no case '{case_id}' for target '{target}' in this run")
    number = max(1, _int(request, "page", 1))
    pages = max(1, -(-row.attempts // ATTEMPTS_PER_PAGE))
    number = min(number, pages)
    source = request.app[STORE]

    def load() -> Any:
        total, attempts = source.attempts(
            run, case_id, target, offset=(number - 1) * ATTEMPTS_PER_PAGE, limit=ATTEMPTS_PER_PAGE
        )
        return total, attempts

    total, attempts = await _blocking(load)
    page = Page(attempts, number, max(1, -(-total // ATTEMPTS_PER_PAGE)), total, ATTEMPTS_PER_PAGE)
    found = row
    (texted,) = await _blocking(lambda: source.with_texts(run, [found]))
    shown = replace(texted, details=attempts)
    return _page("case.html", index=run, row=row, shown=shown, page=page, note=run.suite_note)


async def stored_diff_page(request: web.Request) -> web.Response:
    a = await _stored(request, request.query.get("a", ""))
    if isinstance(a, web.Response):
        return a
    b = await _stored(request, request.query.get("b", ""))
    if isinstance(b, web.Response):
        return b
    key = (a.info.ref, a.info.stored_at, b.info.ref, b.info.stored_at)
    source = request.app[STORE]
    return await _diff_page(request, key, lambda: stored_diff(a, b, source.suite_of), stored=True)


async def stored_trends_page(request: web.Request) -> web.Response:
    suite, target = request.query.get("suite", ""), request.query.get("target", "")
    n = max(2, min(_int(request, "n", 30), 500))
    source = request.app[STORE]
    points = await _blocking(lambda: source.history(suite, target, n))
    if not points:
        return _error(404, f"no runs of suite '{suite}' with target '{target}'")
    return _page("trends.html", trend=stored_trend(points, suite, target), n=n)


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
    app[OPEN_WAIT] = open_wait
    app[DIFFS] = {}
    if isinstance(source, StoreSource):
        app[STORE] = source
        app.router.add_get("/", stored_runs)
        app.router.add_get("/run", stored_run_page)
        app.router.add_get("/case", stored_case_page)
        app.router.add_get("/diff", stored_diff_page)
        app.router.add_get("/trends", stored_trends_page)
        return app
    app[CACHE] = RunCache(source, freeze_gc=freeze_gc)
    app.router.add_get("/", runs_list)
    app.router.add_get("/run", run_page)
    app.router.add_get("/case", case_page)
    app.router.add_get("/diff", diff_page)
    app.router.add_get("/trends", trends_page)
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

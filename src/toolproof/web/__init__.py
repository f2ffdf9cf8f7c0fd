"""The viewer: ``toolproof view`` serves runs to the browser on 127.0.0.1.

Runs come from the history store (:class:`StoreSource`: figures, case rows and
gate decisions as stored, raw exchanges from the run folders the store points
at; nothing is graded to open a run), or from run folders
(:class:`FolderSource`, a :class:`RunSource`: each run graded once when first
opened). Read-only: GET routes only.

::

    from toolproof.web import FolderSource, StoreSource, make_app

    app = make_app(StoreSource(".toolproof/history.db"))   # an aiohttp Application
    app = make_app(FolderSource("runs"))
"""

from toolproof.web._app import make_app, serve
from toolproof.web._run_index import RunCache, RunIndex, build_index
from toolproof.web._source import FolderSource, RunInfo, RunSource
from toolproof.web._stored import StoredRun, StoreSource

__all__ = [
    "FolderSource",
    "RunCache",
    "RunIndex",
    "RunInfo",
    "RunSource",
    "StoreSource",
    "StoredRun",
    "build_index",
    "make_app",
    "serve",
]

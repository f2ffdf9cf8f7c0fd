"""The viewer: ``toolproof view`` serves runs to the browser on 127.0.0.1.

Runs come from a :class:`RunSource`: run folders (:class:`FolderSource`), or
a history store implementing the same interface. Read-only: GET routes only.

::

    from toolproof.web import FolderSource, make_app

    app = make_app(FolderSource("runs"))   # an aiohttp Application
"""

from toolproof.web._app import make_app, serve
from toolproof.web._index import RunCache, RunIndex, build_index
from toolproof.web._source import FolderSource, RunInfo, RunSource

__all__ = [
    "FolderSource",
    "RunCache",
    "RunIndex",
    "RunInfo",
    "RunSource",
    "build_index",
    "make_app",
    "serve",
]

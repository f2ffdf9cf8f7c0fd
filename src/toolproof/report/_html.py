"""The self-contained HTML report: one file, nothing loaded from the network.

Rendered with Jinja2 with autoescaping on, so every string from a record
(model replies, tool arguments, case IDs, raw exchanges) is escaped. The one
stylesheet and the one script are inlined, and a Content-Security-Policy
allows exactly those two by their SHA-256 hash: a ``<script>`` smuggled in
through data would not run even if it escaped escaping.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from toolproof._version import __version__
from toolproof.report._htmlview import RunView, run_view

if TYPE_CHECKING:
    from jinja2 import Environment

    from toolproof.evaluate import Evaluation
    from toolproof.gate import GateResult


def _asset(name: str) -> str:
    return (files("toolproof.report") / "templates" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@cache
def assets() -> tuple[str, str, str]:
    """The stylesheet, the script and the Content-Security-Policy that allows only them."""
    css, js = _asset("report.css"), _asset("report.js")
    csp = (
        "default-src 'none'; "
        f"style-src {_sha256(css)}; "
        f"script-src {_sha256(js)}; "
        "img-src data:; base-uri 'none'; form-action 'self'"
    )
    return css, js, csp


@cache
def environment(packages: tuple[str, ...] = ()) -> Environment:
    """The Jinja2 environment of the report, and of ``packages``' templates on top of it
    (the viewer's): autoescaping everywhere."""
    from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined

    loaders = [PackageLoader(p, "templates") for p in (*packages, "toolproof.report")]
    env = Environment(
        loader=ChoiceLoader(loaders),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def render_page(template: str, packages: tuple[str, ...] = (), **context: Any) -> str:
    """Render one page with the inlined stylesheet and script and their CSP."""
    from markupsafe import Markup

    css, js, csp = assets()
    page = environment(packages).get_template(template)
    return page.render(css=Markup(css), js=Markup(js), csp=csp, version=__version__, **context)


def render_html(view: RunView) -> str:
    """The whole report of a run, every case with every attempt."""
    return render_page("report.html", view=view)


def html_report(ev: Evaluation, gate: GateResult | None = None) -> str:
    """Render an evaluation (and its gate decision, if any) as one self-contained HTML file."""
    return render_html(run_view(ev, gate, details=True))

"""The HTML report and the viewer in a real browser (headless Chromium)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.web.conftest import Served, Watched
from tests.web.runs import CASE_XSS, SUPPORT, TARGET_XSS, TEXT_CASE, TRUST
from toolproof.evaluate import evaluate, load_run
from toolproof.gate import compare_runs, run_gate
from toolproof.report import html_report, run_view
from toolproof.suite import load_suite


def _no_script_ran(w: Watched) -> None:
    page = w.page
    assert w.dialogs == [], f"a payload ran: {w.dialogs}"
    assert page.locator("#pwned, #pwned2").count() == 0
    assert page.locator("img").count() == 0
    assert page.locator("svg[onload]").count() == 0
    assert page.locator("script").count() == 1  # toolproof's own
    assert page.locator("i, u, b").count() == 0  # markup from the suite stays text


def _open_everything(page: Any) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")


@pytest.fixture(scope="module")
def two_target_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    suite = load_suite(SUPPORT, TRUST)
    ev = evaluate(suite, [SUPPORT / "records.jsonl", SUPPORT / "records-b.jsonl"], trust=TRUST)
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(html_report(ev, run_gate(ev)), encoding="utf-8")
    return path, run_view(ev, details=False)


def test_report_from_disk_shows_figures_and_filters(
    page: Watched, two_target_report: tuple[Path, Any], shots: Path | None
) -> None:
    path, view = two_target_report
    p = page.page
    p.goto(path.as_uri())
    assert p.locator("table.headline").is_visible()
    assert "strict pass" in p.locator("table.headline").inner_text()
    assert p.locator("table.confusion").first.locator("th", has_text="(none)").count() == 2
    assert p.locator("svg.latency").count() == 0  # demo records carry no latencies
    total = len(view.entries)
    assert p.locator("details.entry:visible").count() == total
    if shots is not None:
        p.screenshot(path=str(shots / "report.png"))

    # each filter narrows the list to exactly the matching entries
    p.select_option("select[name=failure]", "wrong_tool")
    want = {(e.target, e.case_id) for e in view.entries if "wrong_tool" in e.failures}
    assert 0 < len(want) < total
    assert p.locator("details.entry:visible").count() == len(want)
    assert p.locator("#shown").inner_text() == str(len(want))
    for badge in p.locator("details.entry:visible").all():
        assert "wrong_tool" in badge.locator(":scope > summary").inner_text()

    p.select_option("select[name=failure]", "")
    p.select_option("select[name=risk]", "critical")
    p.select_option("select[name=target]", "recorded:demo-model-b")
    want = [e for e in view.entries if e.risk == "critical" and e.target == "recorded:demo-model-b"]
    assert p.locator("details.entry:visible").count() == len(want) > 0

    p.select_option("select[name=risk]", "")
    p.select_option("select[name=tag]", "cs")
    want = [e for e in view.entries if "cs" in e.tags and e.target == "recorded:demo-model-b"]
    assert p.locator("details.entry:visible").count() == len(want) > 0

    # a case opens on its contract, reason and attempts; the raw exchange stays collapsed
    entry = p.locator("details.entry:visible").first
    entry.locator(":scope > summary").click()
    assert entry.locator("pre.contract").is_visible()
    assert entry.locator(".attempt").first.is_visible()
    raw = entry.locator("details.raw").first
    assert not raw.locator("pre").first.is_visible()
    raw.locator("summary").click()
    assert raw.locator("pre").first.is_visible()
    assert page.errors == []


def test_report_diff_marks_what_differs(page: Watched, two_target_report: tuple[Path, Any]) -> None:
    path, _ = two_target_report
    p = page.page
    p.goto(path.as_uri() + "#cases")
    p.select_option("select[name=target]", "recorded:demo-model")
    p.select_option("select[name=failure]", "wrong_tool")
    entry = p.locator("details.entry:visible", has_text="lookup-not-search")
    entry.locator(":scope > summary").click()
    diff = entry.locator("table.diff").first
    assert diff.locator("tr.expected .chg").first.inner_text().strip() == "lookup_order"
    assert "search_orders" in diff.locator("tr.actual").inner_text()
    assert entry.locator(".why").inner_text().startswith("The name and the date")


def test_report_from_disk_never_runs_planted_scripts(
    page: Watched, runs_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "xss.html"
    ev = load_run(runs_dir / "xss", trust=TRUST)
    out.write_text(html_report(ev, run_gate(ev)), encoding="utf-8")
    p = page.page
    p.goto(out.as_uri())
    _open_everything(p)
    p.select_option("select[name=target]", TARGET_XSS)
    p.select_option("select[name=failure]", "unknown_tool")
    assert p.locator("details.entry:visible").count() == 1
    _no_script_ran(page)
    text = p.locator("main").inner_text()
    assert CASE_XSS in text and TEXT_CASE in text and TARGET_XSS in text
    assert "<script>alert('reply')</script>" in text
    assert "alert('arg')" in text and "<svg/onload=alert('tool')>" in text


def test_viewer_runs_list_run_page_filters_and_case(
    page: Watched, viewer: Served, runs_dir: Path, shots: Path | None
) -> None:
    p = page.page
    if not viewer.store:  # run folders are listed with figures once opened; stored runs at once
        for run_id in ("support-a", "support-b", "support-c", "xss"):
            p.goto(viewer.url + f"/run?id={run_id}")
    p.goto(viewer.url + "/")
    runs = p.locator("table.runs")
    for run_id in ("support-a", "support-b", "support-c", "xss"):
        assert runs.get_by_role("link", name=run_id, exact=True).count() == 1
    gate = run_gate(load_run(runs_dir / "support-a", trust=TRUST))
    row = runs.locator("tr", has=p.get_by_role("link", name="support-a", exact=True))
    assert ("pass" if gate.passed else "fail") in row.inner_text()
    assert "77.3% (58/75)" in row.inner_text()
    if shots is not None and viewer.store:
        p.screenshot(path=str(shots / "view-runs.png"))

    runs.get_by_role("link", name="support-a", exact=True).click()
    p.wait_for_url(re.compile(r"/run\?id=[\w-]+$"))
    assert "77.3% (58/75)" in p.locator("table.headline").inner_text()
    assert p.locator("table.confusion th", has_text="(none)").count() == 2
    view = run_view(load_run(runs_dir / "support-a", trust=TRUST), details=False)
    assert p.locator("details.entry").count() == 20  # one page
    assert "page 1 of 4" in p.locator("nav.pager").first.inner_text()
    if shots is not None and viewer.store:
        p.screenshot(path=str(shots / "view-run.png"), full_page=False)

    # server-side filters: the form reloads the page with the choice in the URL
    p.select_option("select[name=failure]", "schema_mismatch")
    p.locator("form#filters button").click()
    p.wait_for_url(re.compile(r"failure=schema_mismatch"))
    want = [e for e in view.entries if "schema_mismatch" in e.failures]
    assert p.locator("details.entry").count() == len(want) > 0
    assert p.locator("#shown").inner_text() == str(len(want))

    p.select_option("select[name=failure]", "")
    p.select_option("select[name=status]", "pass")
    p.select_option("select[name=risk]", "critical")
    p.locator("form#filters button").click()
    p.wait_for_url(re.compile(r"status=pass"))
    want = [e for e in view.entries if e.status == "pass" and e.risk == "critical"]
    assert p.locator("details.entry").count() == len(want) > 0

    # pagination
    p.goto(viewer.url + "/run?id=support-a&page=2")
    assert "page 2 of 4" in p.locator("nav.pager").first.inner_text()
    first_on_two = view.entries[20].case_id
    assert first_on_two in p.locator("details.entry").first.inner_text()

    # a case: every attempt with its raw exchange
    p.goto(viewer.url + "/run?id=support-a&failure=wrong_tool")
    p.locator("details.entry", has_text="lookup-not-search").get_by_role(
        "link", name="attempts →"
    ).click()
    p.wait_for_url(re.compile(r"/case\?"))
    assert p.locator("h1.case-title").inner_text().startswith("lookup-not-search")
    assert p.locator(".attempt").count() == 1
    assert "search_orders" in p.locator(".attempt .call").first.inner_text()
    assert "wrong_tool" in p.locator(".attempt").inner_text()
    p.locator("details.raw summary").first.click()
    assert "search_orders" in p.locator("details.raw pre").nth(1).inner_text()
    if shots is not None and viewer.store:
        p.screenshot(path=str(shots / "view-case.png"))
    assert page.errors == []


def test_viewer_case_pages_through_attempts(page: Watched, viewer: Served) -> None:
    p = page.page
    p.goto(viewer.url + "/case?run=support-c&id=lookup-id-lowercase&target=recorded%3Ademo-model")
    assert p.locator(".attempt").count() == 2
    texts = p.locator(".attempt").all_inner_texts()
    assert texts[0].startswith("attempt 0") and texts[1].startswith("attempt 1")


def test_viewer_diff_of_two_runs(
    page: Watched, viewer: Served, runs_dir: Path, shots: Path | None
) -> None:
    p = page.page
    p.goto(viewer.url + "/")
    if viewer.store:  # the store may hold runs of one ID: the options name their start too
        p.select_option("select[name=a]", label="support-a · 2026-11-01 10:00")
        p.select_option("select[name=b]", label="support-b · 2026-11-02 10:00")
    else:
        p.select_option("select[name=a]", "support-a")
        p.select_option("select[name=b]", "support-b")
    p.get_by_role("button", name="diff").click()
    p.wait_for_url(re.compile(r"/diff\?a=[\w-]+&b=[\w-]+"))
    assert "support-a (A) → support-b (B)" in p.locator("h1").inner_text()
    comp = compare_runs(load_run(runs_dir / "support-a", trust=TRUST), load_run(runs_dir / "support-b", trust=TRUST))[0]
    assert comp.newly_failing or comp.newly_fixed
    body = p.locator("main").inner_text()
    assert f"Newly failing ({len(comp.newly_failing)})" in body
    assert f"Newly fixed ({len(comp.newly_fixed)})" in body
    deltas = p.locator("table.deltas").inner_text()
    strict = next(m for m in comp.metrics if m.metric == "strict_pass")
    assert strict.test is not None
    assert f"{strict.test.p_value:.3f}" in deltas
    assert f"{100 * strict.delta:+.1f}" in deltas
    rows = p.locator("table.side-by-side tr.newly-failing")
    assert rows.count() == len(comp.newly_failing)
    for case in comp.newly_failing:
        assert p.locator("table.side-by-side tr.newly-failing", has_text=case).count() >= 1
    if shots is not None and viewer.store:
        p.screenshot(path=str(shots / "view-diff.png"))

    # flaky: support-c holds both demo answers as two attempts of each case
    p.goto(viewer.url + "/diff?a=support-a&b=support-c")
    flaky = load_run(runs_dir / "support-c", trust=TRUST).summaries["recorded:demo-model"].stability
    assert flaky is not None and flaky.flaky
    assert f"Flaky in either ({len(flaky.flaky)})" in p.locator("main").inner_text()
    assert page.errors == []


def test_viewer_trends(page: Watched, viewer: Served, shots: Path | None) -> None:
    p = page.page
    if not viewer.store:
        for run_id in ("support-a", "support-b", "support-c"):
            p.goto(viewer.url + f"/run?id={run_id}")
    p.goto(viewer.url + "/")
    p.get_by_role("link", name="support · recorded:demo-model").click()
    p.wait_for_url(re.compile(r"/trends\?"))
    charts = p.locator("section.chart")
    assert charts.count() == 6
    strict = charts.filter(has_text="strict pass")
    assert strict.locator("circle").count() == 3
    assert strict.locator("polygon.band").count() == 1
    strict.locator("summary").click()
    assert "77.3% (58/75)" in strict.locator("table").inner_text()
    if shots is not None and viewer.store:
        p.screenshot(path=str(shots / "view-trends.png"))


def test_viewer_never_runs_planted_scripts(page: Watched, viewer: Served) -> None:
    p = page.page
    p.goto(viewer.url + "/")
    _no_script_ran(page)
    p.goto(viewer.url + "/run?id=xss")
    _open_everything(p)
    _no_script_ran(page)
    assert CASE_XSS in p.locator("main").inner_text()
    p.goto(viewer.url + "/")
    _no_script_ran(page)
    assert TARGET_XSS in p.locator("table.runs").inner_text()
    link = p.locator("a", has_text="xss ·").first
    link.click()
    _no_script_ran(page)
    p.goto(viewer.url + "/run?id=xss&failure=unknown_tool")
    p.locator("details.entry").first.get_by_role("link", name="attempts →").click()
    p.wait_for_url(re.compile(r"/case\?"))
    _open_everything(p)
    _no_script_ran(page)
    text = p.locator("main").inner_text()
    assert CASE_XSS in text and "<script>alert('reply')</script>" in text
    assert "alert('arg')" in text
    p.goto(viewer.url + f"/case?run=xss&id={quote(TEXT_CASE)}&target={quote(TARGET_XSS)}")
    _open_everything(p)
    _no_script_ran(page)
    assert TEXT_CASE in p.locator("h1").inner_text()
    p.goto(viewer.url + f"/run?id={quote(CASE_XSS)}")  # an unknown run named by a payload
    _no_script_ran(page)
    assert CASE_XSS in p.locator(".error-message").inner_text()

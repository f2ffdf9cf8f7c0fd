"""The viewer over runs a user makes: with `--tools FILE`, with a call printed as text,
and two runs compared and charted.

The user's steps: `toolproof run` the example suite with the scripted model, once with
its own tools and once with `--tools FILE`, into one history store; then open the
viewer's pages. Before, a `--tools` run's case pages said the suite had changed since
the run (it had not), a call printed as text looked like a real call with no note and
no expected/actual table, the diff left out "tools from differs", and the trend charts
had no x-axis labels.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from aiohttp.test_utils import TestClient, TestServer

from tests.cli.cli_support import toolproof
from tests.web.runs import SUPPORT, TRUST
from toolproof.store import open_store
from toolproof.suite import load_suite
from toolproof.web import StoreSource, make_app

TARGET = "scripted:script.yaml"


def _runs(tmp: Path, store: str) -> None:
    suite = load_suite(SUPPORT, TRUST)
    tools = [t.model_dump(mode="json", exclude_none=True) for t in suite.tools]
    tools[0]["description"] = f"{tools[0].get('description', '')} (edited)"
    (tmp / "tools.yaml").write_text(yaml.safe_dump(tools, sort_keys=False))
    script = yaml.safe_load((SUPPORT / "script.yaml").read_text())
    wrong = script["cases"]["lookup-id-digits-only"]["tool_calls"][0]
    wrong["raw_arguments"] = '{"order_id": "ORD-000000"}'
    (tmp / "script.yaml").write_text(yaml.safe_dump(script, sort_keys=False))
    base = ["run", str(SUPPORT), "-m", TARGET, "--allow-code", "-q", "--store", store]
    for name, more in (("own", []), ("tools", ["--tools", "tools.yaml"])):
        done = toolproof(*base, "-o", f"runs/{name}", *more, cwd=tmp)
        assert done.returncode == 0, done.stdout + done.stderr


def _print_as_text(folder: Path, case_id: str, store: str) -> None:
    """The model printed the call of ``case_id`` as text (recovered, not made)."""
    path = folder / "records.jsonl"
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("case_id") == case_id:
            for call in record["response"]["tool_calls"]:
                call["extracted_from_text"] = True
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open_store(store) as st:
        st.import_run(folder, trust=TRUST)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("viewer-runs")
    store = f"sqlite:///{tmp / 'history.db'}"
    _runs(tmp, store)
    _print_as_text(tmp / "runs" / "own", "lookup-exact-id", store)
    return tmp, store


@pytest.fixture
async def client(made: tuple[Path, str]) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    app = make_app(StoreSource(made[1], TRUST))
    async with TestClient(TestServer(app, host="127.0.0.1")) as c:
        yield c


def _ids(made: tuple[Path, str]) -> dict[str, str]:
    with open_store(made[1]) as st:
        return {Path(r.folder or "").name: str(r.id) for r in st.list_runs().items}


async def test_a_tools_run_shows_its_contracts_with_its_own_tools(
    client: TestClient,  # type: ignore[type-arg]
    made: tuple[Path, str],
) -> None:
    run = _ids(made)["tools"]
    page = await client.get(f"/case?run={run}&id=lookup-id-digits-only&target={TARGET}")
    text = await page.text()
    assert page.status == 200
    assert "has changed since the run" not in text
    assert 'class="diff"' in text  # expected against actual
    assert "ORD-000000" in text


async def test_a_call_printed_as_text_says_so_on_its_case_page(
    client: TestClient,  # type: ignore[type-arg]
    made: tuple[Path, str],
) -> None:
    run = _ids(made)["own"]
    text = await (await client.get(f"/case?run={run}&id=lookup-exact-id&target={TARGET}")).text()
    assert "missed_call" in text
    assert "printed as text, not called (counts only when repaired)" in text
    assert 'class="diff"' in text


async def test_the_diff_says_the_tools_differ_once(
    client: TestClient,  # type: ignore[type-arg]
    made: tuple[Path, str],
) -> None:
    ids = _ids(made)
    text = await (await client.get(f"/diff?a={ids['own']}&b={ids['tools']}")).text()
    assert text.count("tools from differs: the suite (A) vs --tools") == 1
    assert "suite fingerprint differs" not in text and "tool schemas differs" not in text
    shown = toolproof("compare", "runs/own", "runs/tools", "--allow-code", cwd=made[0])
    assert "tools from differs: the suite (baseline) vs --tools" in shown.stdout + shown.stderr


async def test_trend_charts_label_their_x_axis(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    text = await (await client.get(f"/trends?suite=support&target={TARGET}")).text()
    chart = text.split("<h3>strict pass</h3>")[1].split("</svg>")[0]
    ticks = chart.count('class="tick"')
    assert ticks == 2  # one label per run: when it started (UTC)

"""``toolproof import tau2``: a τ2-shaped checkout (a mini domain and a mini package) as suites.

The fixture under fixtures/tau2_mini is made for these tests: a package
``minitau`` laid out as τ2's (``domains/<d>/tools.py``, ``data_model.py``,
``user_tools.py``, ``user_data_model.py``) and its data (``data/tau2/domains/shop``).
Its package ``__init__`` raises, as the importer must never run it. The real
τ2-bench is needed by none of these tests; the last one uses it when installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.errors import SuiteError, UserError
from toolproof.importers import import_tau2, tau2_domains_dir, write_tau2
from toolproof.run import expected_states
from toolproof.run._env import load_environment
from toolproof.suite import load_suite
from toolproof.trust import Trust

MINI = Path(__file__).parent / "fixtures" / "tau2_mini"
CODE = Trust(allow_code=True)


@pytest.fixture(autouse=True)
def _minitau(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(MINI))
    for name in [m for m in sys.modules if m == "minitau" or m.startswith("minitau.")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    result = import_tau2(MINI, ["shop"], package="minitau", allow_code=True)
    write_tau2(result, tmp_path)
    return tmp_path / "shop"


def test_the_suite_validates_and_maps_every_reward_basis(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    assert suite.name == "tau2-shop"
    assert [t.name for t in suite.tools] == [
        "get_order",
        "cancel_order",
        "open_order",
        "toggle_airplane_mode",
    ]
    assert [t.effect.value for t in suite.tools] == ["read", "write", "write", "write"]
    assert "Cancel only pending orders" in (suite.system or "")
    cases = {c.id: c for c in suite.cases}
    assert list(cases) == ["shop-0", "shop-1", "shop-2_with_space"]

    first = cases["shop-0"]
    assert first.user is not None
    assert first.user.known == "Your order is #O1."
    assert first.user.unknown == "You do not know the order total."
    assert first.user.persona == "Brief and polite."
    assert "You want to cancel order #O1." in (first.user.instructions or "")
    assert first.user.tools == ["toggle_airplane_mode"]  # the user's own tools, not the agent's
    assert first.tools == ["get_order", "cancel_order", "open_order"]
    assert first.end_state is not None and first.end_state.actions is not None
    assert [a.tool for a in first.end_state.actions] == ["get_order", "cancel_order"]
    assert first.communicate is not None
    assert [c.text for c in first.communicate if not isinstance(c, str)] == ["12.5"]
    assert first.trajectory is None  # ACTION is not in its reward basis

    second = cases["shop-1"]
    assert second.trajectory is not None and second.trajectory.mode.value == "superset"
    (call,) = second.trajectory.groups()[0]
    assert call.args == {"order_id": "#O3"}  # compare_args: only order_id
    assert call.extra_args is True
    assert second.communicate is None

    third = cases["shop-2_with_space"]
    assert third.end_state is not None and third.end_state.actions is None  # no DB basis
    assert third.end_state.assertions == [
        {"function": "check_user_airplane_mode_is", "args": {"on": False}},
        {
            "function": "check_order_status_is_is_false",
            "args": {"order_id": "#O2", "status": "cancelled"},
        },
    ]
    assert third.setup is not None
    assert [(s.tool, s.args) for s in third.setup] == [
        ("set_status", {"order_id": "#O2", "status": "pending"})
    ]
    assert third.state == "state/shop-2_with_space.json"
    state = json.loads((suite_dir / "state" / "shop-2_with_space.json").read_text())
    assert state["settings"] == {"currency": "USD"}  # initialization_data merged in
    assert state["orders"]["#O1"]["status"] == "pending"

    text = (suite_dir / "suite.yaml").read_text()
    assert "NL_ASSERTION (not imported" not in text
    # τ2's NL_ASSERTION: the case's nl_assertions, for the nl_assertion judge
    judged = [c for c in suite.cases if c.nl_assertions]
    assert len(judged) == 1
    assert judged[0].nl_assertions is not None
    assert judged[0].nl_assertions[0].startswith("The agent tells the user")


def test_the_gold_actions_run_tau2s_tools_on_the_state(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    states = expected_states(suite, CODE)
    first = states["shop-0"]
    assert first.warnings == ()
    assert first.state["orders"]["#O1"]["status"] == "cancelled"
    assert first.state["orders"]["#O1"]["notes"] == ["no longer needed"]
    assert first.state["orders"]["#O2"]["status"] == "delivered"
    second = states["shop-1"].state
    assert second["orders"]["#O3"] == {
        "order_id": "#O3",
        "status": "pending",
        "total": 5.0,
        "notes": [],
    }


def test_a_tool_reads_rows_as_models_and_writes_back_only_what_changed(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    env = load_environment(suite, CODE)
    assert env is not None
    session = env.session()
    read = session.call("get_order", {"order_id": "#O2"})
    assert not read.is_error
    assert json.loads(read.content)["total"] == 30.0
    assert session.changes() == []  # a read changes nothing
    failed = session.call("cancel_order", {"order_id": "#O2", "reason": "late"})
    assert failed.is_error
    assert "Non-pending order cannot be cancelled" in failed.content
    # as in τ2, what the tool changed before it raised stays
    assert session.snapshot()["orders"]["#O2"]["notes"] == ["late"]
    user = session.call("toggle_airplane_mode", {})
    assert user.content == "airplane mode off"
    # the user database as τ2's model holds it: a field left to its default is written out
    assert session.snapshot()["user_db"] == {
        "phone": {"airplane_mode": False},
        "surroundings": {"abroad": False},
    }
    missing = session.call("get_order", {"order_id": "#O9"})
    assert missing.is_error and "Order not found" in missing.content


def test_the_cli_writes_the_suites_and_says_what_it_mapped(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["import", "tau2", str(MINI), "--package", "minitau", "--allow-code", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert f"{out / 'shop' / 'suite.yaml'}: 3 cases, 3 tools + 1 user tools" in result.output
    assert (
        "basis ACTION 1, basis COMMUNICATE 1, basis DB 2, basis ENV_ASSERTION 1, "
        "basis NL_ASSERTION 1, nl_assertions (judged) 1, setup 1, state 1" in result.output
    )
    again = CliRunner().invoke(
        app,
        ["import", "tau2", str(MINI), "--package", "minitau", "--allow-code", "-o", str(out)],
    )
    assert isinstance(again.exception, UserError)
    assert "already exists (--force to overwrite)" in str(again.exception)


def test_without_allow_code_it_refuses_and_says_why(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["import", "tau2", str(MINI), "--package", "minitau", "-o", str(tmp_path)]
    )
    assert isinstance(result.exception, UserError)
    assert "needs --allow-code" in str(result.exception)
    assert not any(tmp_path.iterdir())


def test_a_folder_that_is_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a τ2-bench checkout"):
        tau2_domains_dir(tmp_path)
    assert tau2_domains_dir(MINI / "data") == MINI / "data" / "tau2" / "domains"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(MINI / "data", root / "data")
    return root


def test_a_task_with_an_unknown_tool_is_located(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    tasks_path = root / "data" / "tau2" / "domains" / "shop" / "tasks.json"
    tasks_path.write_text(tasks_path.read_text().replace('"name": "open_order"', '"name": "nope"'))
    with pytest.raises(SuiteError) as info:
        import_tau2(root, ["shop"], package="minitau", allow_code=True)
    err = info.value
    assert "task 1: unknown tool 'nope'" in str(err)
    assert err.file == str(tasks_path)
    line = next(
        i for i, text in enumerate(tasks_path.read_text().splitlines(), 1) if "nope" in text
    )
    assert err.line == line


def test_malformed_json_is_located(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    tasks_path = root / "data" / "tau2" / "domains" / "shop" / "tasks.json"
    tasks_path.write_text('[\n  {"id": "0",\n   "user_scenario": }\n]\n')
    with pytest.raises(SuiteError) as info:
        import_tau2(root, ["shop"], package="minitau", allow_code=True)
    assert info.value.line == 3
    assert "not valid JSON" in str(info.value)


def test_an_unknown_domain_names_those_there_are(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no domain 'bank' \(it has: shop\)"):
        import_tau2(MINI, ["bank"], package="minitau", allow_code=True)


def test_a_package_that_is_not_installed(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="'nosuchtau' is not installed"):
        import_tau2(MINI, ["shop"], package="nosuchtau", allow_code=True)


REAL = os.environ.get("TOOLPROOF_TAU2_CHECKOUT")


@pytest.mark.skipif(
    not REAL or importlib.util.find_spec("tau2") is None,
    reason="needs τ2-bench installed and TOOLPROOF_TAU2_CHECKOUT naming its checkout",
)
def test_the_real_retail_domain(tmp_path: Path) -> None:  # pragma: no cover - optional
    assert REAL is not None
    result = import_tau2(Path(REAL), ["retail"], allow_code=True)
    write_tau2(result, tmp_path)
    suite = load_suite(tmp_path / "retail")
    assert len(suite.tools) == 16
    assert len(suite.cases) == 114
    states = expected_states(suite, CODE, cases=["retail-0"])
    assert states["retail-0"].warnings == ()


def test_a_field_the_state_lacks_is_filled_and_kept(tmp_path: Path) -> None:
    from toolproof.importers.tau2_env import Tau2Domain

    domain = Tau2Domain("minitau", "shop")
    state = {"orders": {}, "settings": {}, "user_db": {"phone": {"airplane_mode": True}}}
    domain.function("set_abroad", state, {"abroad": True}, "user")
    assert state["user_db"]["surroundings"] == {"abroad": True}
    assert domain.check("airplane_mode_is", state, {"on": True}, "user", True) is True
    assert domain.check("airplane_mode_is", state, {"on": True}, "user", False) is False


def test_a_task_id_is_never_a_path(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    tasks_path = root / "data" / "tau2" / "domains" / "shop" / "tasks.json"
    tasks = json.loads(tasks_path.read_text())
    tasks[2]["id"] = "a/../../../../escaped"  # the task with its own starting state
    tasks_path.write_text(json.dumps(tasks))
    out = tmp_path / "deep" / "out"
    (out / "shop" / "state" / "shop-a").mkdir(parents=True)  # would let '..' resolve
    write_tau2(import_tau2(root, ["shop"], package="minitau", allow_code=True), out)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    assert [p for p in written if not p.startswith(("deep/out/", "checkout/"))] == []
    assert (out / "shop" / "state" / "shop-a_____________escaped.json").is_file()
    load_suite(out / "shop" / "suite.yaml", Trust(allow_code=True))  # and toolproof reads it


def test_no_file_the_user_has_is_overwritten_without_force(tmp_path: Path) -> None:
    result = import_tau2(MINI, ["shop"], package="minitau", allow_code=True)
    mine = tmp_path / "shop" / "policy.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("MY OWN POLICY")
    with pytest.raises(UserError, match=r"policy\.md: already exists"):
        write_tau2(result, tmp_path)
    assert mine.read_text() == "MY OWN POLICY"
    assert not (tmp_path / "shop" / "env").exists()  # nothing written before the refusal
    write_tau2(result, tmp_path, force=True)
    assert mine.read_text() != "MY OWN POLICY"


def test_tasks_nested_too_deeply_or_not_utf8_are_located_errors(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    tasks_path = root / "data" / "tau2" / "domains" / "shop" / "tasks.json"
    tasks_path.write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(UserError, match=r"tasks\.json: not read: JSON nested too deeply"):
        import_tau2(root, ["shop"], package="minitau", allow_code=True)
    tasks_path.write_bytes(b'[{"id": "\xff"}]')
    with pytest.raises(UserError, match=r"tasks\.json: not UTF-8"):
        import_tau2(root, ["shop"], package="minitau", allow_code=True)


def test_a_starting_state_validate_would_refuse_is_located_at_the_task(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    tasks_path = root / "data" / "tau2" / "domains" / "shop" / "tasks.json"
    tasks = json.loads(tasks_path.read_text())
    deep: dict = {"a": 1}
    for _ in range(150):
        deep = {"a": deep}
    tasks[0]["initial_state"] = {"initialization_data": {"agent_data": deep}}
    tasks_path.write_text(json.dumps(tasks, indent=1))
    with pytest.raises(SuiteError, match="nested deeper than") as info:
        import_tau2(root, ["shop"], package="minitau", allow_code=True)
    assert info.value.file == str(tasks_path) and info.value.line is not None


def test_an_out_that_is_a_file_or_under_one_is_refused_even_with_force(tmp_path: Path) -> None:
    result = import_tau2(MINI, ["shop"], package="minitau", allow_code=True)
    mine = tmp_path / "notes.txt"
    mine.write_text("keep")
    for out in (mine, mine / "suites"):
        for force in (False, True):
            with pytest.raises(UserError, match="is a file, not a folder"):
                write_tau2(result, out, force=force)
    assert mine.read_text() == "keep"
    (tmp_path / "o" / "shop" / "suite.yaml").mkdir(parents=True)  # a folder where a file goes
    with pytest.raises(UserError, match="is a folder"):
        write_tau2(result, tmp_path / "o", force=True)


@pytest.mark.parametrize("name", ["policy.md", "db.json", "tasks.json"])
def test_a_symlink_out_of_the_checkout_is_refused_and_named(tmp_path: Path, name: str) -> None:
    root = _copy(tmp_path)
    shop = root / "data" / "tau2" / "domains" / "shop"
    outside = tmp_path / "elsewhere" / name
    outside.parent.mkdir()
    shutil.copy(shop / name, outside)
    (shop / name).unlink()
    (shop / name).symlink_to(outside)
    with pytest.raises(UserError) as info:
        import_tau2(root, ["shop"], package="minitau", allow_code=True)
    message = str(info.value)
    assert message.startswith(f"{shop / name}: leads out of the τ2 checkout")
    assert f"to {outside.resolve()}: not read" in message


def test_a_domain_folder_linked_out_of_the_checkout_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    domains = root / "data" / "tau2" / "domains"
    shutil.move(domains / "shop", tmp_path / "shop")
    (domains / "shop").symlink_to(tmp_path / "shop")
    with pytest.raises(UserError, match=r"shop: leads out of the τ2 checkout"):
        import_tau2(root, ["shop"], package="minitau", allow_code=True)
    # through the CLI: the same error (a UserError: exit 2), and nothing written
    result = CliRunner().invoke(
        app,
        [
            "import",
            "tau2",
            str(root),
            "-d",
            "shop",
            "--package",
            "minitau",
            "--allow-code",
            "-o",
            str(tmp_path / "out"),
        ],
    )
    assert isinstance(result.exception, UserError)
    assert "leads out of the τ2 checkout" in str(result.exception)
    assert not (tmp_path / "out").exists()


def test_a_symlink_inside_the_checkout_is_followed(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    shop = root / "data" / "tau2" / "domains" / "shop"
    (shop / "policy.md").rename(root / "policy.md")
    (shop / "policy.md").symlink_to(Path("..", "..", "..", "..", "policy.md"))
    result = import_tau2(root, ["shop"], package="minitau", allow_code=True)
    assert result.domains[0].policy == (root / "policy.md").read_text(encoding="utf-8")

"""SQLite state, suite code and YAML 1.2 scalars: the sandbox pieces one by one."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.security.corpus import ORDERS_PY, SQL_ENTRIES
from toolproof.errors import UserError
from toolproof.run._env import CodeNotAllowed, load_environment
from toolproof.suite._yaml import load_yaml
from toolproof.trust import Trust
from toolproof.types import Environment, Suite

CODE = Trust(allow_code=True)


def _suite(root: Path, state_name: str, state: str) -> Suite:
    (root / state_name).write_text(state)
    (root / "tools.py").write_text(ORDERS_PY)
    (root / "suite.yaml").write_text("suite: s\n")
    return Suite(
        name="s",
        tools=[],
        cases=[],
        environment=Environment(state=state_name, tools="tools.py"),
        source=str(root / "suite.yaml"),
    )


@pytest.mark.parametrize(("name", "build", "expect"), SQL_ENTRIES, ids=[e[0] for e in SQL_ENTRIES])
def test_sql_state_cannot_reach_other_files(
    tmp_path: Path, name: str, build: object, expect: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "suite"
    root.mkdir()
    build(root, outside)  # type: ignore[operator]
    state = (root / "state.sql").read_text()
    with pytest.raises(UserError, match=expect):
        load_environment(_suite(root, "state.sql", state), CODE)
    assert list(outside.iterdir()) == []


def test_a_plain_sql_state_still_loads(tmp_path: Path) -> None:
    env = load_environment(
        _suite(tmp_path, "state.sql", "CREATE TABLE t(id, v); INSERT INTO t VALUES (1, 'a');"), CODE
    )
    assert env is not None
    session = env.session()
    assert session.snapshot() == {"t": {"1": {"id": 1, "v": "a"}}}
    session.close()


def test_suite_code_needs_allow_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    suite = _suite(tmp_path, "s.json", "{}")
    (tmp_path / "tools.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    with pytest.raises(CodeNotAllowed, match="--allow-code"):
        load_environment(suite)
    assert not marker.exists()
    load_environment(suite, CODE)
    assert marker.exists()


# YAML 1.1 reading on the left (PyYAML's default), YAML 1.2 core schema on the right.
YAML_12 = [
    ("12:30", 750, "12:30"),
    ("1:02:03", 3723, "1:02:03"),
    ("0777", 511, 777),
    ("0o17", "0o17", 15),
    ("0x1F", 31, 31),
    ("1_000", 1000, "1_000"),
    ("0b101", 5, "0b101"),
    ("1e-6", "1e-6", 1e-6),
    ("-1e3", "-1e3", -1000.0),
    ("6.02e23", "6.02e23", 6.02e23),
    (".inf", math.inf, math.inf),
    ("-.Inf", -math.inf, -math.inf),
    ("yes", True, "yes"),
    ("No", False, "No"),
    ("on", True, "on"),
    ("TRUE", True, True),
    ("false", False, False),
    ("~", None, None),
    ("Null", None, None),
    ("2026-09-20", None, "2026-09-20"),
    ("+12", 12, 12),
    ("=", None, "="),
]


@pytest.mark.parametrize(("text", "yaml11", "yaml12"), YAML_12, ids=[t for t, _, _ in YAML_12])
def test_scalars_follow_the_yaml_1_2_core_schema(text: str, yaml11: object, yaml12: object) -> None:
    import yaml

    if yaml11 is not None:  # the difference is real: PyYAML's default reads it the 1.1 way
        assert yaml.safe_load(f"v: {text}")["v"] == yaml11
    assert load_yaml(f"v: {text}", "x.yaml")[0]["v"] == yaml12


def test_nan_is_a_float() -> None:
    assert math.isnan(load_yaml("v: .nan", "x.yaml")[0]["v"])

"""Every example of the "Multi-step tasks" page (docs/multistep.md) parses and means what it says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.grade._trajectory import compile_trajectory, match_trajectory
from toolproof.match._matchers import Context
from toolproof.match._mock import CompiledMock
from toolproof.providers._scripted import ScriptedProvider
from toolproof.types import Case, EndState, Environment, SuiteTool, ToolCall, ToolMock, Trajectory

PAGE = Path(__file__).resolve().parents[2] / "docs" / "multistep.md"


def _section() -> str:
    return PAGE.read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section(), re.S)


def _yaml_blocks() -> list[Any]:
    return [yaml.safe_load(b) for b in _blocks("yaml")]


def test_every_yaml_example_is_valid() -> None:
    blocks = _yaml_blocks()
    assert len(blocks) >= 7
    for data in blocks:
        if isinstance(data, list):
            for case in data:
                Case.model_validate(case)
            continue
        assert isinstance(data, dict)
        for key, value in data.items():
            if key == "mocks":
                for mock in value.values():
                    ToolMock.model_validate(mock)
            elif key == "trajectory":
                Trajectory.model_validate(value)
            elif key == "end_state":
                EndState.model_validate(value)
            elif key == "environment":
                Environment.model_validate(value)
            elif key == "cases":
                ScriptedProvider.from_dict(data)
            else:
                pytest.fail(f"unexpected example key {key}")


def test_the_mock_example_answers_as_documented() -> None:
    data = next(b for b in _yaml_blocks() if isinstance(b, dict) and "mocks" in b)
    mock = CompiledMock(ToolMock.model_validate(data["mocks"]["lookup_order"]), Context(None, None))
    shipped = mock.answer({"order_id": "ORD-104821"})
    assert shipped is not None and json.loads(shipped.content)["status"] == "shipped"
    down = mock.answer({"order_id": "ORD-900001"})
    assert down is not None and down.fault == "unavailable"
    other = mock.answer({"order_id": "ORD-1"})
    assert other is not None and json.loads(other.content) == {"error": "no such order"}


def test_the_trajectory_example_accepts_either_lookup_order() -> None:
    data = next(b for b in _yaml_blocks() if isinstance(b, dict) and "trajectory" in b)
    t = Trajectory.model_validate(data["trajectory"])
    tools = {n: SuiteTool(name=n) for n in ("lookup_order", "refund_order")}
    compiled = compile_trajectory(t, tools, Context(None, None), default_extra=False)

    def call(name: str, **args: Any) -> ToolCall:
        return ToolCall(name=name, arguments=args)

    refund = call("refund_order", order_id="ORD-104821", amount_cents=750, reason="other")
    a, b = call("lookup_order", order_id="ORD-104821"), call("lookup_order", order_id="ORD-104822")
    assert match_trajectory(compiled, [b, a, refund]).ok  # reason ignored by the override
    assert not match_trajectory(compiled, [a, refund, b]).ok


def test_the_python_tool_example_runs() -> None:
    (source,) = _blocks("python")
    space: dict[str, Any] = {}
    exec(source, space)
    state = {"orders": {"ORD-1": {"order_id": "ORD-1", "status": "processing"}}}
    assert space["cancel_order"](state, {"order_id": "ORD-1"})["status"] == "cancelled"
    with pytest.raises(ValueError, match="cannot be cancelled"):
        space["cancel_order"](state, {"order_id": "ORD-1"})

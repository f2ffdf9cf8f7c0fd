"""Integers beyond Python's digit limit and keys given twice: located errors, never a traceback.

Each input is one a pull request could send: a suite file, JSONL cases, a records
file, a scripted model, thresholds; and the model's own argument text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.cli_support import toolproof
from toolproof.records import parse_arguments, tool_call_from_raw

BIG = "9" * 5000
SUITE = {
    "format": 1,
    "suite": "numbers",
    "tools": [
        {
            "name": "lookup_order",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        }
    ],
    "cases": [
        {"id": "lookup", "prompt": "Where is ORD-1?", "expect": {"call": "lookup_order"}},
    ],
}


def _suite_text(**extra: str) -> str:
    text = yaml.safe_dump(SUITE, sort_keys=False)
    return text + "".join(f"{k}: {v}\n" for k, v in extra.items())


def _located(done: object, where: str) -> None:
    out = done.stdout + done.stderr  # type: ignore[attr-defined]
    assert done.returncode == 2, out  # type: ignore[attr-defined]
    assert "Traceback" not in out
    assert where in done.stderr, done.stderr  # type: ignore[attr-defined]
    assert "4,300 digits" in done.stderr  # type: ignore[attr-defined]


def test_a_huge_integer_in_expect_args_is_located(tmp_path: Path) -> None:
    text = _suite_text().replace(
        "expect:\n    call: lookup_order", f"expect:\n    call: lookup_order\n    args: {{order_id: {BIG}}}"
    )
    (tmp_path / "suite.yaml").write_text(text)
    _located(toolproof("validate", "suite.yaml", cwd=tmp_path), "suite.yaml:")
    assert "expect.args.order_id" in toolproof("validate", "suite.yaml", cwd=tmp_path).stderr


def test_a_huge_threshold_is_located(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(_suite_text(thresholds=f"{{all: {{strict_pass: {BIG}}}}}"))
    done = toolproof("validate", "suite.yaml", cwd=tmp_path)
    _located(done, "thresholds.all.strict_pass")


def test_a_huge_integer_in_jsonl_cases_is_located(tmp_path: Path) -> None:
    line = json.dumps({"id": "x", "prompt": "p", "expect": {"call": "lookup_order"}})
    (tmp_path / "cases.jsonl").write_text(line[:-1] + f', "max_steps": {BIG}}}\n')
    (tmp_path / "suite.yaml").write_text(_suite_text(cases_from="[cases.jsonl]"))
    _located(toolproof("validate", "suite.yaml", cwd=tmp_path), "cases.jsonl:1:")


def test_a_huge_integer_in_a_records_file_is_located(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(_suite_text())
    record = {"case_id": "lookup", "target": "m", "attempt": 0, "response": {"text": "hi"}}
    text = json.dumps(record).replace('"attempt": 0', f'"attempt": {BIG}')
    (tmp_path / "r.jsonl").write_text(text + "\n")
    _located(toolproof("score", "suite.yaml", "r.jsonl", cwd=tmp_path), "r.jsonl:1:")


def test_a_huge_integer_in_a_scripted_answer_is_located(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(_suite_text())
    (tmp_path / "s.json").write_text(
        f'{{"default": {{"text": "hi", "usage": {{"input_tokens": {BIG}}}}}}}'
    )
    done = toolproof("run", "suite.yaml", "-m", "scripted:s.json", "-o", "r", "-q", cwd=tmp_path)
    _located(done, "s.json")


def test_the_models_huge_integer_is_its_invalid_output() -> None:
    call = tool_call_from_raw("lookup_order", f'{{"order_id": {BIG}}}')
    assert call.arguments is None and call.raw_arguments.endswith(BIG + "}")
    assert call.parse_error is not None and "4,300 digits" in call.parse_error


@pytest.mark.parametrize(
    "raw",
    [
        '{"order_id": "ORD-1", "order_id": "ORD-2"}',
        '{"a": {"b": 1, "b": 2}}',
        '[{"x": 1}, {"y": 2, "y": 3}]',
        '{"order_id": "ORD-1", "order\\u005fid": "ORD-2"}',
    ],
)
def test_a_key_the_model_gave_twice_is_its_invalid_output(raw: str) -> None:
    value, error = parse_arguments(raw)
    assert value is None and error is not None and "duplicate key" in error
    call = tool_call_from_raw("lookup_order", raw)
    assert call.raw_arguments == raw and call.arguments is None  # the raw answer kept


def test_distinct_keys_still_parse() -> None:
    assert parse_arguments('{"a": 1, "b": {"a": 2}}') == ({"a": 1, "b": {"a": 2}}, None)


def test_a_key_given_twice_in_jsonl_cases_is_located(tmp_path: Path) -> None:
    line = '{"id": "x", "prompt": "p", "expect": {"call": "lookup_order"}, "id": "y"}'
    (tmp_path / "cases.jsonl").write_text("\n" + line + "\n")
    (tmp_path / "suite.yaml").write_text(_suite_text(cases_from="[cases.jsonl]"))
    done = toolproof("validate", "suite.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cases.jsonl:2:" in done.stderr and "duplicate key 'id'" in done.stderr


def test_a_key_given_twice_in_a_json_script_is_refused(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(_suite_text())
    (tmp_path / "s.json").write_text('{"default": {"text": "a"}, "default": {"text": "b"}}')
    done = toolproof("run", "suite.yaml", "-m", "scripted:s.json", "-o", "r", "-q", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "s.json" in done.stderr and "duplicate key 'default'" in done.stderr

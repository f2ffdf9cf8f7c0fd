from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.run import load_config, resolve_settings, suite_models


def test_layers_merge_suite_then_config_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "toolproof.yaml"
    path.write_text(
        "models:\n"
        "  '*': {max_retries: 2}\n"
        "  openai:gpt-4.1-mini: {temperature: 0.5, concurrency: 4, tool_choice: required}\n"
    )
    config = load_config(path)
    suite = suite_models({"openai:gpt-4.1-mini": {"temperature": 0.1, "max_tokens": 99}}, "suite")
    settings = resolve_settings(
        "openai:gpt-4.1-mini", suite=suite, config=config, overrides={"concurrency": 8}
    )
    assert settings.temperature == 0.5
    assert settings.max_tokens == 99
    assert settings.concurrency == 8
    assert settings.max_retries == 2
    assert settings.tool_choice.mode == "required"


def test_an_unknown_setting_names_the_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "toolproof.yaml"
    path.write_text("models:\n  openai:gpt-4.1-mini: {temprature: 0}\n")
    with pytest.raises(SuiteError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message and "temprature" in message and "\n" not in message


def test_an_unknown_top_level_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "toolproof.yaml"
    path.write_text("model: {}\n")
    with pytest.raises(SuiteError, match="unknown key 'model'"):
        load_config(path)


def test_a_bad_value_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "toolproof.yaml"
    path.write_text("models:\n  x:y: {temperature: 9}\n")
    with pytest.raises(SuiteError, match="temperature"):
        load_config(path)


def test_suite_settings_accept_the_models_level() -> None:
    layer = suite_models({"models": {"a:b": {"temperature": 0}}}, "suite.yaml")
    assert layer == {"a:b": {"temperature": 0}}
    with pytest.raises(SuiteError, match="unknown setting 'nope'"):
        suite_models({"a:b": {"nope": 1}}, "suite.yaml")

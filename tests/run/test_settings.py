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


def test_trusted_commands_come_from_the_users_config_split_like_a_shell(tmp_path: Path) -> None:
    from toolproof.run import trust_from

    config = tmp_path / "toolproof.yaml"
    config.write_text("trusted_commands:\n  - npx -y '@scope/server' .\n")
    trust = trust_from(load_config(config), allow_code=True)
    assert trust.commands == frozenset({("npx", "-y", "@scope/server", ".")})
    assert trust_from(None, allow_code=True).commands == frozenset()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("trusted_commands: npx server\n", "trusted_commands"),
        ("trusted_commands: ['']\n", "trusted_commands[0]"),
        ('trusted_commands: ["npx \'x"]\n', "trusted_commands[0]"),
        ("trusted_commands: [3]\n", "trusted_commands[0]"),
    ],
)
def test_a_bad_trusted_command_names_the_field(tmp_path: Path, text: str, where: str) -> None:
    config = tmp_path / "toolproof.yaml"
    config.write_text(text)
    with pytest.raises(SuiteError) as caught:
        load_config(config)
    assert f"{where}:" in str(caught.value)

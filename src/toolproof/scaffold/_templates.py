"""The text of the files ``toolproof init`` writes."""

from __future__ import annotations

import json
from typing import Any

from toolproof.types import SuiteTool

TODO_TAG = "todo"

EXAMPLE_TOOL = SuiteTool(
    name="get_weather",
    description="Current weather at a place. An example tool: replace it with yours.",
    parameters={
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country, e.g. Paris, France."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
)

GITIGNORE = """\
# toolproof: run folders and the answer cache
runs/
.toolproof/
"""

SYSTEM = """\
# The system prompt: replace it with the one your application sends, so the
# model is tested under the instructions it really gets.
system: |-
  You are a helpful assistant. Use the tools you are given when they help.
  If information a tool needs is missing, ask for it; never guess it.
"""


def header(name: str, source: str | None) -> str:
    origin = f"from {source}" if source else "with an example tool"
    recheck = (
        f"# Check the tools against their source: toolproof tools import {_arg(source)} --check .\n"
        if source
        else ""
    )
    return (
        "# yaml-language-server: $schema=toolproof.schema.json\n"
        "#\n"
        f"# A toolproof suite, scaffolded by `toolproof init` {origin}.\n"
        f"# Every case is a template tagged '{TODO_TAG}': write the real request and the\n"
        "# expected call, then remove the tag. `toolproof validate .` lists those left.\n"
        f"{recheck}"
        "format: 1\n"
        f"suite: {json.dumps(name)}\n"
    )


def _arg(source: str | None) -> str:
    text = source or ""
    return f"'{text}'" if any(c in text for c in " \"'$;&|") else text


def positive_case(tool: SuiteTool) -> str:
    hint = tool.description.split("\n")[0].strip()
    prompt = f"TODO: a request that needs {tool.name}" + (f" ({hint})" if hint else "")
    example = example_args(tool)
    lines = [
        f"  - id: {json.dumps(tool.name + '-call')}",
        f"    tags: [{TODO_TAG}, smoke]",
        f"    prompt: {json.dumps(prompt, ensure_ascii=False)}",
        "    expect:",
        f"      call: {json.dumps(tool.name)}",
        "      # TODO: replace extra_args with the arguments you expect, e.g.",
        f"      # args: {json.dumps(example, ensure_ascii=False)}",
        "      extra_args: true",
    ]
    return "\n".join(lines) + "\n"


def no_call_case() -> str:
    return (
        "  # Small talk: the model should answer without calling any tool.\n"
        "  - id: no-call\n"
        f"    tags: [{TODO_TAG}, smoke]\n"
        '    prompt: "Hi! What can you help me with?"\n'
        "    expect: {kind: text}\n"
    )


def clarification_case(tool: SuiteTool, missing: str) -> str:
    prompt = f"TODO: a request for {tool.name} that leaves out {missing}"
    return (
        f"  # {tool.name} needs {missing}: without it, the model should ask, not guess.\n"
        f"  - id: {json.dumps('clarify-' + tool.name)}\n"
        f"    tags: [{TODO_TAG}, smoke]\n"
        f"    prompt: {json.dumps(prompt, ensure_ascii=False)}\n"
        "    expect:\n"
        "      kind: clarify\n"
        f"      forbidden: [{json.dumps(tool.name)}]\n"
    )


def example_args(tool: SuiteTool) -> dict[str, Any]:
    """A plausible value for each required argument (or the first one), for a comment."""
    props = tool.parameters.get("properties")
    if not isinstance(props, dict) or not props:
        return {}
    required = [n for n in tool.parameters.get("required") or [] if n in props]
    names = required or list(props)[:1]
    return {name: _example(props[name]) for name in names}


def _example(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "..."
    for key in ("examples", "enum"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    return {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}.get(
        str(kind), "..."
    )


#: How the generated workflow installs toolproof by default: from a checkout of
#: toolproof, as README says (toolproof is not on the package index).
DEFAULT_CI_INSTALL = "pip install -e ./toolproof"


def workflow(suite_path: str, install: str = DEFAULT_CI_INSTALL) -> str:
    """The GitHub Actions workflow ``init`` writes; ``install``: the command that installs
    toolproof on the runner (one setting, ``TOOLPROOF_INSTALL``)."""
    return f"""\
# toolproof on GitHub Actions: the suite's smoke cases on every pull request.
# Set MODEL, and add the provider's API key as a repository secret.
#
# TOOLPROOF_INSTALL is how the job installs toolproof. toolproof is not on the
# package index: it is installed from a checkout of toolproof with pip install -e,
# as its README says. The default expects that checkout at ./toolproof (a git
# submodule, or an actions/checkout step with `repository:` and `path: toolproof`);
# set it to any command that installs toolproof, e.g.
# pip install "toolproof @ git+https://HOST/OWNER/toolproof@TAG".
#
# A pull request may change anything in the checkout, so the run folder and the
# report go to a fresh folder outside it ($RUNNER_TEMP), the settings file
# (toolproof.yaml) and the gate policy come from the base branch, and the suite's
# own Python never runs (no --allow-code). `toolproof gate` fails the job unless
# the gate passed.
#
# The gate policy is what the gate holds a run to: thresholds, as a suite's
# `thresholds:`, and max_infra_errors (see toolproof's docs/gate-integrity.md).
# Keep it in SUITE/gate-policy.yaml; this job reads it from the base branch, and
# while the base branch has none it uses toolproof's default thresholds with
# max_infra_errors: 5%. The suite's own `thresholds:` are not used here: a pull
# request could lower them.
name: toolproof

on:
  pull_request:
  workflow_dispatch:

permissions:
  contents: read

env:
  SUITE: {_yaml_scalar(suite_path)}
  MODEL: openai:gpt-4.1-mini
  OPENAI_API_KEY: ${{{{ secrets.OPENAI_API_KEY }}}}
  TOOLPROOF_INSTALL: {_yaml_scalar(install)}

jobs:
  smoke:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install toolproof
        run: eval "$TOOLPROOF_INSTALL"
      - name: Take the settings and the gate policy from the base branch
        env:
          BASE_REF: ${{{{ github.base_ref }}}}
        run: |
          echo "{{}}" > "$RUNNER_TEMP/toolproof.yaml"
          echo "max_infra_errors: 5%" > "$RUNNER_TEMP/gate-policy.yaml"
          if [ -n "$BASE_REF" ]; then
            git fetch --depth 1 origin "$BASE_REF"
            if git cat-file -e FETCH_HEAD:toolproof.yaml 2>/dev/null; then
              git show FETCH_HEAD:toolproof.yaml > "$RUNNER_TEMP/toolproof.yaml"
            fi
            if git cat-file -e "FETCH_HEAD:$SUITE/gate-policy.yaml" 2>/dev/null; then
              git show "FETCH_HEAD:$SUITE/gate-policy.yaml" > "$RUNNER_TEMP/gate-policy.yaml"
            fi
          fi
      - run: toolproof validate "$SUITE" --config "$RUNNER_TEMP/toolproof.yaml"
      - name: Run the smoke cases
        run: |
          toolproof run "$SUITE" --model "$MODEL" --tags smoke --repeats 3 \\
            --config "$RUNNER_TEMP/toolproof.yaml" --max-infra-errors 5% \\
            --quiet --out "$RUNNER_TEMP/toolproof/smoke"
      # runs after a failed run too, for the report; it refuses an incomplete run (exit 4)
      - name: Gate on the base branch's policy
        if: always()
        run: |
          out="$RUNNER_TEMP/toolproof"
          if [ ! -f "$out/smoke/manifest.json" ]; then
            echo "error: the run left no run folder to gate" >&2
            exit 2
          fi
          toolproof gate "$out/smoke" --suite "$SUITE" \\
            --config "$RUNNER_TEMP/toolproof.yaml" --policy "$RUNNER_TEMP/gate-policy.yaml" \\
            --markdown "$out/toolproof.md"
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: toolproof-smoke
          path: ${{{{ runner.temp }}}}/toolproof
"""


def _yaml_scalar(text: str) -> str:
    """A YAML scalar for ``text``: plain when it reads back the same, else quoted."""
    import yaml

    plain = text if text and text.strip() == text and "\n" not in text else None
    if plain is not None:
        try:
            if yaml.safe_load(f"k: {plain}") == {"k": plain}:
                return plain
        except yaml.YAMLError:
            pass
    return json.dumps(text, ensure_ascii=False)

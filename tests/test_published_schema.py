import json
from pathlib import Path

from toolproof.suite import suite_json_schema

ROOT = Path(__file__).resolve().parents[1]


def test_committed_schema_is_current() -> None:
    """toolproof.schema.json at the root is what `toolproof schema` prints today."""
    committed = json.loads((ROOT / "toolproof.schema.json").read_text(encoding="utf-8"))
    assert committed == suite_json_schema(), "run: toolproof schema -o toolproof.schema.json"


def test_example_suite_validates_against_the_published_schema() -> None:
    import jsonschema
    import yaml

    data = yaml.safe_load((ROOT / "examples" / "support" / "suite.yaml").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(suite_json_schema()).validate(data)

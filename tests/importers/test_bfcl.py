"""``toolproof import bfcl`` on a small sample in BFCL's own format (fixtures/bfcl)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.importers import bfcl_data_dir, import_bfcl, write_bfcl
from toolproof.importers._bfcl import convert_function
from toolproof.suite import load_suite_checked

SAMPLE = Path(__file__).parent / "fixtures" / "bfcl"
runner = CliRunner()


def _cases(result: object, category: str) -> dict[str, dict[str, object]]:
    suites = {s.category.name: s for s in result.suites}  # type: ignore[attr-defined]
    return {c["id"]: c for c in suites[category].cases}


def test_one_suite_per_category_and_memory_said_missing() -> None:
    result = import_bfcl(SAMPLE)
    names = sorted(s.category.name for s in result.suites)
    assert names == ["irrelevance", "parallel", "simple_java", "simple_python"]
    assert [len(s.cases) for s in sorted(result.suites, key=lambda s: s.category.name)] == [
        1,
        1,
        1,
        3,
    ]
    (skip,) = result.categories_skipped
    assert skip.where.endswith("BFCL_v4_memory.json")
    assert "needs BFCL's memory backends" in skip.reason
    assert skip.reason.endswith("(1 entries)")
    assert result.skipped == []


def test_answer_format_maps_to_one_of_and_optional_never_combinations() -> None:
    cases = _cases(import_bfcl(SAMPLE), "simple_python")
    assert cases["simple_python_0"]["expect"] == {
        "call": "geometry.triangle_area",
        "args": {"base": 10, "height": 5, "unit": {"optional": {"one_of": ["units", ""]}}},
    }
    weather = cases["simple_python_1"]["expect"]["args"]  # type: ignore[index]
    assert weather["city"] == {"one_of": ["Washington D.C.", "Washington DC"]}
    # the bfcl profile keeps "Celsius", outside the enum (BFCL checks no enum); BFCL's type
    # check refuses the null (neither a string nor the type of the first acceptable value)
    assert weather["unit"] == {"optional": {"one_of": ["celsius", "Celsius", ""]}}
    # the strict profile: "Celsius" is the enum member "celsius"; null breaks the schema
    strict = _cases(import_bfcl(SAMPLE, profile="strict"), "simple_python")
    assert strict["simple_python_1"]["expect"]["args"]["unit"] == {"optional": "celsius"}  # type: ignore[index]
    assert weather["window"] == 2.5
    booking = cases["simple_python_2"]["expect"]["args"]  # type: ignore[index]
    assert booking["options"] == {"seats": 2, "seat": {"optional": {"one_of": ["aisle", ""]}}}
    assert booking["tags"] == {"optional": ["business", "aisle"]}


def test_values_breaking_the_schema_are_left_out_and_counted() -> None:
    result = import_bfcl(SAMPLE)
    (dropped,) = result.dropped
    assert dropped.where.endswith("BFCL_v4_simple_python.json:2")
    assert "None" in dropped.reason


def test_types_map_to_json_schema_as_bfcl_maps_them() -> None:
    cases = _cases(import_bfcl(SAMPLE), "simple_python")
    (tool,) = cases["simple_python_1"]["tools"]  # type: ignore[misc]
    window = tool["parameters"]["properties"]["window"]
    assert window["type"] == "number" and window["format"] == "float"
    assert window["description"].endswith("This is a float type value.")
    assert tool["parameters"]["type"] == "object"
    assert tool["description"].endswith("Note that the provided function is in Python 3 syntax.")
    (book,) = cases["simple_python_2"]["tools"]  # type: ignore[misc]
    assert book["parameters"]["properties"]["options"]["type"] == "object"


def test_java_parameters_are_source_text() -> None:
    case = _cases(import_bfcl(SAMPLE), "simple_java")["simple_java_0"]
    (tool,) = case["tools"]  # type: ignore[misc]
    props = tool["parameters"]["properties"]
    assert {p["type"] for p in props.values()} == {"string"}
    assert (
        "This is Java integer type parameter in string representation."
        in props["limit"]["description"]
    )
    assert case["expect"] == {
        "call": "Pool.setLimit",
        "args": {"limit": "50", "strict": "true", "name": {"optional": {"one_of": ["main", ""]}}},
    }


def test_irrelevance_expects_no_call() -> None:
    case = _cases(import_bfcl(SAMPLE), "irrelevance")["irrelevance_0"]
    assert case["expect"] == {"kind": "none"}


def test_written_suites_validate(tmp_path: Path) -> None:
    written = write_bfcl(import_bfcl(SAMPLE), tmp_path)
    assert len(written) == 4
    for path in written:
        loaded, errors = load_suite_checked(path.parent)
        assert errors == [], errors
        assert loaded.suite.defaults.matching == "bfcl"
    strict = write_bfcl(import_bfcl(SAMPLE, profile="strict"), tmp_path / "strict")
    loaded, _ = load_suite_checked(strict[0].parent)
    assert loaded.suite.defaults.matching == "strict"


def test_a_truncated_file_gives_a_located_counted_skip(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / "BFCL_v4_simple_python.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) - 40], encoding="utf-8")
    result = import_bfcl(data)
    (skip,) = result.skipped
    assert skip.where == f"{path}:3"
    assert "not JSON" in skip.reason
    assert len(_cases(result, "simple_python")) == 2


def test_an_unknown_category_is_counted_not_imported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "BFCL_v4_brand_new.json").write_text('{"id": "brand_new_0"}', encoding="utf-8")
    result = import_bfcl(data)
    assert any(
        s.where.endswith("BFCL_v4_brand_new.json") and "unknown category" in s.reason
        for s in result.categories_skipped
    )


def test_missing_ground_truth_is_a_located_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "possible_answer" / "BFCL_v4_parallel.json").unlink()
    with pytest.raises(UserError, match=r"possible_answer/BFCL_v4_parallel\.json: missing"):
        import_bfcl(data)


def test_an_entry_whose_answer_names_an_undefined_parameter_is_skipped(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    answers = data / "possible_answer" / "BFCL_v4_parallel.json"
    entry = json.loads(answers.read_text(encoding="utf-8"))
    entry["ground_truth"][0]["math.factorial"]["precision"] = [2]
    answers.write_text(json.dumps(entry), encoding="utf-8")
    result = import_bfcl(data)
    (skip,) = result.skipped
    assert skip.where.endswith("BFCL_v4_parallel.json:1")
    assert "'precision'" in skip.reason and "does not define" in skip.reason


def test_deep_or_odd_schemas_are_skips_not_crashes() -> None:
    deep: dict[str, object] = {"type": "string"}
    for _ in range(200):
        deep = {"type": "dict", "properties": {"x": deep}}
    fn = {"name": "f", "parameters": {"type": "dict", "properties": {"x": deep}}}
    with pytest.raises(ValueError, match="nested deeper"):
        convert_function(fn, "python")
    with pytest.raises(ValueError, match="'parameters' is not an object"):
        convert_function({"name": "f", "parameters": []}, "python")
    empty = convert_function({"name": "f", "description": "d"}, "python")
    assert empty["parameters"] == {"type": "object", "properties": {}}


def test_unknown_category_option_and_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match="unknown BFCL category 'simpel'"):
        import_bfcl(SAMPLE, ["simpel"])
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UserError, match=r"pip install -e '\.\[bfcl\]' in the toolproof checkout"):
        from toolproof._shared import install_hint

        monkeypatch.setattr(install_hint, "source_folder", lambda: None)
        bfcl_data_dir()


def test_cli_writes_suites_and_refuses_to_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "suites"
    first = runner.invoke(app, ["import", "bfcl", "--data", str(SAMPLE), "-o", str(out)])
    assert first.exit_code == 0, first.output
    assert "3 cases (simple, python)" in first.output
    assert "6 cases in 4 suites; 0 entries skipped" in first.output
    assert "not imported:" in first.output and "memory" in first.output
    again = runner.invoke(app, ["import", "bfcl", "--data", str(SAMPLE), "-o", str(out)])
    assert again.exit_code != 0
    assert isinstance(again.exception, UserError) and "exists (--force" in str(again.exception)
    forced = runner.invoke(
        app, ["import", "bfcl", "--data", str(SAMPLE), "-o", str(out), "--force"]
    )
    assert forced.exit_code == 0, forced.output


def test_text_from_the_data_is_escaped_in_the_output(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / "BFCL_v4_irrelevance.json"
    path.write_text(
        json.dumps({"id": "irrelevance_\x1b[31mred", "question": [], "function": []}),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["import", "bfcl", "--data", str(data), "-o", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert "no 'question'" in result.output


def test_underscore_names_for_providers_that_refuse_dots(tmp_path: Path) -> None:
    result = import_bfcl(SAMPLE, underscore_names=True)
    case = _cases(result, "simple_python")["simple_python_0"]
    assert case["tools"][0]["name"] == "geometry_triangle_area"  # type: ignore[index]
    assert case["expect"]["call"] == "geometry_triangle_area"  # type: ignore[index]
    parallel = _cases(result, "parallel")["parallel_0"]
    assert [c["tool"] for c in parallel["expect"]["calls"]] == ["math_factorial"] * 2  # type: ignore[index]
    for path in write_bfcl(result, tmp_path):
        _, errors = load_suite_checked(path.parent)
        assert errors == []
    assert (
        _cases(import_bfcl(SAMPLE), "parallel")["parallel_0"]["tools"][0]["name"]
        == "math.factorial"
    )  # type: ignore[index]


def test_the_bfcl_profile_keeps_what_bfcls_type_check_can_pass(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    answers = data / "possible_answer" / "BFCL_v4_simple_python.json"
    lines = answers.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[1])
    # for a float parameter: a string first (BFCL's "variable"), a float, a boolean
    entry["ground_truth"][0]["get_weather"]["window"] = ["unknown", 2.5, True]
    lines[1] = json.dumps(entry)
    answers.write_text("\n".join(lines), encoding="utf-8")
    result = import_bfcl(data)
    window = _cases(result, "simple_python")["simple_python_1"]["expect"]["args"]["window"]  # type: ignore[index]
    # the string is compared exactly, as BFCL compares a variable; the boolean is neither
    # the parameter's type nor the first value's, so BFCL's type check refuses it
    assert window == {"one_of": [{"exact": "unknown"}, 2.5]}
    (dropped,) = result.dropped
    assert "True" in dropped.reason and "None" in dropped.reason
    strict = import_bfcl(data, profile="strict")
    assert _cases(strict, "simple_python")["simple_python_1"]["expect"]["args"]["window"] == 2.5  # type: ignore[index]
    for path in write_bfcl(result, tmp_path / "out"):
        _, errors = load_suite_checked(path.parent)
        assert errors == []


@pytest.mark.parametrize("content", ["", "\n\n", '{"no_id": 1}\n', "not json\n"])
def test_an_answers_file_with_no_usable_entry_is_an_error_naming_it(
    tmp_path: Path, content: str
) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    answers = data / "possible_answer" / "BFCL_v4_parallel.json"
    answers.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(f"{answers}: ") + ".*no entry"):
        import_bfcl(data)
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "bfcl", "--data", str(data), "-o", str(out)])
    assert result.exit_code != 0
    assert isinstance(result.exception, UserError)
    assert not out.exists()


def test_an_answers_file_that_cannot_be_read_is_an_error_naming_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    answers = data / "possible_answer" / "BFCL_v4_parallel.json"
    answers.write_bytes(b"\xff\xfe not utf-8\n")
    with pytest.raises(UserError, match=re.escape(f"{answers}: cannot read")):
        import_bfcl(data)


def test_a_line_naming_a_key_twice_is_a_located_counted_skip(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    path = data / "BFCL_v4_simple_python.json"
    lines = path.read_text(encoding="utf-8").splitlines()
    # the same key twice: a plain JSON reader keeps the last value without a word
    lines[1] = lines[1].replace('{"id": ', '{"question": [], "id": ', 1)
    assert lines[1].count('"question"') == 2
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = import_bfcl(data, ["simple_python"])
    (skip,) = result.skipped
    assert skip.where == f"{path}:2"
    assert "duplicate key 'question'" in skip.reason
    assert len(_cases(result, "simple_python")) == 2


def test_a_link_leading_out_of_the_data_folder_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    outside = tmp_path / "outside.json"
    answers = data / "possible_answer" / "BFCL_v4_parallel.json"
    outside.write_bytes(answers.read_bytes())
    answers.unlink()
    answers.symlink_to(outside)
    with pytest.raises(UserError, match="through a symbolic link") as raised:
        import_bfcl(data)
    assert str(answers) in str(raised.value) and str(outside) in str(raised.value)
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "bfcl", "--data", str(data), "-o", str(out)])
    assert result.exit_code != 0 and isinstance(result.exception, UserError)
    assert not out.exists()
    # a whole folder linked from outside is refused the same way
    answers.unlink()
    answers.write_bytes(outside.read_bytes())
    elsewhere = tmp_path / "elsewhere"
    (data / "possible_answer").rename(elsewhere)
    (data / "possible_answer").symlink_to(elsewhere)
    with pytest.raises(UserError, match="through a symbolic link"):
        import_bfcl(data)


def test_a_link_inside_the_data_folder_is_followed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    answers = data / "possible_answer" / "BFCL_v4_parallel.json"
    kept = data / "kept.txt"
    answers.rename(kept)
    answers.symlink_to(kept)
    assert len(_cases(import_bfcl(data), "parallel")) == len(
        _cases(import_bfcl(SAMPLE), "parallel")
    )
    linked = tmp_path / "linked"
    linked.symlink_to(data)  # --data itself may be a link: the folder it names is the data's
    assert _cases(import_bfcl(linked), "parallel")


@pytest.mark.parametrize("name", ["BFCL_v4_irrelevance.json", "BFCL_v4_parallel.json"])
def test_a_category_file_with_no_entry_is_an_error_naming_it(tmp_path: Path, name: str) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / name).write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(f"{data / name}: holds no entry")):
        import_bfcl(data)


def test_a_category_asked_for_whose_file_is_missing_is_an_error(tmp_path: Path) -> None:
    """--category NAME with no BFCL_v4_NAME.json in the data folder is an error naming
    the file (nothing written), not a quiet import of no suite."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    (data / "BFCL_v4_parallel.json").unlink()
    with pytest.raises(UserError, match=r"BFCL_v4_parallel\.json.*--category parallel"):
        import_bfcl(data, ["simple_python", "parallel"])
    out = tmp_path / "suites"
    args = ["import", "bfcl", "--data", str(data), "-o", str(out), "--category", "parallel"]
    refused = runner.invoke(app, args)
    assert isinstance(refused.exception, UserError), refused.output
    assert not out.exists()
    # a category the folder holds is imported as before
    assert [s.category.name for s in import_bfcl(data, ["simple_python"]).suites] == [
        "simple_python"
    ]


def test_every_skipped_entry_is_counted_by_file_when_the_list_is_cut(tmp_path: Path) -> None:
    """Past the first 20 skipped entries, the rest are not listed one by one but counted
    per file, so a truncated file late in the list is still named."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    java = data / "BFCL_v4_simple_java.json"
    first = java.read_text(encoding="utf-8").splitlines()[0]
    extra = [json.dumps({**json.loads(first), "id": f"simple_java_{n}"}) for n in range(100, 125)]
    java.write_text("\n".join([first, *extra]) + "\n", encoding="utf-8")  # 25 without answers
    entries = data / "BFCL_v4_simple_python.json"
    text = entries.read_text(encoding="utf-8")
    truncated = text.splitlines()[0][:40]  # a line cut short, listed after the 20th skip
    entries.write_text(text.rstrip("\n") + "\n" + truncated, encoding="utf-8")
    out = tmp_path / "suites"
    result = runner.invoke(app, ["import", "bfcl", "--data", str(data), "-o", str(out)])
    assert result.exit_code == 0, result.output
    listed = [line for line in result.output.splitlines() if line.startswith("skipped: ")]
    assert len(listed) == 21, result.output
    assert "26 entries skipped" in result.output
    assert listed[-1] == f"skipped: 6 more, not listed: {java} 5, {entries} 1", listed[-1]


def test_an_output_place_that_cannot_hold_the_suites_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    """-o under a file, or a suite file that is a folder, is a UserError naming the path
    before anything is written (it was a traceback, with --force too)."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match=r"a_file: not a folder"):
        write_bfcl(import_bfcl(SAMPLE), a_file / "suites")
    out = tmp_path / "suites"
    (out / "simple_python" / "suite.yaml").mkdir(parents=True)
    for force in (False, True):
        with pytest.raises(UserError, match=r"simple_python/suite\.yaml: is a folder"):
            write_bfcl(import_bfcl(SAMPLE), out, force=force)
    assert sorted(p.name for p in out.iterdir()) == ["simple_python"]  # nothing written
    args = ["import", "bfcl", "--data", str(SAMPLE), "-o", str(a_file / "x"), "--force"]
    refused = runner.invoke(app, args)
    assert isinstance(refused.exception, UserError), refused.output


def test_the_install_hints_for_bfcl_name_something_pip_can_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """toolproof is not on the package index: the BFCL page and the missing-package
    messages never say pip install 'toolproof[bfcl]' (which fails), but the checkout."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "bfcl.md").read_text("utf-8")
    assert "pip install 'toolproof[bfcl]'" not in page
    assert 'pip install -e ".[bfcl]"' in page
    from toolproof._shared import install_hint
    from toolproof.importers import bfcl_env

    monkeypatch.setattr(install_hint, "source_folder", lambda: None)

    def missing(name: str) -> object:
        raise ModuleNotFoundError("No module named 'bfcl_eval'", name="bfcl_eval")

    monkeypatch.setattr(bfcl_env.importlib, "import_module", missing)
    with pytest.raises(ModuleNotFoundError) as caught:
        bfcl_env.BfclEnvironment().setup({"bfcl": {"involved_classes": ["MathAPI"]}})
    assert "toolproof[bfcl]'" not in str(caught.value)
    assert "pip install -e '.[bfcl]' in the toolproof checkout" in str(caught.value)

"""OpenAPI 3.0 / 3.1 specs: one tool per operation."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.importers import OperationFilter, import_tools, read_openapi
from toolproof.importers._problems import ImportProblem

DATA = Path(__file__).parent / "data"


def _tools(name: str, **kwargs: object) -> dict[str, object]:
    result = import_tools(str(DATA / name), **kwargs)  # type: ignore[arg-type]
    return {t.name: t for t in result.tools}


def _notes(name: str) -> list[str]:
    return [n.render() for n in import_tools(str(DATA / name)).notes]


def test_petstore_operations_become_tools() -> None:
    tools = _tools("petstore.yaml")
    assert list(tools) == [
        "listPets",
        "createPet",
        "showPetById",
        "update-pet",
        "deletePet",
        "get_store_inventory",
        "placeOrder",
        "listPets_2",
    ]
    effects = {name: (t.effect.value, t.risk.value) for name, t in tools.items()}  # type: ignore[attr-defined]
    assert effects["listPets"] == ("read", "low")
    assert effects["createPet"] == ("write", "medium")
    assert effects["update-pet"] == ("write", "medium")
    assert effects["deletePet"] == ("destructive", "high")


def test_parameters_from_query_header_path_and_body() -> None:
    tools = _tools("petstore.yaml")
    listing = tools["listPets"].parameters  # type: ignore[attr-defined]
    assert list(listing["properties"]) == ["limit", "status", "X-Request-ID"]
    assert listing["properties"]["limit"]["description"].startswith("How many items")
    assert listing["properties"]["status"]["type"] == ["string", "null"]  # 3.0 nullable
    assert listing["properties"]["status"]["enum"][-1] is None
    assert "required" not in listing
    create = tools["createPet"].parameters  # type: ignore[attr-defined]
    assert create["required"] == ["name"]
    assert create["properties"]["name"]["examples"] == ["Rex"]  # 3.0 example
    update = tools["update-pet"].parameters  # type: ignore[attr-defined]
    # path-level parameter via $ref, colliding with a body field of the same name
    assert list(update["properties"]) == ["petId_path", "name", "tag", "petId"]
    assert update["required"] == ["petId_path", "name"]
    assert "id" not in update["properties"]  # readOnly in the request body
    order = tools["placeOrder"].parameters  # type: ignore[attr-defined]
    assert order["properties"]["quantity"] == {"type": "integer", "exclusiveMinimum": 1}


def test_description_from_summary_and_description() -> None:
    tools = _tools("petstore.yaml")
    assert tools["createPet"].description == (  # type: ignore[attr-defined]
        "Create a pet\n\nAdds a pet to the store. The new pet gets an id."
    )
    assert tools["deletePet"].description == "Delete a pet for good."  # type: ignore[attr-defined]


def test_everything_left_out_is_reported() -> None:
    notes = "\n".join(_notes("petstore.yaml"))
    assert "cookie parameter 'session' not carried" in notes
    assert "header 'Authorization' is set by the client" in notes
    assert "name collision: POST /pets/{petId}/photo and GET /pets both give 'listPets'" in notes
    assert "request body of type image/png not carried" in notes
    assert "GET /store/inventory has no operationId" in notes
    assert "no summary or description" in notes
    assert "OpenAPI extension(s) dropped from schemas: x-ui-hint" in notes
    assert "collides with another argument of that name; named 'petId_path'" in notes
    assert "operationId 'update-pet'" not in notes  # valid everywhere, kept


def test_operation_ids_are_sanitised() -> None:
    spec = {
        "openapi": "3.0.0",
        "paths": {"/a": {"get": {"operationId": "get a/b.c", "summary": "x"}}},
    }
    result = read_openapi(spec, "s.yaml")
    assert result.tools[0].name == "get_a_b_c"
    assert any("is not a valid tool name everywhere" in n.message for n in result.notes)


def test_recursive_refs_are_cut_with_a_note() -> None:
    result = import_tools(str(DATA / "recursive.yaml"))
    (tool,) = result.tools
    props = tool.parameters["properties"]
    children = props["children"]["items"]
    assert children["type"] == "object"
    assert "recursive reference to #/components/schemas/Folder, cut here" in children["description"]
    manager = props["owner"]["properties"]["manager"]
    assert "recursive reference to #/components/schemas/User" in manager["description"]
    cut = [n for n in result.notes if "recursive $ref" in n.message]
    assert [n.where for n in cut] == [
        "components.schemas.Folder.properties.children.items",
        "components.schemas.User.properties.manager",
    ]


def test_all_of_merged_and_one_of_kept() -> None:
    result = import_tools(str(DATA / "composition.yaml"))
    pay, refund = result.tools
    props = pay.parameters["properties"]
    assert list(props) == ["amount", "currency", "method"]
    assert pay.parameters["required"] == ["amount", "currency", "method"]
    assert [v["required"] for v in props["method"]["oneOf"]] == [
        ["kind", "number"],
        ["kind", "iban"],
    ]
    assert "discriminator" not in props["method"]
    assert any("'discriminator' has no JSON Schema equivalent" in n.message for n in result.notes)
    # a closed part would reject the other part's properties: not merged, kept whole as the body
    assert list(refund.parameters["properties"]) == ["body"]
    assert len(refund.parameters["properties"]["body"]["allOf"]) == 2


def test_openapi_31_type_arrays_and_ref_siblings() -> None:
    result = import_tools(str(DATA / "spec31.yaml"))
    (tool,) = result.tools
    props = tool.parameters["properties"]
    assert props["folder"]["type"] == ["string", "null"]
    assert props["tags"]["items"] == {"type": "string", "minLength": 1}
    assert props["pinned"] == {"type": "boolean", "description": "Keep it on top"}
    assert tool.effect == "write"
    assert tool.parameters["required"] == ["id"]
    assert result.format == "openapi-3.1"


@pytest.mark.parametrize(
    ("only", "expected"),
    [
        (OperationFilter(include_tags=("admin",)), ["deletePet"]),
        (
            OperationFilter(exclude_tags=("pets", "admin")),
            ["get_store_inventory", "placeOrder", "listPets"],
        ),
        (OperationFilter(include_paths=("/store/*",)), ["get_store_inventory", "placeOrder"]),
        (OperationFilter(exclude_paths=("/pets*",)), ["get_store_inventory", "placeOrder"]),
    ],
)
def test_include_and_exclude(only: OperationFilter, expected: list[str]) -> None:
    assert list(_tools("petstore.yaml", only=only)) == expected


def test_swagger_2_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("info: {title: x}\nswagger: '2.0'\npaths: {}\n")
    with pytest.raises(SuiteError) as err:
        import_tools(str(path))
    assert err.value.line == 2
    assert "Swagger 2.0 is not supported" in str(err.value)


def test_dangling_ref_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "openapi: 3.0.0\npaths:\n  /a:\n    post:\n      requestBody:\n        content:\n"
        "          application/json:\n            schema: {$ref: '#/components/schemas/Nope'}\n"
    )
    with pytest.raises(SuiteError) as err:
        import_tools(str(path))
    assert err.value.line == 8
    assert "$ref '#/components/schemas/Nope' points at nothing" in str(err.value)


def test_external_ref_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "openapi: 3.1.0\npaths:\n  /a:\n    get:\n      parameters:\n"
        "        - {name: q, in: query, schema: {$ref: 'other.yaml#/Q'}}\n"
    )
    with pytest.raises(SuiteError, match=r"external \$ref 'other\.yaml#/Q' is not supported"):
        import_tools(str(path))


def test_refs_that_grow_exponentially_are_refused() -> None:
    schemas = {
        f"L{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/components/schemas/L{i + 1}"} for j in range(10)},
        }
        for i in range(8)
    }
    schemas["L8"] = {"type": "string"}
    spec = {
        "openapi": "3.0.0",
        "paths": {
            "/a": {
                "post": {
                    "operationId": "a",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/L0"}}
                        }
                    },
                }
            }
        },
        "components": {"schemas": schemas},
    }
    with pytest.raises(ImportProblem, match="more than 50000 schema nodes"):
        read_openapi(spec, "s.yaml")

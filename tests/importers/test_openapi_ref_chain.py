"""A chain of 600 local $refs is one located error, not a RecursionError (issue 24, item 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _chain(n: int) -> dict[str, object]:
    schemas: dict[str, object] = {
        f"S{i}": {"$ref": f"#/components/schemas/S{i + 1}"} for i in range(n)
    }
    schemas[f"S{n}"] = {"type": "string"}
    body = {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/S0"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/x": {
                "post": {
                    "operationId": "op",
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {"schemas": schemas},
    }


def _import(tmp_path: Path, n: int) -> subprocess.CompletedProcess[str]:
    (tmp_path / "spec.json").write_text(json.dumps(_chain(n)))
    return subprocess.run(
        [sys.executable, "-m", "toolproof", "tools", "import", "spec.json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )


def test_a_chain_of_600_refs_is_one_located_error(tmp_path: Path) -> None:
    proc = _import(tmp_path, 600)
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: spec.json:1:") and "$refs nest more than 64" in proc.stderr


def test_a_short_chain_is_inlined(tmp_path: Path) -> None:
    proc = _import(tmp_path, 10)
    assert proc.returncode == 0, proc.stderr
    assert "a: {type: string}" in proc.stdout or "type: string" in proc.stdout

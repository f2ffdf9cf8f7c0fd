import importlib

import toolproof
from tests.subprocess_support import fresh_python


def test_all_matches_the_lazy_exports() -> None:
    assert set(toolproof.__all__) == {"__version__", *toolproof._EXPORTS}


def test_every_public_name_resolves() -> None:
    for name in toolproof.__all__:
        assert getattr(toolproof, name) is not None, name


def test_all_lists_every_exported_name_of_the_typed_block() -> None:
    source = importlib.util.find_spec("toolproof").origin  # type: ignore[union-attr]
    text = open(source, encoding="utf-8").read()  # noqa: SIM115
    block = text.split("if TYPE_CHECKING:")[1].split("_EXPORTS")[0]
    imported = {w.strip(" ,()\n") for line in block.splitlines() for w in line.split("import")[-1].split(",")}
    imported = {w for w in imported if w and w.isidentifier()}
    assert imported == set(toolproof.__all__) - {"__version__"}


def test_subpackages_declare_all() -> None:
    for name in (
        "types", "suite", "grade", "stats", "report", "records", "providers",
        "importers", "scaffold", "mcpenv", "web",
    ):
        module = importlib.import_module(f"toolproof.{name}")
        for exported in module.__all__:
            assert hasattr(module, exported), f"toolproof.{name}.{exported}"


def test_importing_toolproof_is_light() -> None:
    code = "import sys, toolproof; print(any(m in sys.modules for m in ('pydantic', 'scipy', 'sklearn', 'aiohttp')))"
    out = fresh_python(code)
    assert out.strip() == "False"


def test_exported_functions_win_over_their_subpackages_in_any_import_order() -> None:
    """``toolproof.evaluate`` is both a subpackage and an exported function: whichever is
    imported first, the attribute is the function, and the module stays importable."""
    code = """
import importlib, types
from toolproof import load_run
from toolproof import evaluate
assert isinstance(evaluate, types.FunctionType), evaluate
import toolproof.evaluate
import toolproof
assert toolproof.evaluate is evaluate
module = importlib.import_module("toolproof.evaluate")
assert isinstance(module, types.ModuleType) and module.evaluate is evaluate
from toolproof.evaluate import Evaluation, load_run as again
assert again is load_run
print("ok")
"""
    assert fresh_python(code).strip() == "ok"
    first = """
import types
import toolproof.evaluate
from toolproof import evaluate, load_run
assert isinstance(evaluate, types.FunctionType), evaluate
print("ok")
"""
    assert fresh_python(first).strip() == "ok"


def test_importing_subpackages_warns_of_nothing() -> None:
    """The package's own name for the stdlib's ``types`` is not replaced by the subpackage
    ``toolproof.types`` (that made binding ``toolproof.evaluate`` fail with an ImportWarning)."""
    import subprocess
    import sys

    code = (
        "import toolproof.types, toolproof.evaluate\n"
        "from toolproof import evaluate\n"
        "assert callable(evaluate) and not hasattr(evaluate, '__path__')\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error::ImportWarning", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr

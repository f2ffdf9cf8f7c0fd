"""Loading a suite's own Python checks: suite code runs only with the user's consent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from toolproof.errors import SuiteError
from toolproof.grade import CaseCheck, FunctionCheck, function_asserts
from toolproof.types import Suite

__all__ = ["load_checks"]


def load_checks(suite: Suite, *, allow_code: bool) -> list[tuple[CaseCheck, frozenset[str] | None]]:
    """The suite's declared checks as (check, tags it is limited to), ready for the Scorer.

    Loading imports Python files from the suite's folder, so it needs
    ``allow_code=True`` (``--allow-code`` or ``allow_code`` in the user config);
    without it a suite that declares checks is refused with a clear error.
    """
    source = suite.source or "<suite>"
    base = (Path(suite.source).parent if suite.source else Path.cwd()).resolve()
    out: list[tuple[CaseCheck, frozenset[str] | None]] = []
    for i, spec in enumerate(suite.checks):
        where = ("checks", i, "python")
        if not allow_code:
            raise SuiteError(
                source,
                f"the suite declares its own Python check '{spec.python}'; running it executes "
                "code from the suite: allow it with --allow-code (or allow_code: true in your "
                "user config), or remove the check",
                path=where,
            )
        file_name, _, func = spec.python.rpartition(":")
        path = (base / file_name).resolve()
        if not path.is_relative_to(base):
            raise SuiteError(source, f"'{file_name}' is outside the suite's folder", path=where)
        if not path.is_file():
            raise SuiteError(source, f"no such file {file_name} next to the suite", path=where)
        module_spec = importlib.util.spec_from_file_location(
            f"toolproof_check_{abs(hash(str(path)))}", path
        )
        if module_spec is None or module_spec.loader is None:
            raise SuiteError(source, f"cannot load {file_name}", path=where)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        fn = getattr(module, func, None)
        if not callable(fn):
            raise SuiteError(source, f"{file_name} has no function '{func}'", path=where)
        tags = frozenset(spec.tags) if spec.tags is not None else None
        out.append((FunctionCheck(spec.python, fn), tags))
    if allow_code and any(
        c.end_state is not None and function_asserts(c.end_state.assertions) for c in suite.cases
    ):
        from toolproof.run._env import state_function_check
        from toolproof.trust import Trust

        out.append((state_function_check(suite, Trust(allow_code=True)), None))
    return out

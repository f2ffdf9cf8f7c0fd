"""pytest plugin: a suite's cases as tests, one per case and target.

Installed with toolproof (entry point group ``pytest11``). It does nothing
unless ``--toolproof-suite`` is given, and imports nothing but pytest until then.

Answers come from recorded runs or from a model::

    pytest --toolproof-suite suites/support --toolproof-records runs/x/records.jsonl
    pytest --toolproof-suite suites/support --toolproof-model openai:gpt-4.1-mini \\
           --toolproof-repeats 3

Each test is named ``toolproof::<suite>::<case>[<target>]`` and carries the
markers ``toolproof``, ``risk_<class>`` and ``tag_<tag>`` (so ``-m risk_critical``
or ``-m "tag_smoke and not risk_low"`` select cases). A case passes when every
attempt passes; the failure shows each failing attempt's reasons and diff.
A model is called once, at the first test that needs it, never at collection,
and only for the cases left after ``-k``/``-m``; ``--toolproof-out DIR`` names
the run folder, which ``toolproof gate`` can then judge.

With no test paths on the command line, only the suite's cases are collected
(not the tests under the checkout's ``testpaths``); name paths to collect both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from toolproof.evaluate import Evaluation
    from toolproof.gate import GateResult
    from toolproof.types import Record, Suite, Verdict

_STATE = pytest.StashKey["_State"]()


def _leave_toolproof_unrewritten() -> None:
    """Keep pytest from rewriting the asserts of every toolproof module.

    pytest marks each package of a distribution that ships a ``pytest11``
    plugin for assertion rewriting. toolproof's library modules need none (the
    plugin reports failures itself), and rewriting would recompile them and add
    names to their namespaces in every pytest run, used or not. This reaches
    into pytest's import hook; if its shape changes, nothing happens.
    """
    import sys

    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        cache = getattr(finder, "_marked_for_rewrite_cache", None)
        if isinstance(marked, set) and "toolproof" in marked:
            marked.discard("toolproof")
            if isinstance(cache, dict):
                cache.clear()


_leave_toolproof_unrewritten()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolproof", "toolproof: tool-calling suites as tests")
    group.addoption("--toolproof-suite", metavar="PATH", help="Suite file or folder to collect.")
    group.addoption(
        "--toolproof-records",
        action="append",
        default=[],
        metavar="FILE",
        help="Records file or run folder with the answers to check (repeatable).",
    )
    group.addoption(
        "--toolproof-model",
        action="append",
        default=[],
        metavar="SPEC",
        help="Run a model, e.g. openai:gpt-4.1-mini or scripted:answers.yaml (repeatable).",
    )
    group.addoption(
        "--toolproof-repeats", type=int, default=1, metavar="N", help="Attempts per case."
    )
    group.addoption(
        "--toolproof-allow-code",
        action="store_true",
        default=False,
        help="Let the suite run its own code (environment tools, MCP environment servers). "
        "Never on untrusted code.",
    )
    group.addoption(
        "--toolproof-out",
        metavar="DIR",
        help="Run folder for --toolproof-model (default: runs/<suite>-<UTC time>).",
    )


def _marker(prefix: str, name: str) -> str:
    return prefix + re.sub(r"\W", "_", name)


class _State:
    """The suite, and its evaluation per target, computed once per session."""

    def __init__(self, config: pytest.Config) -> None:
        from toolproof.grade import Scorer
        from toolproof.suite import load_suite
        from toolproof.trust import Trust

        self.config = config
        self.trust = Trust(allow_code=bool(config.getoption("toolproof_allow_code")))
        self.suite: Suite = load_suite(config.getoption("toolproof_suite"), self.trust)
        self.scorer = Scorer(self.suite)  # compiled cases: risks and diffs
        self.models: list[str] = list(config.getoption("toolproof_model"))
        self.paths: list[str] = list(config.getoption("toolproof_records"))
        if not self.models and not self.paths:
            raise pytest.UsageError(
                "--toolproof-suite needs --toolproof-records or --toolproof-model"
            )
        self._evaluation: Evaluation | None = None
        self._error: str | None = None
        self.run_dir: str | None = None
        self.selected: set[str] | None = None
        self.gate: GateResult | None = None

    def targets(self) -> list[str]:
        if self.models:
            return self.models
        return list(self.evaluation().targets)

    def evaluation(self) -> Evaluation:
        from toolproof.errors import UserError

        if self._error is not None:  # tried once already: every test reports it in one line
            raise RunUnavailable(self._error)
        if self._evaluation is None:
            from toolproof.evaluate import evaluate, load_run
            from toolproof.evaluate._evaluate import records_path
            from toolproof.run._env import CodeNotAllowed

            try:
                if self.models:
                    run_dir, suite = self._run()
                    self._evaluation = load_run(run_dir, suite, trust=self.trust)
                elif len(self.paths) == 1:  # as `toolproof gate` reads it: manifest, judgements
                    self._evaluation = load_run(self.paths[0], self.suite, trust=self.trust)
                else:
                    paths = [records_path(p) for p in self.paths]
                    self._evaluation = evaluate(self.suite, paths, trust=self.trust)
            except CodeNotAllowed as exc:  # one line, not an internal error
                raise pytest.UsageError(f"{exc} (pytest: --toolproof-allow-code)") from None
            except UserError as exc:
                self._error = str(exc)
                raise RunUnavailable(self._error) from None
        return self._evaluation

    def _run(self) -> tuple[Path, Suite]:
        """Run the model on the selected cases only (after -k/-m), once: the run folder and
        the suite it ran."""
        import pathlib

        from toolproof.run import RunOptions, run_suite

        suite = self.suite
        if self.selected is not None:
            suite = suite.model_copy(
                update={"cases": [c for c in suite.cases if c.id in self.selected]}
            )
        out = self.config.getoption("toolproof_out")
        opts = RunOptions(
            repeats=int(self.config.getoption("toolproof_repeats")),
            out=pathlib.Path(out) if out else None,
            trust=self.trust,
        )
        result = run_suite(suite, self.models, opts)
        self.run_dir = str(result.run_dir)
        return result.run_dir, suite

    def verdicts(self, case_id: str, target: str) -> tuple[list[Verdict], list[Record]]:
        evaluated = self.evaluation().targets.get(target)
        if evaluated is None:
            return [], []
        recs = [r for r in evaluated.records if r.case_id == case_id]
        verdicts = [v for v in evaluated.verdicts if v.case_id == case_id]
        return sorted(verdicts, key=lambda v: v.attempt), recs


class ToolproofCase(pytest.Item):
    """One case of the suite against one target."""

    def __init__(self, *, case_id: str, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_id = case_id
        self.target = target

    def runtest(self) -> None:
        state = self.config.stash[_STATE]
        try:
            verdicts, records = state.verdicts(self.case_id, self.target)
        except RunUnavailable as exc:  # a missing key, a bad records file: one line, no trace
            pytest.fail(f"toolproof: {exc}", pytrace=False)
        if not verdicts:
            outcomes = ", ".join(r.outcome.value for r in records) or "no record"
            pytest.skip(f"no scored answer for {self.case_id} from {self.target} ({outcomes})")
        failed = [v for v in verdicts if not v.passed]
        if failed:
            raise CaseFailed(_failure_text(self.case_id, verdicts, failed, state.scorer.diff))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"toolproof case {self.case_id} [{self.target}]"


class CaseFailed(AssertionError):
    """A case failed in at least one attempt."""


class RunUnavailable(Exception):
    """The answers could not be had (no API key, unreadable records): said once per test."""


def _failure_text(
    case_id: str, verdicts: list[Verdict], failed: list[Verdict], diff: Callable[[Verdict], str]
) -> str:
    n, c = len(verdicts), len(verdicts) - len(failed)
    head = f"{case_id}: passed {c} of {n} attempts" + (" (flaky)" if c else "")
    lines = [head]
    for v in failed:
        lines.append(f"--- attempt {v.attempt}: {v.failure.value if v.failure else 'failed'}")
        lines += [f"  {ch.message}" for ch in v.checks if not ch.passed]
        lines += [f"  {line}" for line in diff(v).splitlines()]
    return "\n".join(lines)


class ToolproofSuite(pytest.Collector):
    """The suite as a collector; its items are cases × targets."""

    def collect(self) -> list[pytest.Item]:
        state = self.config.stash[_STATE]
        items: list[pytest.Item] = []
        markers: dict[str, list[str]] = {}
        for case in state.suite.cases:
            risk = state.scorer.cases[case.id].risk.value
            markers[case.id] = ["toolproof", _marker("risk_", risk)]
            markers[case.id] += [_marker("tag_", t) for t in case.tags]
        _register({m for names in markers.values() for m in names}, self.config)
        for case in state.suite.cases:
            for target in state.targets():
                item = ToolproofCase.from_parent(
                    self, name=f"{case.id}[{target}]", case_id=case.id, target=target
                )
                for name in markers[case.id]:
                    item.add_marker(name)
                items.append(item)
        return items


def _register(names: set[str], config: pytest.Config) -> None:
    """Declare the markers, so --strict-markers accepts them."""
    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    for name in sorted(names - known):
        config.addinivalue_line("markers", f"{name}: toolproof suite marker")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("toolproof_suite", None):
        config.stash[_STATE] = _State(config)


def pytest_ignore_collect(collection_path: Any, config: pytest.Config) -> bool | None:
    """With --toolproof-suite and no test paths named on the command line, collect the
    suite's cases alone: not the tests a checkout's ``testpaths`` (or its folder) hold.
    Name paths (``pytest tests/ --toolproof-suite …``) to collect both."""
    if config.stash.get(_STATE, None) is None:
        return None
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        return None
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    from pathlib import Path

    source = Path(state.suite.source).resolve() if state.suite.source else session.path
    node = ToolproofSuite.from_parent(
        session, name=state.suite.name, path=source, nodeid=f"toolproof::{state.suite.name}"
    )
    collected = node.collect()
    report = pytest.CollectReport(node.nodeid, "passed", None, list[Any](collected))
    session.ihook.pytest_collectreport(report=report)  # so the counts in the summary are right
    items.extend(collected)


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is not None:
        state.selected = {i.case_id for i in session.items if isinstance(i, ToolproofCase)}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Decide the gate over the answers the tests saw. When it finds nothing it can
    trust (no attempt scored, more unanswered attempts than allowed, a harness error:
    ``toolproof gate`` exits 3), the session fails even though every test was skipped."""
    state = session.config.stash.get(_STATE, None)
    if state is None or state._evaluation is None or session.config.option.collectonly:
        return
    from toolproof.gate import EXIT_INFRA, run_gate

    state.gate = run_gate(state._evaluation)
    if state.gate.exit_code == EXIT_INFRA and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    if state.run_dir:
        terminalreporter.write_line(f"toolproof run folder: {state.run_dir}")
    if state.gate is not None:
        _gate_summary(terminalreporter, state.gate)


def _gate_summary(terminalreporter: Any, result: GateResult) -> None:
    """The gate's decision over the answers the tests saw, as ``toolproof gate`` makes it
    (default options): the tests show each case, this line the release decision."""
    from toolproof.report._escape import visible

    verdict = "PASSED" if result.exit_code == 0 else "FAILED"
    terminalreporter.write_line(f"toolproof gate: {verdict} (exit {result.exit_code})")
    for t in result.targets:
        for f in t.findings:
            if f.blocking:
                terminalreporter.write_line(f"  {visible(t.target)}: {visible(f.message)}")

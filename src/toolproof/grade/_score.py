"""The scorer: pure functions from (case, response) to a Verdict.

Stages, checked in order; a verdict's failure class is that of the first
stage that failed:

1. decision   a call was made when one was required, and none otherwise;
2. selection  the whole array of calls names the right tools (optimal pairing);
3. structure  raw arguments parse, and validate against the schema the model was given;
4. values     argument by argument, only where the tool was right;
5. contract   forbidden tools, call count, order;
6. reply      for text answers: the reply asks, confirms or refuses as expected.

Each stage is a check (``_checks``); the scorer analyses an answer once,
runs the checks and assembles the verdict (``_assemble``). It does no I/O:
what grading needs from outside (the expected end states that gold actions
produce, a suite's own checks) is handed in as data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolproof._shared.schema_validators import rs_validator
from toolproof.grade._answer import (
    NO_CALL,
    CallInfo,
    ProfileSchema,
    analyse,
    inspect_call,
    profile_note,
)
from toolproof.grade._assemble import assemble, single_facts
from toolproof.grade._checks import (
    SINGLE_STEP_CHECKS,
    CaseCheck,
    one_turn,
    run_checks,
    those_that_apply,
)
from toolproof.grade._compile import CompiledCase, ToolIndex, compile_case
from toolproof.grade._diff import render_diff
from toolproof.grade._multistep import (
    MULTI_STEP_CHECKS,
    ExpectedState,
    MissingExpectedState,
    analyse_multi,
    multi_facts,
)
from toolproof.grade._plan import Plan, make_plan
from toolproof.grade._rawview import raw_view
from toolproof.grade._stateasserts import (
    STATE_FUNCTIONS,
    CompiledAssert,
    FunctionsNotRun,
    compile_state_asserts,
)
from toolproof.grade._statechanges import InitialState
from toolproof.grade._trajectory import compile_multistep
from toolproof.match import (
    Decisions,
    Embeddings,
    MissingEmbeddings,
    Question,
    context,
    show,
    similarity_notes,
)
from toolproof.types import (
    NO_EVIDENCE,
    Check,
    Communicate,
    Evidence,
    FailureClass,
    Kind,
    Record,
    Response,
    Stage,
    Suite,
    ToolCall,
    Verdict,
)

__all__ = ["NO_CALL", "Scorer"]


#: What the general path reads of a single-step case, in one look-up: the compiled case,
#: its validators by tool, the suite's own checks that can find something in an answer to
#: it, and its notes.
Route = tuple[CompiledCase, Any, tuple[CaseCheck, ...], tuple[str, ...]]


def _profile_validator(schema: Any) -> ProfileSchema:
    """A tool's validator in the bfcl profile (compiled once per content, as rs_validator's)."""
    return ProfileSchema(rs_validator(schema), schema)


class Scorer:
    """Grades records against a suite. Compiles every case and schema once.

    ``expected_states`` maps a case ID to the expected end state its gold
    actions produce (computed outside, e.g. by ``toolproof.run.expected_states``).
    A state written in the case itself needs nothing from outside.
    ``initial_state`` is the environment's initial state, which the state
    changes in a record apply to (``toolproof.run.load_initial_state``); by
    default, the one the expected states were computed from. A record that
    holds changes cannot be graded without one.
    ``checks`` are the suite's own checks, loaded with the user's consent; when
    the suite declares checks and none are given, each verdict they apply to
    carries a note saying they were not run.

    ``embeddings`` holds the sentence vectors the ``semantic`` matcher reads
    (a fresh, empty table when not given). Grading an answer whose texts have
    no vector yet raises :class:`MissingEmbeddings` naming them: compute them
    into :attr:`embeddings` (``toolproof.providers.TextEmbedder``) and grade
    again. A verdict notes the similarity of each semantic comparison made.

    ``decisions`` holds a judge's answers for ``{semantic: TEXT, judge: true}``
    arguments (read from stored judgements; the scorer never calls a judge).
    When an attempt's outcome turns on such an argument, the verdict says so:
    ``judge_decided`` when the judge's answers decided it, ``undecided`` (the
    number of arguments without an answer) when the rest of the attempt passed
    and the judge has not answered; such an attempt is not counted as passing.
    The questions of those attempts are kept in :attr:`questions`, by (target,
    case, attempt), for the caller to put to a judge.
    """

    def __init__(
        self,
        suite: Suite,
        expected_states: Mapping[str, ExpectedState] | None = None,
        checks: Sequence[tuple[CaseCheck, frozenset[str] | None]] | None = None,
        embeddings: Embeddings | None = None,
        initial_state: InitialState | None = None,
        decisions: Decisions | None = None,
    ) -> None:
        self.suite = suite
        self.embeddings = embeddings if embeddings is not None else Embeddings()
        self.decisions = decisions if decisions is not None else Decisions()
        self.questions: dict[tuple[str | None, str, int], tuple[Question, ...]] = {}
        #: Every judge-decided argument compared, by attempt, whether or not the outcome
        #: turns on it (the items ``toolproof label --rubric argument_meaning`` shows).
        self.compared: dict[tuple[str | None, str, int], tuple[Question, ...]] = {}
        #: Attempts a judge failed: their verdict had it found the same meaning everywhere.
        self.if_same: dict[tuple[str | None, str, int], Verdict] = {}
        #: Attempts a judge passed: their verdict had it found a different meaning everywhere.
        self.if_different: dict[tuple[str | None, str, int], Verdict] = {}
        #: Attempts the nl_assertion judge decided (their judged statements): the others in
        #: ``if_same``/``if_different`` turn on judge-decided arguments.
        self.statement_keys: set[tuple[str | None, str, int]] = set()
        # kept as given: a mapping may compute a case's state when it is first asked for
        states: Mapping[str, ExpectedState] = expected_states if expected_states is not None else {}
        self.initial_state = initial_state or next(
            (s.initial for s in states.values() if s.initial is not None), None
        )
        by_name = ToolIndex(suite.tools)
        # validators are compiled once per distinct schema content (rs_validator's cache);
        # in the bfcl profile, BFCL's structural rules decide (see ProfileSchema)
        self._noting = suite.defaults.matching == "bfcl"
        validator = _profile_validator if self._noting else rs_validator
        self._validators = {t.name: validator(t.parameters) for t in suite.tools}
        # a case with its own tool definitions validates against the schemas sent in it
        self._case_validators = {
            c.id: {
                **self._validators,
                **{t.name: validator(t.parameters) for t in suite.case_tools(c)},
            }
            for c in suite.cases
            if c.definitions
        }
        ctx = replace(context(suite), embeddings=self.embeddings, decisions=self.decisions)
        self.cases: dict[str, CompiledCase] = {
            c.id: compile_case(c, suite, by_name, ctx) for c in suite.cases
        }
        self._multi = {
            c.id: compile_multistep(self.cases[c.id], suite, by_name, ctx)
            for c in suite.cases
            if c.multistep
        }
        self._states = states
        self._compile_asserts(suite, checks, ctx)
        self._single: dict[str, tuple[CaseCheck, ...]] = {}
        self._multi_checks: dict[str, tuple[CaseCheck, ...]] = {}
        self._notes: dict[str, tuple[str, ...]] = {}
        for case in suite.cases:
            extra: list[CaseCheck] = []
            skipped: list[str] = []
            for check, tags in checks or ():
                if tags is None or tags.intersection(case.tags):
                    extra.append(check)
            if checks is None:
                skipped = [
                    f"check '{spec.python}' not run: the suite's own code needs --allow-code"
                    for spec in suite.checks
                    if spec.tags is None or set(spec.tags).intersection(case.tags)
                ]
            base = MULTI_STEP_CHECKS if case.id in self._multi else SINGLE_STEP_CHECKS
            (self._multi_checks if case.id in self._multi else self._single)[case.id] = (
                *base,
                *extra,
            )
            if skipped:
                self._notes[case.id] = tuple(skipped)
        self._routes = self._make_routes()
        #: the passing verdict, built in advance, of each single-step case that has one
        #: (see ``_plan``)
        self._plans = self._make_plans()

    def _compile_asserts(
        self,
        suite: Suite,
        checks: Sequence[tuple[CaseCheck, frozenset[str] | None]] | None,
        ctx: Any,
    ) -> None:
        #: each multi-step case's data assertions over the end state (``end_state.assert``)
        self._asserts: dict[str, tuple[CompiledAssert, ...]] = {}
        #: cases whose function assertions no injected check runs: grading them is refused
        self._functions_not_run: dict[str, str] = {}
        injected = {getattr(check, "name", "") for check, _ in checks or ()}
        for c in suite.cases:
            specs = c.end_state.assertions if c.end_state is not None else None
            if c.id not in self._multi or not specs:
                continue
            self._asserts[c.id], functions = compile_state_asserts(specs, ctx)
            if functions and STATE_FUNCTIONS not in injected:
                self._functions_not_run[c.id] = functions[0].function

    def _make_routes(self) -> dict[str, Route]:
        """What the general path reads of each single-step case, in one look-up: the case,
        its validators, the suite's own checks that can find something in an answer to it
        (the built-in stages are :func:`one_turn`, run first), its notes."""
        return {
            case_id: (
                self.cases[case_id],
                self._case_validators.get(case_id, self._validators),
                those_that_apply(case_checks[len(SINGLE_STEP_CHECKS) :], self.cases[case_id]),
                self._notes.get(case_id, ()),
            )
            for case_id, case_checks in self._single.items()
        }

    def _make_plans(self) -> dict[str, Plan]:
        """The plan of each single-step case that has one: no check of the suite's own, and
        a verdict that nothing but the calls decides (``make_plan``)."""
        plans: dict[str, Plan] = {}
        shared: dict[Any, Any] = {}
        for case_id, case_checks in self._single.items():
            if case_checks == SINGLE_STEP_CHECKS and case_id not in self._notes:
                cc = self.cases[case_id]
                plan = make_plan(
                    cc,
                    lambda name, cc=cc: self._validator(cc, name),  # type: ignore[misc]
                    shared,
                )
                if plan is not None:
                    # (an answer the plan does not pass takes the general path: its route is
                    # kept at hand, where grading has just looked)
                    plan.route = self._routes[case_id]
                    plans[case_id] = plan
        return plans

    def is_multistep(self, case_id: str) -> bool:
        """The case runs through the agent loop and is judged on its whole transcript."""
        return case_id in self._multi

    def grade(self, record: Record) -> Verdict | None:
        """A verdict for a model answer; None for an infrastructure or harness outcome.

        Raises :class:`MissingEmbeddings` when a semantic comparison lacks vectors.
        """
        response = record.response
        if response is None or record.outcome != "ok":
            return None
        plan = self._plans.get(record.case_id)
        if plan is not None:
            emb = self.embeddings
            # nothing left over from an earlier grading (the matchers of a plan's case note
            # nothing: no judge or embedding to account for)
            if not (emb.seen or emb.missing or self.decisions.asked):
                passed = plan.passed(response.tool_calls, record.target, record.attempt)
                if passed is not None:
                    return passed
                return self._analysed(plan.route, response, record)
        return self._judged(lambda: self._grade(record, response), record)

    def grade_response(
        self, case_id: str, response: Response, record: Record | None = None
    ) -> Verdict:
        """The verdict of one model response to a single-step case (see :meth:`grade`)."""
        return self._judged(lambda: self._grade_response(case_id, response, record), record)

    def _judged(self, grade: Callable[[], Verdict], record: Record | None) -> Verdict:
        """Grade, then learn whether the outcome turns on arguments a judge decides.

        Each attempt that asked a judge-decided question is graded twice more, as
        if the judge had said "same" and "different" everywhere: if both give the
        same outcome, the judge does not matter to it.
        """
        self.embeddings.seen.clear()
        self.decisions.asked.clear()
        verdict = self._statements(self._finish(grade()), record)
        if not self.decisions.asked:  # (the common case: no judge-decided argument)
            return verdict
        asked = self.decisions.take_asked()
        if record is not None:
            self.compared[(record.target, record.case_id, record.attempt)] = tuple(asked)
        outcomes = []
        try:
            for mode in ("same", "different"):
                self.decisions.mode = mode
                outcomes.append(self._finish(grade()))
        finally:
            self.decisions.mode = "judged"
            self.decisions.asked.clear()
        notes = tuple(self._judge_note(q) for q in asked)
        verdict = verdict._replace(notes=(*verdict.notes, *notes))
        same, different = outcomes
        if same.passed == different.passed:
            return verdict
        key = (record.target, record.case_id, record.attempt) if record is not None else None
        if key is not None:
            self.questions[key] = tuple(asked)
        pending = [q for q in asked if q.subject not in self.decisions.answers]
        if verdict.passed and pending:
            return verdict._replace(
                passed=False, failure=None, values_ok=None, undecided=len(pending)
            )
        if key is not None and not verdict.passed:
            self.if_same[key] = same._replace(judge_decided=True)
        elif key is not None:
            self.if_different[key] = different._replace(judge_decided=True)
        return verdict._replace(judge_decided=True)

    def _statements(self, verdict: Verdict, record: Record | None) -> Verdict:
        """Judged statements decide an attempt that passed every deterministic check: by the
        ``nl_assertion`` judge's answer (judge-decided, like a judged argument), or, without
        one, the attempt is undecided and not counted as passing."""
        if not verdict.passed:
            return verdict
        case = self.cases[verdict.case_id].case
        n = sum(
            1 for f in case.communicate or () if isinstance(f, Communicate) and f.match == "judged"
        ) + len(case.nl_assertions or ())
        if not n:
            return verdict
        key = (record.target, record.case_id, record.attempt) if record is not None else None
        holds = self.decisions.statements.get(key) if key is not None else None
        what = f"{n} judged statement{'s' if n != 1 else ''} (communicate: judged, nl_assertions)"
        if holds is None:
            return verdict._replace(
                passed=False,
                failure=None,
                undecided_statements=n,
                notes=(*verdict.notes, f"⚖ {what} left to the nl_assertion judge, undecided"),
            )
        assert key is not None
        self.statement_keys.add(key)
        held = verdict._replace(
            judge_decided=True,
            notes=(*verdict.notes, f"⚖ {what}: the nl_assertion judge found they hold"),
        )
        check = Check(
            Stage.reply,
            FailureClass.not_communicated,
            f"⚖ {what}: the nl_assertion judge found they do not all hold",
        )
        failed = verdict._replace(
            passed=False,
            failure=FailureClass.not_communicated,
            reply_ok=False,
            checks=(*verdict.checks, check),
            judge_decided=True,
            notes=(*verdict.notes, f"⚖ {what}: the nl_assertion judge found they do not all hold"),
        )
        if holds:
            self.if_different[key] = failed
            return held
        # read against the judge's "does not hold", the attempt is as without its answer:
        # undecided, never passing (a "no" cannot make the gate more lenient than no answer)
        self.if_same[key] = verdict._replace(
            passed=False, failure=None, undecided_statements=n, judge_decided=True
        )
        return failed

    def _judge_note(self, q: Question) -> str:
        answer = self.decisions.answers.get(q.subject)
        if answer is None:
            said = "left to the judge, undecided"
        else:
            said = "judged same meaning" if answer else "judged different meaning"
        return f"⚖ {q.tool}.{q.param}: {said}: {show(q.actual)} vs {show(q.expected)}"

    def _finish(self, verdict: Verdict) -> Verdict:
        if self.embeddings.missing:
            raise MissingEmbeddings(self.embeddings.take_missing())
        if self.embeddings.seen:
            notes = similarity_notes(self.embeddings.seen)
            verdict = verdict._replace(notes=(*verdict.notes, *notes))
            self.embeddings.seen.clear()
        return verdict

    def _grade(self, record: Record, response: Response) -> Verdict:
        if record.case_id in self._multi:
            return self._grade_multi(record, self.expected_state(record.case_id))
        return self._grade_response(record.case_id, response, record)

    def _grade_multi(
        self, record: Record, expected: ExpectedState | None, unreached: Check | None = None
    ) -> Verdict:
        """A multi-step verdict; ``unreached``: the end state check fails with this reason."""
        cc = self.cases[record.case_id]
        if record.case_id in self._functions_not_run:
            raise FunctionsNotRun(record.case_id, self._functions_not_run[record.case_id])
        answer = analyse_multi(
            cc,
            self._multi[record.case_id],
            record,
            self._inspect,
            expected,
            self.initial_state,
            self._asserts.get(record.case_id, ()),
            cc.case.communicate or (),
        )
        facts, notes, evidence = multi_facts(cc, answer)
        findings = run_checks(self._multi_checks[record.case_id], cc, answer)
        if unreached is not None and facts.multistep is not None:
            findings = [*findings, unreached]
            facts = facts._replace(multistep=replace(facts.multistep, end_state_ok=False))
        notes += self._notes.get(cc.case.id, ())
        return assemble(cc, facts, findings, record, notes, evidence)

    def grade_raw(self, record: Record) -> Verdict | None:
        """The raw verdict: calls recovered from text count as no call.

        None when no call of the record was recovered from text (the raw
        verdict is then :meth:`grade`'s). See :mod:`toolproof.grade._rawview`.
        Raises :class:`MissingEmbeddings` like :meth:`grade`.
        """
        if record.outcome != "ok":
            return None
        view = raw_view(record)
        if view is None:
            return None
        raw = view.record
        self.embeddings.seen.clear()
        if raw.case_id not in self._multi:
            assert raw.response is not None and record.response is not None
            verdict = self._finish(self._grade_response(raw.case_id, raw.response, raw))
            if verdict.passed:
                return verdict
            printed = tuple(c for c in record.response.tool_calls if c.extracted_from_text)
            return verdict._replace(evidence=verdict.evidence._replace(recovered=printed))
        if view.stopped_at is None or self.cases[raw.case_id].case.end_state is None:
            return self._finish(self._grade_multi(raw, self.expected_state(raw.case_id)))
        unreached = Check(
            Stage.contract,
            FailureClass.wrong_end_state,
            f"raw view: without the calls recovered from text the attempt ends at step "
            f"{view.stopped_at}, whose end state was not recorded: not reached",
        )
        return self._finish(self._grade_multi(raw, None, unreached))

    def _grade_response(
        self, case_id: str, response: Response, record: Record | None = None
    ) -> Verdict:
        plan = self._plans.get(case_id)
        if plan is not None:
            target, attempt = (record.target, record.attempt) if record is not None else (None, 0)
            passed = plan.passed(response.tool_calls, target, attempt)
            if passed is not None:
                return passed
        elif len(self._single[case_id]) == len(SINGLE_STEP_CHECKS) and case_id not in self._notes:
            passed = self._quick_pass(self.cases[case_id], response, record)
            if passed is not None:
                return passed
        return self._analysed(self._routes[case_id], response, record)

    def _analysed(self, route: Route, response: Response, record: Record | None) -> Verdict:
        """The general path of a single-step answer (``route``: what it reads of the case):
        analyse it, run the checks, assemble."""
        cc, validators, checks, notes = route
        offered = cc.offered
        infos = []
        for call in response.tool_calls:  # (a loop: a comprehension is a call of its own)
            infos.append(inspect_call(call, offered, validators))
        answer = analyse(cc, response, infos)
        findings = one_turn(cc, answer)  # the built-in stages (SINGLE_STEP_CHECKS), in one pass
        in_order = True  # (one_turn's findings come in stage order)
        if checks:  # the suite's own
            found = run_checks(checks, cc, answer)
            if found:
                findings += found
                in_order = False
        if self._noting:  # the schema broken where the profile does not let it decide
            for i in infos:
                if i.failure is None and i.message:
                    notes = (*notes, profile_note(i.message))
        evidence = NO_EVIDENCE
        if findings:
            evidence = Evidence(response, answer.best.index if answer.best is not None else 0)
        facts = single_facts(cc, answer)
        return assemble(cc, facts, findings, record, notes, evidence, in_order)

    def diff(self, verdict: Verdict) -> str:
        """Expected against actual for a failed verdict ("" for a pass)."""
        return render_diff(verdict, self.cases[verdict.case_id])

    def expected_state(self, case_id: str) -> ExpectedState | None:
        """A multi-step case's expected end state; None when the case checks none.

        A state written in the case is compared partially. A state from gold
        actions must have been handed in (``expected_states``).
        """
        end = self.cases[case_id].case.end_state
        if end is None or (end.state is None and end.actions is None):
            return None  # none, or only assertions
        if end.state is not None:
            return ExpectedState(end.state, True)
        state = self._states.get(case_id)
        if state is None:
            raise MissingExpectedState(case_id)
        return state

    def _quick_pass(
        self, cc: CompiledCase, response: Response, record: Record | None
    ) -> Verdict | None:
        """The verdict of a plainly passing answer, built without the general machinery.

        Covers a text answer where text (or no call) is expected, and one right
        call where one call is expected. Anything else returns None and takes the
        full path, which reaches the same verdict.
        """
        calls = response.tool_calls
        if not calls:
            if cc.text is None and (
                cc.kind is Kind.none
                or (cc.kind is Kind.text and (response.refusal or (response.text or "").strip()))
            ):
                reply_ok = None if cc.kind is Kind.none else True
                return self._passed(cc, response, (), ((NO_CALL, NO_CALL),), 0, reply_ok, record)
            return None
        expected = cc.single
        if expected is None or len(calls) != 1:
            return None
        call = calls[0]
        if call.parse_error is not None or call.name not in expected.tools:
            return None
        try:
            if not self._validator(cc, call.name).is_valid(call.arguments):
                return None
        except (ValueError, RecursionError):
            return None
        if expected.args.check(call.arguments) is not None:
            return None
        pairs = ((call.name, call.name),)
        return self._passed(cc, response, (call.name,), pairs, 1, None, record)

    def _passed(
        self,
        cc: CompiledCase,
        response: Response,
        actual: tuple[str, ...],
        pairs: tuple[tuple[str, str], ...],
        n_calls: int,
        reply_ok: bool | None,
        record: Record | None,
    ) -> Verdict:
        ok = True if n_calls else None
        return Verdict(
            case_id=cc.case.id,
            kind=cc.kind,
            risk=cc.risk,
            tags=cc.tags,
            passed=True,
            failure=None,
            checks=(),
            decision_ok=True,
            selection_ok=ok,
            structure_ok=ok,
            values_ok=ok,
            contract_ok=True,
            reply_ok=reply_ok,
            expected_tools=cc.expected_tools,
            actual_tools=actual,
            pairs=pairs,
            calls_checked=n_calls,
            calls_schema_valid=n_calls,
            target=record.target if record is not None else None,
            attempt=record.attempt if record is not None else 0,
        )

    def _validator(self, cc: CompiledCase, name: str) -> Any:
        """The validator of the schema tool ``name`` was offered with in this case."""
        return self._case_validators.get(cc.case.id, self._validators)[name]

    def _inspect(self, call: ToolCall, cc: CompiledCase) -> CallInfo:
        validators = self._case_validators.get(cc.case.id, self._validators)
        return inspect_call(call, cc.offered, validators)

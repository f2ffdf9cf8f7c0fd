"""The agent loop of a multi-step case: ask the model, answer its calls, repeat.

Each step sends the conversation so far. Every call the model makes is
answered by the case's mocks, then the suite's mocks, then the environment
(first that has an answer; the environment may be a real MCP server, see
:class:`McpToolBox`), and the result goes back as a ``role: tool``
message, which each provider adapter translates into its own wire format.
The loop ends when the model answers without a call (in a conversation, the
simulated user then replies, see :mod:`toolproof.run._user`), or when the attempt's
budget is spent: ``max_steps`` model calls, ``attempt_tokens`` tokens (input
and output, all steps; in a conversation, the user model's too), or
``attempt_seconds`` of wall time (checked before each step and, in a
conversation, before each user turn; a step in flight is bounded by the request
timeout). The budget that
ended an attempt is kept as ``stopped_by``: it is model behaviour (a loop that
did not finish), not an infrastructure failure. Nothing real is executed,
except on an MCP environment, whose server really runs each call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolproof.grade._compile import context
from toolproof.match._mock import CompiledMock, ToolResult
from toolproof.providers import Exchange, ModelSettings, ProviderRequest
from toolproof.records._steps import step_entry
from toolproof.run._env import EnvSession, LoadedEnvironment
from toolproof.run._user import DEFAULT_MAX_TURNS, SimUser, UserReply
from toolproof.types import (
    Case,
    Message,
    Response,
    StopReason,
    Suite,
    Tool,
    ToolCall,
    Usage,
    UserTurn,
)

if TYPE_CHECKING:
    from toolproof.mcpenv import McpSession

__all__ = [
    "DEFAULT_MAX_STEPS",
    "AgentRun",
    "Budget",
    "EndState",
    "McpToolBox",
    "RecordedToolBox",
    "ToolBox",
    "run_agent",
]

DEFAULT_MAX_STEPS = 10

CallModel = Callable[[ProviderRequest], Awaitable[Exchange]]


class ToolBox:
    """Answers tool calls for one attempt: mocks first, then a private environment copy."""

    def __init__(self, suite: Suite, case: Case, env: LoadedEnvironment | None) -> None:
        ctx = context(suite)
        self.layers = [
            {n: CompiledMock(m, ctx) for n, m in case.mocks.items()},
            {n: CompiledMock(m, ctx) for n, m in suite.mocks.items()},
        ]
        self.env: EnvSession | None = env.session() if env is not None else None
        self.known = frozenset(suite.tool_index(case))
        #: The simulated user's tools the case does not offer the agent: never run for it.
        self.user_only: frozenset[str] = frozenset()
        if case.user is not None and case.user.tools:
            offered = {t.name for t in suite.case_tools(case)}
            self.user_only = frozenset(case.user.tools) - offered
        #: The case's tools a scripted user has not offered the agent yet (``offer``):
        #: never run for it until offered.
        self.withheld: set[str] = set(case.held_back)

    def offer(self, names: Sequence[str]) -> None:
        """The agent is offered these tools from now on."""
        self.withheld.difference_update(names)

    def mocked(self, call: ToolCall) -> ToolResult | None:
        """The answer of the first mock rule that matches the call, or None."""
        for layer in self.layers:
            mock = layer.get(call.name)
            answer = mock.answer(call.arguments) if mock is not None else None
            if answer is not None:
                return answer
        return None

    async def answer(self, call: ToolCall) -> ToolResult:
        return self.call(call)

    def call(self, call: ToolCall) -> ToolResult:
        if call.parse_error is not None:
            return _error(f"the arguments of {call.name} are not valid JSON")
        if call.name in self.user_only or call.name in self.withheld:
            return _error(f"no tool named {call.name} is available")
        answer = self.mocked(call)
        if answer is not None:
            return answer
        if self.env is not None and self.env.has(call.name):
            return self.env.call(call.name, call.arguments)
        if call.name not in self.known:
            return _error(f"no tool named {call.name} is available")
        return _error(f"{call.name} is not implemented (no mock and no environment function)")

    def user_call(self, tool: str, args: Any) -> ToolResult:
        """The simulated user's call of one of its tools, on this attempt's state (no mock
        answers it: the user acts on the state the agent's tools act on)."""
        if self.env is None or not self.env.has_user(tool):
            return _error(f"no user tool named {tool} is available")
        return self.env.call(tool, args, user=True)

    def end(self) -> EndState:
        """The environment's changes against its initial state (none without an environment)."""
        if self.env is None or self.env.env is None:
            return EndState()
        return EndState(changes=self.env.changes(), base=self.env.env.base)

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


class McpToolBox(ToolBox):
    """Answers tool calls for one attempt: mocks first, then the attempt's real MCP server.

    A mock rule that matches a call answers it (fault injection on a real
    server); every other call of a suite tool runs on the server, whose
    failures and timeouts come back to the model as error results.
    """

    def __init__(self, suite: Suite, case: Case, server: McpSession) -> None:
        super().__init__(suite, case, None)
        self.server = server

    async def answer(self, call: ToolCall) -> ToolResult:
        if call.parse_error is not None:
            return _error(f"the arguments of {call.name} are not valid JSON")
        if call.name in self.withheld:
            return _error(f"no tool named {call.name} is available")
        mocked = self.mocked(call)
        if mocked is not None:
            return mocked
        if call.name not in self.known:
            return _error(f"no tool named {call.name} is available")
        if not isinstance(call.arguments, dict):
            return _error(f"the arguments of {call.name} are not a JSON object")
        ran = await self.server.call(call.name, call.arguments)
        return ran.answer()


class RecordedToolBox:
    """Answers tool calls with the results of a recorded transcript, in order (replay).

    Nothing runs: the end state is the recorded one (whole, or its changes). A
    call the recording does not have (the replayed model diverged) gets an
    error result naming it.
    """

    def __init__(self, transcript: list[Message], end: EndState) -> None:
        self._results = [m for m in transcript if m.role == "tool"]
        self._next = 0
        self._end = end

    def call(self, call: ToolCall) -> ToolResult:
        if self._next >= len(self._results):
            return _error(f"replay: the recording has no result for this call of {call.name}")
        message = self._results[self._next]
        self._next += 1
        if message.name is not None and message.name != call.name:
            return _error(f"replay: the recording answered {message.name} here, not {call.name}")
        return ToolResult(message.content or "", is_error=message.is_error)

    async def answer(self, call: ToolCall) -> ToolResult:
        return self.call(call)

    def offer(self, names: Sequence[str]) -> None:
        pass  # a replay answers from the recording, whatever is offered

    def user_call(self, tool: str, args: Any) -> ToolResult:
        # a replayed user says again what it said, calls included, and runs nothing
        return _error(f"replay: the user's call of {tool} is not run again")

    def end(self) -> EndState:
        return self._end

    def close(self) -> None:
        pass


def _error(message: str) -> ToolResult:
    return ToolResult(json.dumps({"error": message}), is_error=True, fault="error")


@dataclass(frozen=True, slots=True)
class EndState:
    """How an attempt left the environment: its changes (and the initial state they apply
    to), or, replayed from a records format /1 line, the whole state."""

    whole: Any = None
    changes: list[tuple[Any, ...]] | None = None
    base: str | None = None


@dataclass
class AgentRun:
    """What a multi-step attempt (or a conversation) produced."""

    transcript: list[Message]
    response: Response
    steps: list[dict[str, Any]] = field(default_factory=list)
    end: EndState = field(default_factory=lambda: EndState())
    #: What ended the attempt ("steps", "tokens", "seconds"; in a conversation also the
    #: user's stop, "max_turns", "script_end", "user_error"), or None.
    stopped_by: StopReason | None = None
    #: A conversation: every turn of the simulated user, in order.
    user_turns: list[UserTurn] | None = None
    #: A conversation: the simulated user's replies as they came (tokens, problems).
    user_replies: list[UserReply] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Budget:
    """What one multi-step attempt may spend."""

    steps: int = DEFAULT_MAX_STEPS
    tokens: int | None = None
    seconds: float | None = None


async def run_agent(
    call_model: CallModel,
    *,
    model: str,
    messages: list[Message],
    tools: list[Tool],
    settings: ModelSettings,
    toolbox: ToolBox | RecordedToolBox,
    max_steps: int | None = None,
    budget: Budget | None = None,
    case_id: str | None = None,
    attempt: int = 0,
    user: SimUser | None = None,
    max_turns: int | None = None,
    held_back: Mapping[str, Tool] | None = None,
) -> AgentRun:
    """Run the loop. ``call_model`` is the runner's paced, retried provider call.

    With a simulated ``user``, the attempt is a conversation: when the agent
    answers in text, the user replies, and the loop goes on until the user
    stops (its stop token, its script's end, a failure), ``max_turns`` user
    turns were given, or a budget is spent. The steps budget counts the agent's
    model calls over the whole conversation. A user that speaks first (no user
    message at the end of ``messages``) writes the opening message.

    ``held_back``: the case's tools not in ``tools`` that a scripted user's turn may
    offer (``UserTurn.offered``); from that turn on every request offers them too,
    after the tools it had, and the toolbox runs them.
    """
    if budget is None:
        budget = Budget(
            steps=max_steps or DEFAULT_MAX_STEPS,
            tokens=settings.attempt_tokens,
            seconds=settings.attempt_seconds,
        )
    turn_limit = max_turns or DEFAULT_MAX_TURNS
    started = time.monotonic()
    transcript = list(messages)
    steps: list[dict[str, Any]] = []
    response: Response | None = None
    stopped_by: StopReason | None = None
    replies: list[UserReply] = []
    sent: Any = None
    offered = list(tools)
    later = dict(held_back or {})

    def offer(names: Sequence[str]) -> None:
        """The held-back tools a user turn offered, added to every request from now on."""
        nonlocal offered
        have = {t.name for t in offered}
        new = [later[n] for n in dict.fromkeys(names) if n in later and n not in have]
        if new:
            offered = [*offered, *new]
            toolbox.offer([t.name for t in new])

    def spent() -> int:
        """Tokens of the conversation so far: the agent's steps and the user model's turns."""
        used = _tokens(steps)
        return used + sum(r.usage[0] + r.usage[1] for r in replies if r.usage is not None)

    async def user_says() -> bool:
        """The user's next message, appended; False when it stopped the conversation."""
        nonlocal stopped_by
        assert user is not None
        reply = await user.reply(transcript, len(replies), act=toolbox.user_call)
        replies.append(reply)
        turn = reply.turn
        if turn.at is None:
            reply.turn.at = len(transcript)
        if turn.offered:
            offer(turn.offered)
        if reply.stop is not None:
            stopped_by = reply.stop
            return False
        transcript.append(Message(role="user", content=turn.text))
        return True

    try:
        talking = True
        if user is not None and not any(m.role == "user" for m in transcript):
            talking = await user_says()
        step = 0
        while talking:
            if budget.tokens is not None and spent() >= budget.tokens:
                stopped_by = "tokens"
                break
            if step >= budget.steps:
                stopped_by = "steps"
                break
            if step and budget.seconds is not None and time.monotonic() - started >= budget.seconds:
                stopped_by = "seconds"
                break
            request = ProviderRequest.model_construct(
                model=model,
                messages=list(transcript),
                tools=offered,
                settings=settings,
                case_id=case_id,
                attempt=attempt,
                step=step,
            )
            exchange = await call_model(request)
            response = exchange.response
            # each request after the first is stored as what it adds (toolproof.records._steps)
            raw = response.model_dump(mode="json")
            steps.append(step_entry(steps, sent, exchange.request, raw))
            sent = exchange.request
            calls = [
                c if c.id else c.model_copy(update={"id": f"call_{step}_{i}"})
                for i, c in enumerate(response.tool_calls)
            ]
            step += 1
            transcript.append(Message(role="assistant", content=response.text, tool_calls=calls))
            if calls:
                for c in calls:
                    transcript.append(await _answer(toolbox, c))
                continue  # the budget is checked before the next step
            if user is None:
                break
            if len(replies) >= turn_limit:
                stopped_by = "max_turns"
                break
            # the agent answered in text: the budget holds before the user is asked too
            if budget.tokens is not None and spent() >= budget.tokens:
                stopped_by = "tokens"
                break
            if budget.seconds is not None and time.monotonic() - started >= budget.seconds:
                stopped_by = "seconds"
                break
            talking = await user_says()
        end = toolbox.end()
    finally:
        toolbox.close()
    if response is None:  # the user stopped before the agent said anything
        response = Response(text=None)
    final = response.model_copy(update={"usage": _total_usage(steps)})
    turns = [r.turn for r in replies] if user is not None else None
    return AgentRun(transcript, final, steps, end, stopped_by, turns, replies)


def _tokens(steps: list[dict[str, Any]]) -> int:
    usage = _total_usage(steps)
    return 0 if usage is None else (usage.input_tokens or 0) + (usage.output_tokens or 0)


async def _answer(toolbox: ToolBox | RecordedToolBox, call: ToolCall) -> Message:
    result = await toolbox.answer(call)
    return Message(
        role="tool",
        tool_call_id=call.id,
        name=call.name,
        content=result.content,
        is_error=result.is_error,
    )


def _total_usage(steps: list[dict[str, Any]]) -> Usage | None:
    """Tokens of every step together (each step's own usage stays in ``steps``)."""
    usages = [s["response"].get("usage") for s in steps if s["response"].get("usage")]
    if not usages:
        return None
    return Usage(
        input_tokens=sum(u.get("input_tokens") or 0 for u in usages),
        output_tokens=sum(u.get("output_tokens") or 0 for u in usages),
    )

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from toolproof.types._message import Message
from toolproof.types._tool import Risk, SuiteTool


class Kind(StrEnum):
    """What the model is expected to do."""

    call = "call"
    none = "none"
    """No tool call; the reply is not judged (an empty reply passes)."""
    text = "text"
    clarify = "clarify"
    confirm = "confirm"
    refuse = "refuse"


class Order(StrEnum):
    """How the actual calls must line up with the expected ones.

    strict     the same calls, in the same order.
    unordered  the same calls, in any order.
    subset     every actual call is expected; some expected calls may be missing.
    superset   every expected call is made; other calls may be added.
    """

    strict = "strict"
    unordered = "unordered"
    subset = "subset"
    superset = "superset"


class CallSpec(BaseModel):
    """One expected call: the tool (or a set of acceptable tools) and its arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str | list[str] = Field(description="Tool name, or a list of acceptable tool names.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Expected arguments. A plain value matches exactly (or by the tool's "
        "default matcher); a one-key mapping such as {normalized: Novák} picks a matcher.",
    )
    extra_args: bool | None = Field(
        default=None, description="Allow arguments not listed in args (default from the suite)."
    )

    @property
    def tools(self) -> tuple[str, ...]:
        return (self.tool,) if isinstance(self.tool, str) else tuple(self.tool)


class CountSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)


class Expect(BaseModel):
    """The contract a case states."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind | None = Field(
        default=None,
        description="call, none, text, clarify, confirm or refuse. Default: call when "
        "calls are given; text when a reply matcher is given; none otherwise (no tool "
        "call, the reply not judged). 'text' asks for a non-empty reply.",
    )
    call: str | list[str] | None = Field(default=None, description="Shorthand for one call.")
    args: dict[str, Any] | None = Field(
        default=None, description="Arguments of the shorthand call."
    )
    extra_args: bool | None = None
    calls: list[CallSpec] | None = None
    alternatives: list[list[CallSpec]] | None = Field(
        default=None, description="Several acceptable call sets; any one passing is enough."
    )
    forbidden: list[str] = Field(default_factory=list, description="Tools that must not be called.")
    count: int | CountSpec | None = Field(
        default=None, description="Exact number of calls, or {min, max}."
    )
    order: Order | None = None
    text: Any = Field(
        default=None,
        description="Optional matcher for the reply text, e.g. {contains: order number}.",
    )
    graceful: bool | None = Field(
        default=None,
        description="Multi-step: fail the case when, after a tool failure, the final reply "
        "does not handle it gracefully (heuristic). Default: the suite's "
        "defaults.graceful_failure; otherwise the heuristic is only reported.",
    )

    @model_validator(mode="after")
    def _one_way_of_saying_calls(self) -> Expect:
        ways = (self.call is not None) + (self.calls is not None) + (self.alternatives is not None)
        if ways > 1:
            raise ValueError("give only one of 'call', 'calls' and 'alternatives'")
        if self.args is not None and self.call is None:
            raise ValueError("'args' goes with 'call'; with 'calls', put args in each call")
        if self.extra_args is not None and self.call is None:
            raise ValueError("'extra_args' goes with 'call'; with 'calls', set it on each call")
        kind = self.kind
        if kind is not None and kind is not Kind.call and ways:
            raise ValueError(f"kind '{kind}' expects no call, but calls are given")
        if kind is Kind.call and not ways and self.count is None:
            raise ValueError("kind 'call' needs 'call', 'calls', 'alternatives' or 'count'")
        return self

    @property
    def resolved_kind(self) -> Kind:
        if self.kind is not None:
            return self.kind
        if self.call is not None or self.calls or self.alternatives:
            return Kind.call
        if isinstance(self.count, int) and self.count > 0:
            return Kind.call
        if isinstance(self.count, CountSpec) and (self.count.min or 0) > 0:
            return Kind.call
        return Kind.text if self.text is not None else Kind.none

    def call_sets(self) -> list[list[CallSpec]]:
        """Every acceptable set of calls (one for a plain case)."""
        if self.alternatives is not None:
            return self.alternatives
        if self.calls is not None:
            return [self.calls]
        if self.call is not None:
            return [[CallSpec(tool=self.call, args=self.args or {}, extra_args=self.extra_args)]]
        return [[]]


Fault = Literal["error", "exception", "empty", "timeout", "unavailable", "malformed"]


class MockRule(BaseModel):
    """One scripted answer of a mock tool: when the arguments match, answer this."""

    model_config = ConfigDict(extra="forbid")

    when: dict[str, Any] | None = Field(
        default=None,
        description="Argument matchers (as in expect.args; other arguments are ignored). "
        "No 'when': the rule always matches.",
    )
    result: Any = Field(default=None, description="The JSON value the tool returns.")
    fault: Fault | None = Field(
        default=None,
        description="Inject a fault instead: error, exception, empty, timeout (simulated, "
        "no waiting), unavailable (service unavailable) or malformed (a cut-off payload).",
    )
    message: str | None = Field(default=None, description="The error or exception message.")


class ToolMock(BaseModel):
    """A mock tool: rules over its arguments (first match wins), then a default."""

    model_config = ConfigDict(extra="forbid")

    rules: list[MockRule] = Field(default_factory=list)
    default: MockRule | None = Field(
        default=None, description="The answer when no rule matches (no default: fall through)."
    )


class GoldAction(BaseModel):
    """A call of the reference solution, replayed to compute the expected end state."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class EndState(BaseModel):
    """What the world must look like when the conversation ends.

    ``state``: the expected final state, compared partially (only the listed
    tables, rows and fields). ``actions``: the gold actions, replayed on a fresh
    copy of the initial state to get the full expected state (any trajectory
    that reaches the same state passes). ``assert``: checks over the final
    state, in the expectation language, or a named function of the tools file
    (suite code: needs ``--allow-code``).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    state: dict[str, Any] | None = None
    actions: list[GoldAction] | None = None
    assertions: list[dict[str, Any]] | None = Field(
        default=None,
        alias="assert",
        description="Checks over the final state: expectations on a path of the state, "
        "or {function: NAME, args: {...}} naming a function of the tools file.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> EndState:
        if self.state is not None and self.actions is not None:
            raise ValueError("give at most one of 'state' and 'actions'")
        if self.state is None and self.actions is None and not self.assertions:
            raise ValueError("give 'state', 'actions' or 'assert'")
        return self


class UserCall(BaseModel):
    """A call the simulated user makes to one of its own tools (``user.tools``)."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(description="A function of the tools file named in the user's 'tools'.")
    args: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")


#: What ``offer`` on a scripted user's entry or rule means (the schema's description).
OFFER_DOC = (
    "Tools of the case (names) held back from the agent until this turn: from the turn "
    "this entry or rule speaks in, every request to the agent offers them too, after the "
    "tools it had. Before that turn they are not offered, and a call of one counts as a "
    "call of an unknown tool."
)


class UserStep(BaseModel):
    """One plain entry of a scripted user that calls a tool: ``{call: ..., say: ...}``.

    The call runs on the attempt's state first; without ``say`` the turn goes on
    with the next plain entry (a user may call several tools, then speak)."""

    model_config = ConfigDict(extra="forbid")

    call: UserCall | None = Field(default=None, description="A tool the user calls first.")
    say: str | None = Field(
        default=None, description="The user's reply (may be a stop token, e.g. ###STOP###)."
    )
    offer: list[str] | None = Field(default=None, min_length=1, description=OFFER_DOC)

    @model_validator(mode="after")
    def _some(self) -> UserStep:
        if self.call is None and self.say is None and self.offer is None:
            raise ValueError("give 'say', 'call', 'offer' or several")
        return self


class UserRule(BaseModel):
    """One rule of a scripted user: when the agent's last message matches, say this
    (after calling a tool, with ``call``)."""

    model_config = ConfigDict(extra="forbid")

    when: dict[str, Any] = Field(
        description="A matcher over the agent's last message, e.g. {regex: 'order number'}."
    )
    say: str | None = Field(
        default=None, description="The user's reply (may be a stop token, e.g. ###STOP###)."
    )
    call: UserCall | None = Field(
        default=None,
        description="A tool the user calls first; without 'say' the turn goes on with the "
        "next plain entry.",
    )
    offer: list[str] | None = Field(default=None, min_length=1, description=OFFER_DOC)

    @model_validator(mode="after")
    def _some(self) -> UserRule:
        if self.call is None and self.say is None and self.offer is None:
            raise ValueError("give 'say', 'call', 'offer' or several")
        return self


class SimulatedUser(BaseModel):
    """The user the agent talks to: an LLM following instructions, or a script.

    An LLM user (``instructions``) follows the τ2 protocol: one message at a
    time, reveals what it knows only when asked, invents nothing, and ends the
    conversation with a stop token (``###STOP###``, ``###TRANSFER###``,
    ``###OUT-OF-SCOPE###``). A scripted user (``script``) gives its replies in
    order, or by rules matched against the agent's last message.
    """

    model_config = ConfigDict(extra="forbid")

    instructions: str | None = Field(
        default=None, description="The scenario the simulated user plays (an LLM user)."
    )
    known: str | list[str] | None = Field(
        default=None, description="Facts the user knows and may reveal when asked."
    )
    unknown: str | list[str] | None = Field(
        default=None, description="Facts the user does not know and must never state."
    )
    persona: str | None = Field(default=None, description="How the user talks.")
    script: list[str | UserRule | UserStep] | None = Field(
        default=None,
        description="A scripted user: replies in order, or when/say rules; an entry or "
        "rule may call one of the user's tools ({call: {tool, args}, say: ...}), and may "
        "offer the agent tools of the case held back until then ({offer: [NAME], say: ...}).",
    )
    tools: list[str] = Field(
        default_factory=list,
        description="Environment tools the user (not the agent) may call on its own state.",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> SimulatedUser:
        if (self.instructions is None) == (self.script is None):
            raise ValueError("give exactly one of 'instructions' (an LLM user) and 'script'")
        for i, entry in enumerate(self.script or ()):
            call = entry.call if not isinstance(entry, str) else None
            if call is not None and call.tool not in self.tools:
                raise ValueError(
                    f"script[{i}] calls '{call.tool}', which is not one of the user's tools "
                    f"(user.tools: {', '.join(self.tools) or 'none'})"
                )
        return self


class Communicate(BaseModel):
    """A fact the agent must have told the user."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    match: Literal["substring", "normalised", "judged"] = Field(
        default="normalised",
        description="substring: as written; normalised: lowercased, commas removed, other "
        "punctuation and runs of spaces made one space (passes whatever τ²-bench's rule "
        "passes); judged: checked only by the nl_assertion judge (undecided until it answers).",
    )


class Trajectory(BaseModel):
    """The expected sequence of calls across every step of a multi-step case.

    ``steps`` is a list of ordered groups; the calls within a group may come in
    any order (a single call is a group of one). ``mode`` says how the actual
    calls line up with them (see Order). ``match`` overrides the argument
    matchers per tool and parameter, e.g. {refund_order: {reason: {use: ignore}}}.
    """

    model_config = ConfigDict(extra="forbid")

    mode: Order = Order.strict
    steps: list[CallSpec | list[CallSpec]] = Field(min_length=1)
    match: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def groups(self) -> list[list[CallSpec]]:
        return [s if isinstance(s, list) else [s] for s in self.steps]


class Generated(BaseModel):
    """Where a generated case came from, and whether a person has reviewed it."""

    model_config = ConfigDict(extra="forbid")

    by: str = Field(description="The generator model's spec.")
    at: str = Field(description="When it was generated (ISO 8601, UTC).")
    status: Literal["needs-review", "accepted", "edited", "rejected"] = Field(
        default="needs-review",
        description="needs-review until a person accepts, edits or rejects it "
        "(`toolproof review`); `gate --reviewed-only` refuses a suite that still has one.",
    )
    verified_by: str | None = Field(
        default=None, description="The second model the case was run against (--verify-model)."
    )
    verify_passed: bool | None = Field(
        default=None, description="Whether that model's answer passed the case."
    )


def _tool_entry(value: Any) -> str:
    if isinstance(value, str):  # the common entry, told apart without the model's slow check
        return "a tool name"
    return "a tool definition" if isinstance(value, dict | SuiteTool) else "a tool name"


#: One entry of a case's tool list: a suite tool's name, or a full definition.
#: (The tags hold spaces, so a located error names the entry, not the union member.)
CaseTool = Annotated[
    Annotated[str, Tag("a tool name")] | Annotated[SuiteTool, Tag("a tool definition")],
    Discriminator(_tool_entry),
]


class Case(BaseModel):
    """One test case: an input and the contract its answer must meet."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[^\s]+$")
    prompt: str | None = None
    messages: list[Message] | None = None
    system: str | None = Field(default=None, description="Overrides the suite's system prompt.")
    tools: list[CaseTool] | None = Field(
        default=None,
        description="The tools offered in this case (default: all the suite's tools). Each "
        "entry is the name of a suite tool, or a full tool definition (name, description, "
        "parameters...) offered in this case instead of the suite's tool of that name.",
    )
    expect: Expect = Field(
        default_factory=Expect,
        description="The contract. Required, except in a multi-step case with a trajectory, "
        "or a conversation (a case with a user): left out there, the attempt must end with a "
        "text answer, and calls are allowed.",
    )
    reason: str | None = Field(default=None, description="Why this is the expected behaviour.")
    tags: list[str] = Field(default_factory=list)
    risk: Risk | None = Field(
        default=None, description="Default: the highest risk among the tools the case names."
    )
    max_steps: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="Run the case as a multi-step task with this step limit (at most 100).",
    )
    mocks: dict[str, ToolMock] = Field(
        default_factory=dict, description="Mock tools for this case (override the suite's)."
    )
    trajectory: Trajectory | None = Field(
        default=None, description="The expected calls across all steps (multi-step)."
    )
    end_state: EndState | None = Field(
        default=None, description="The expected final environment state (multi-step)."
    )
    judge: bool | list[str] | None = Field(
        default=None,
        description="LLM judge rubrics for this case (true: the suite's judge.default).",
    )
    generated: Generated | None = Field(
        default=None, description="Set on cases `toolproof generate` wrote."
    )
    user: SimulatedUser | None = Field(
        default=None,
        description="A simulated user the agent talks to, in place of (or after) the prompt.",
    )
    max_turns: int | None = Field(
        default=None, ge=1, le=100, description="The most user turns in a conversation."
    )
    state: dict[str, Any] | str | None = Field(
        default=None,
        description="The starting state for this case (inline, or a file in the suite "
        "folder), replacing the suite environment's.",
    )
    setup: list[GoldAction] | None = Field(
        default=None,
        description="Tool calls applied to the state before the conversation starts.",
    )
    history: list[Message] | None = Field(
        default=None,
        description="Earlier messages given before the first live turn; their "
        "state-changing tool calls are applied to the state first.",
    )
    communicate: list[str | Communicate] | None = Field(
        default=None, description="Facts the agent must have told the user."
    )
    nl_assertions: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None,
        description="Statements about the conversation that a judge checks (rubric "
        "nl_assertion, with --judge; τ2's NL_ASSERTION): advisory unless the judge is "
        "calibrated, like every judge.",
    )

    @property
    def tool_names(self) -> list[str] | None:
        """The names of the tools offered in this case; None: all the suite's tools."""
        if self.tools is None:
            return None
        return [t if isinstance(t, str) else t.name for t in self.tools]

    @property
    def held_back(self) -> tuple[str, ...]:
        """The tools a scripted user offers the agent at a later turn (``offer``), in the
        order first named: the case does not offer them until that turn."""
        script = self.user.script if self.user is not None else None
        if not script:
            return ()
        names: dict[str, None] = {}
        for entry in script:
            if not isinstance(entry, str) and entry.offer:
                names.update(dict.fromkeys(entry.offer))
        return tuple(names)

    @property
    def definitions(self) -> list[SuiteTool]:
        """The tools this case defines itself (the others are the suite's)."""
        return [t for t in self.tools or () if not isinstance(t, str)]

    @property
    def multistep(self) -> bool:
        """Run through the agent loop: a step limit, mocks, a trajectory or an end state."""
        return bool(
            self.max_steps is not None
            or self.mocks
            or self.trajectory
            or self.end_state
            or self.user is not None
            or self.state is not None
            or self.setup
            or self.history
            or self.communicate
        )

    @model_validator(mode="after")
    def _one_input(self) -> Case:
        if self.prompt is not None and self.messages is not None:
            raise ValueError("give exactly one of 'prompt' and 'messages'")
        if self.prompt is None and self.messages is None and self.user is None:
            raise ValueError("give exactly one of 'prompt' and 'messages'")
        if "expect" not in self.model_fields_set and self.trajectory is None and self.user is None:
            raise ValueError(
                "missing required key 'expect' (optional only with a 'trajectory' or a 'user')"
            )
        return self

    def conversation(self, system: str | None) -> list[Message]:
        """The messages sent to the model: the system prompt first, then the ``history``
        (earlier turns, before the first live one), then the prompt or the messages."""
        sys_text = self.system if self.system is not None else system
        history = list(self.history or ())
        if self.messages is not None:
            if not sys_text or any(m.role == "system" for m in (*history, *self.messages)):
                return [*history, *self.messages]
            return [Message(role="system", content=sys_text), *history, *self.messages]
        out: list[Message] = []
        if sys_text and not any(m.role == "system" for m in history):
            out.append(Message(role="system", content=sys_text))
        out.extend(history)
        if self.prompt is not None:  # a conversation may begin with its simulated user
            out.append(Message(role="user", content=self.prompt))
        return out


TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]

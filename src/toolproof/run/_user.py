"""The simulated user of a conversation case: a script, an LLM, or a recording (replay).

A conversation alternates the agent and the user: the agent runs its tool calls
(see :mod:`toolproof.run._agent`) until it answers in text, then the user
replies, and so on until a stop. Each user here answers the conversation so
far with a :class:`UserReply`: a message, or a stop with its reason.

* :class:`ScriptedUser`: the case's ``script``. At each turn the first rule
  (``{when: MATCHER, say: TEXT}``) whose matcher accepts the agent's last
  text answers; otherwise the next plain reply in order. With neither, the
  conversation stops as ``script_end``. An entry's or rule's ``offer`` names
  tools of the case held back from the agent until that turn: the turn keeps
  them (``UserTurn.offered``), and the agent loop offers them from then on.
* :class:`LlmUser`: a model plays the user, after :data:`GUIDELINES` (one
  message at a time, reveal only when asked, never invent, end with a stop
  token) and the case's scenario. An empty reply, or one cut at the user's
  token limit (an endless reply), stops the conversation as ``user_error``.
* User-side tools (``user.tools``): a script entry or rule may give
  ``call: {tool, args}``, and an LLM user is offered its tools' definitions; each
  call runs on the attempt's state through ``act`` (the same state the agent's
  tools act on) and is kept in the turn (``UserTurn.calls``). An LLM user reads
  each result as a tool message and is asked again, at most
  :data:`MAX_USER_CALLS` calls a turn.
* :class:`RecordedUser`: a replay says again what the recorded user said
  (each turn as recorded, its source kept, so the simulator checks read it
  again), and calls no model.

:func:`user_problems` is the deterministic check of an LLM user's
conversation (pure): it names what the simulator did wrong, and the runner
records such an attempt as ``user_error``, never as the agent's failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolproof.match import Matcher, ToolResult
from toolproof.providers import Exchange, ModelSettings, ProviderRequest
from toolproof.types import (
    Message,
    Role,
    SimulatedUser,
    StopReason,
    Tool,
    ToolCall,
    UserRule,
    UserStep,
    UserToolCall,
    UserTurn,
)

__all__ = [
    "DEFAULT_CONVERSATION_STEPS",
    "DEFAULT_MAX_TURNS",
    "GREETING",
    "GUIDELINES",
    "MAX_USER_CALLS",
    "NUDGE",
    "SHORT_GUIDELINES",
    "STOP_TOKENS",
    "USER_MAX_TOKENS",
    "Act",
    "LlmUser",
    "RecordedUser",
    "ScriptedUser",
    "SimUser",
    "UserReply",
    "UserView",
    "split_stop",
    "transcript_view",
    "user_problems",
    "user_prompts",
    "user_settings",
    "view_for",
]

#: The most user turns of a conversation when its case gives no ``max_turns``.
DEFAULT_MAX_TURNS = 10
#: The most agent model calls of a conversation when its case gives no ``max_steps``.
DEFAULT_CONVERSATION_STEPS = 30
#: The most tool calls a simulated user makes in one turn (an LLM user asking for more is
#: a simulator error, ``user_error``).
MAX_USER_CALLS = 5
#: The user model's output limit when its settings give none: a reply cut there is endless.
USER_MAX_TOKENS = 256

#: The stop tokens a user ends a conversation with, and the reason each is recorded as.
STOP_TOKENS: dict[str, StopReason] = {
    "###STOP###": "user_stop",
    "###TRANSFER###": "transfer",
    "###OUT-OF-SCOPE###": "out_of_scope",
}

#: What the LLM user sees as the agent's first message when the user speaks first.
GREETING = "Hi! How can I help you today?"

GUIDELINES = """\
You play a customer who is talking to a support agent, so that the agent can be tested. \
You are the customer, never the agent. Rules:
- Write only your own next message to the agent: one message, a few sentences at most. \
Never write the agent's side, never put labels such as "Agent:" or "Customer:", and never \
describe the conversation.
- Start with your request in your own words, without every detail at once.
- Give a piece of information only when the agent asks for it, and only if your scenario \
gives it to you. Never invent names, numbers, IDs, dates or any other fact. If the agent \
asks for something your scenario does not give you, say that you do not know it.
- Keep to your persona, if one is given.
- When your task is done, or cannot be done, end the conversation: write ###STOP### (alone, \
or after a short last sentence). If the agent hands you over to a human, write \
###TRANSFER###. If the agent says your request is outside what it can do, write \
###OUT-OF-SCOPE###.
"""

#: The guidelines of the transcript view (:func:`transcript_view`), for small models: they
#: read the conversation as text in one message, and are asked for the customer's next line
#: at its end, near where they write. Measured with the bundled 0.5B model: in the chat
#: view it answers as the agent from its first turn; told about the stop token next to the
#: request, it writes only ``###STOP###``; so the stop rule is here, apart from the request.
SHORT_GUIDELINES = """\
You play a customer in a chat with a support agent, so that the agent can be tested. You are \
the customer: you never play the agent, never offer help, never ask the agent for its details.
Give a piece of information only when the agent asks for it, and only if your scenario gives \
it to you. Never invent names, numbers, IDs or dates.
Example of the customer's part (a different customer):
Agent: Sure. Could you tell me the booking's number?
Customer: Sorry, I do not have it. Can you find it another way?
When the agent has done everything your scenario asks for, your last message is ###STOP###. \
If the agent hands you over to a human, write ###TRANSFER###. If the agent says your request \
is outside what it can do, write ###OUT-OF-SCOPE###.
"""

#: The request at the end of the transcript view's message, for the user's first message.
FIRST_LINE = (
    "Now write your first message as the customer: say what you want, in the first "
    'person ("I ..."), without a label.'
)
#: The request at the end of the transcript view's message, for the user's later messages.
NEXT_LINE = (
    'Now write your next message as the customer, in the first person ("I am ...", '
    '"My ..."), without a label. If the agent asked you something, answer it from your '
    "scenario."
)

#: What the user model is told after a reply that repeated the agent or wrote a label,
#: before it is asked once more (the first reply is kept in the turn's ``exchanges``).
NUDGE = (
    "That was not the customer's message: {why}. Write your own next message as the "
    "customer, in the first person, without a label."
)

#: How the conversation is shown to a user model: ``chat`` (the agent's messages as
#: ``user`` turns, the user's own as ``assistant`` turns, after :data:`GUIDELINES`), or
#: ``transcript`` (one message: the scenario, the conversation as text, the request for
#: the next line, after :data:`SHORT_GUIDELINES`).
UserView = Literal["chat", "transcript"]


def view_for(spec: str) -> UserView:
    """The view a user model gets: ``transcript`` for a local model (``local:``, small
    models that follow it better), ``chat`` for the others."""
    return "transcript" if spec.strip().startswith("local:") else "chat"


def user_prompts(view: UserView) -> str:
    """Every fixed text a user model of a view is shown (part of the user's fingerprint)."""
    if view == "transcript":
        return "\n".join([SHORT_GUIDELINES, FIRST_LINE, NEXT_LINE, NUDGE])
    return "\n".join([GUIDELINES, NUDGE])


_LABEL = re.compile(
    r"(?im)^\s*\**\s*(agent|assistant|user|customer|support|representative|human)"
    r"\s*(?:\([^)\n]{0,20}\))?\s*\**\s*:"
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")


@dataclass(frozen=True, slots=True)
class UserReply:
    """A user's answer to the conversation so far: its message, and whether it stops."""

    turn: UserTurn
    #: Tokens the user model used for it (input, output); None for scripts and replays.
    usage: tuple[int, int] | None = None
    model: str | None = None
    problem: str | None = None

    @property
    def text(self) -> str | None:
        return self.turn.text

    @property
    def stop(self) -> StopReason | None:
        return self.turn.stop


#: Runs one of the user's tools on the attempt's state: (tool, arguments) -> its result.
Act = Callable[[str, Any], ToolResult]


class SimUser:
    """A simulated user: answers the conversation so far (the agent's transcript).

    ``act`` runs one of the user's own tools (``user.tools``) on the attempt's
    state; the calls a turn made are kept in it (``UserTurn.calls``)."""

    async def reply(
        self, transcript: Sequence[Message], turn: int, act: Act | None = None
    ) -> UserReply:
        raise NotImplementedError  # pragma: no cover - abstract


def _run_call(act: Act | None, allowed: Sequence[str], tool: str, args: Any) -> UserToolCall:
    """One user tool call, run (a tool not among the user's, or no state, is an error result)."""
    if tool not in allowed or act is None:
        why = "no environment" if act is None and tool in allowed else "not one of its tools"
        text = json.dumps({"error": f"no tool named {tool} is available ({why})"})
        return UserToolCall(tool=tool, args=args, result=text, is_error=True)
    result = act(tool, args)
    return UserToolCall(tool=tool, args=args, result=result.content, is_error=result.is_error)


def split_stop(text: str) -> tuple[str | None, StopReason | None]:
    """A user message without its stop token, and the stop it asks for (the first token
    in the message decides). Only a user's own message is read: a token in a tool
    result or in the agent's text never ends a conversation."""
    found: tuple[int, str] | None = None
    for token in STOP_TOKENS:
        at = text.find(token)
        if at >= 0 and (found is None or at < found[0]):
            found = (at, token)
    if found is None:
        return text, None
    rest = text.replace(found[1], " ").strip()
    for token in STOP_TOKENS:
        rest = rest.replace(token, " ").strip()
    return (rest or None), STOP_TOKENS[found[1]]


def _agent_said(transcript: Sequence[Message]) -> str | None:
    """The agent's last text answer, or None when it has not spoken yet."""
    for message in reversed(transcript):
        if message.role == "user":
            return None
        if message.role == "assistant" and message.content:
            return message.content
    return None


class ScriptedUser(SimUser):
    """The case's script: the first rule whose matcher takes the agent's last text, or
    else the next plain entry in order; with neither, the conversation stops
    (``script_end``). An entry's or rule's ``call`` runs first; one without ``say``
    goes on with the next plain entry, in the same turn."""

    def __init__(
        self,
        script: Sequence[str | UserRule | UserStep],
        matchers: Sequence[Matcher | None],
        tools: Sequence[str] = (),
    ):
        self._replies = [s for s in script if not isinstance(s, UserRule)]
        self._rules = [
            (m, s) for s, m in zip(script, matchers, strict=True) if isinstance(s, UserRule)
        ]
        self._next = 0
        self._tools = list(tools)

    def _plain(self) -> str | UserStep | None:
        if self._next < len(self._replies):
            self._next += 1
            return self._replies[self._next - 1]
        return None

    async def reply(
        self, transcript: Sequence[Message], turn: int, act: Act | None = None
    ) -> UserReply:
        said = _agent_said(transcript)
        entry: str | UserRule | UserStep | None = None
        if said is not None:
            entry = next((r for m, r in self._rules if m is not None and m.ok(said)), None)
        if entry is None:
            entry = self._plain()
        calls: list[UserToolCall] = []
        offered: dict[str, None] = {}
        while entry is not None:
            if isinstance(entry, str):
                return self._say(entry, calls, offered)
            if entry.call is not None:
                calls.append(_run_call(act, self._tools, entry.call.tool, entry.call.args))
            if entry.offer:
                offered.update(dict.fromkeys(entry.offer))
            if entry.say is not None:
                return self._say(entry.say, calls, offered)
            entry = self._plain()
        return UserReply(
            UserTurn(
                text=None,
                stop="script_end",
                source="script",
                calls=calls or None,
                offered=list(offered) or None,
            )
        )

    @staticmethod
    def _say(text: str, calls: list[UserToolCall], offered: dict[str, None]) -> UserReply:
        message, stop = split_stop(text)
        turn = UserTurn(
            text=message,
            stop=stop,
            source="script",
            calls=calls or None,
            offered=list(offered) or None,
        )
        return UserReply(turn)


class RecordedUser(SimUser):
    """A replay: the recorded user's turns, in order; no model is asked.

    ``script``: the case's scripted user as it is now. What each turn offers the agent
    (``offered``) is what the script offers at that turn, never the recording's: a
    replay does not carry an offer the recording claims forward (without a script, a
    turn offers nothing). The script's calls run nothing (it is asked without an
    environment); its text is not used."""

    def __init__(self, turns: Sequence[UserTurn], script: ScriptedUser | None = None) -> None:
        self._turns = list(turns)
        self._next = 0
        self._script = script

    async def reply(
        self, transcript: Sequence[Message], turn: int, act: Act | None = None
    ) -> UserReply:
        if self._next >= len(self._turns):
            return UserReply(
                UserTurn(text=None, stop="script_end", source="replay"),
                problem="replay: the recording has no further user turn",
            )
        recorded = self._turns[self._next]
        self._next += 1
        # only a script offers tools: a user model's turn never does
        offered = None
        if self._script is not None:
            offered = (await self._script.reply(transcript, turn)).turn.offered
        update = {"at": None, "offered": offered}
        # the recorded user model's tokens count against the conversation's budget again
        return UserReply(recorded.model_copy(update=update), recorded_usage(recorded))


def recorded_usage(turn: UserTurn) -> tuple[int, int] | None:
    """The tokens a recorded LLM-user turn used (its exchanges' and its own response's);
    None when it holds none (a script's turn)."""
    responses = [e.get("response") for e in turn.exchanges or () if isinstance(e, dict)]
    usages = [
        r["usage"]
        for r in (*responses, turn.response)
        if isinstance(r, dict) and isinstance(r.get("usage"), dict)
    ]
    if not usages:
        return None

    def count(u: dict[str, Any], key: str) -> int:
        value = u.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return (
        sum(count(u, "input_tokens") for u in usages),
        sum(count(u, "output_tokens") for u in usages),
    )


def scenario_text(user: SimulatedUser) -> str:
    """The case's scenario, as the LLM user reads it after the guidelines."""
    parts = ["# Your scenario", f"Instructions: {user.instructions}"]
    for label, value in (
        ("What you know (give it only when asked)", user.known),
        ("What you do not know (never state it, never guess it)", user.unknown),
    ):
        if value:
            items = [value] if isinstance(value, str) else value
            parts.append(f"{label}:\n" + "\n".join(f"- {v}" for v in items))
    if user.persona:
        parts.append(f"Persona: {user.persona}")
    return "\n".join(parts)


def user_view(
    transcript: Sequence[Message],
    system: str,
    calls: Mapping[int, Sequence[Message]] | None = None,
) -> list[Message]:
    """The conversation as the LLM user sees it: the agent's text as ``user`` turns, its
    own messages as ``assistant`` turns; the agent's tool calls, results and system
    prompt are not shown. It opens with :data:`GREETING` when the user speaks first.
    ``calls``: the user's own tool calls and their results, by the transcript position
    of the turn that made them, shown before that turn's message."""
    out: list[Message] = [Message(role="system", content=system)]
    for index, message in enumerate(transcript):
        if calls and index in calls:
            if len(out) == 1:
                out.append(Message(role="user", content=GREETING))
            out.extend(calls[index])
        role: Role
        if message.role == "user" and message.content:
            role = "assistant"
        elif message.role == "assistant" and message.content:
            role = "user"
        else:
            continue
        if len(out) > 1 and out[-1].role == role:  # one turn each: join what follows
            joined = f"{out[-1].content}\n\n{message.content}"
            out[-1] = Message(role=role, content=joined)
        else:
            if len(out) == 1 and role == "assistant":
                out.append(Message(role="user", content=GREETING))
            out.append(Message(role=role, content=message.content))
    if len(out) == 1:
        out.append(Message(role="user", content=GREETING))
    return out


def transcript_view(
    transcript: Sequence[Message],
    system: str,
    scenario: str,
    calls: Mapping[int, Sequence[Message]] | None = None,
) -> list[Message]:
    """The conversation as a small user model reads it best: the guidelines, then one
    message with the scenario, the conversation as text (``Agent:`` and ``Customer
    (you):`` lines, opening with :data:`GREETING` when the user speaks first), and last
    the request for the customer's message (:data:`FIRST_LINE` before its first one,
    :data:`NEXT_LINE` after). The agent's tool
    calls, results and system prompt are not shown; the user's own tool calls (``calls``,
    by the transcript position of the turn that made them) are, as lines before that
    turn's message."""
    lines: list[str] = []
    for index, message in enumerate(transcript):
        for made in (calls or {}).get(index, ()):
            if made.role == "tool":
                lines.append(f"(result of your {made.name}: {made.content})")
            for call in made.tool_calls or ():
                args = json.dumps(call.arguments, ensure_ascii=False)
                lines.append(f"(you called {call.name} with {args})")
        if message.role == "user" and message.content:
            if not lines:
                lines.append(f"Agent: {GREETING}")
            lines.append(f"Customer (you): {message.content}")
        elif message.role == "assistant" and message.content:
            lines.append(f"Agent: {message.content}")
    if not lines:
        lines.append(f"Agent: {GREETING}")
    spoke = any(m.role == "user" and m.content for m in transcript)
    ask = NEXT_LINE if spoke else FIRST_LINE
    body = f"{scenario}\n\n# The conversation so far\n" + "\n".join(lines) + f"\n\n{ask}"
    return [Message(role="system", content=system), Message(role="user", content=body)]


def user_settings(settings: ModelSettings) -> ModelSettings:
    """The user model's settings: its output capped (:data:`USER_MAX_TOKENS` unless set),
    so an endless reply is cut and recorded, never waited for."""
    if settings.max_tokens is not None:
        return settings
    return settings.model_copy(update={"max_tokens": USER_MAX_TOKENS})


def _nudge_reason(response: Any, agent_said: str | None) -> str | None:
    """Why a user model's reply breaks the one-message rule, so that it is asked once more
    (None: it does not, or it is cut, empty or a tool call, which are not asked again).
    The checks of :func:`user_problems` still read the reply the turn keeps."""
    text = (response.text or "").strip()
    if not text or (response.stop_reason or "").lower() in ("length", "max_tokens"):
        return None
    if agent_said is not None and _echoes(text, agent_said):
        return "it repeated the agent's last message"
    label = _LABEL.search(text)
    if label is not None:
        return f"it wrote a '{label.group(1)}:' line"
    return None


CallUser = Callable[[ProviderRequest], Awaitable[tuple[Exchange, bool]]]


class LlmUser(SimUser):
    """A model plays the user: guidelines, then the scenario, then the conversation.

    With ``tools`` (the definitions of ``user.tools``), the user model may call
    them: each call runs on the attempt's state, its result goes back to the user
    model as a tool message, and the model is asked again, at most
    :data:`MAX_USER_CALLS` calls a turn. Each exchange of a turn is kept."""

    def __init__(
        self,
        call: CallUser,
        *,
        spec: str,
        model: str,
        user: SimulatedUser,
        settings: ModelSettings,
        case_id: str,
        attempt: int,
        tools: Sequence[Tool] = (),
        view: UserView = "chat",
    ) -> None:
        self._call = call
        self.spec = spec
        self._model = model
        self._view = view
        self._scenario = scenario_text(user)
        self._system = (
            SHORT_GUIDELINES if view == "transcript" else f"{GUIDELINES}\n{self._scenario}"
        )
        self._settings = settings
        self._case_id = case_id
        self._attempt = attempt
        self._tools = list(tools)
        #: The user's own calls and results so far, by the transcript position of their turn.
        self._calls: dict[int, list[Message]] = {}
        #: Requests that asked for a tool call so far: a request's step is the user turn
        #: plus these (each request of the user model has its own step).
        self._extra = 0

    async def reply(
        self, transcript: Sequence[Message], turn: int, act: Act | None = None
    ) -> UserReply:
        if self._view == "transcript":
            messages = transcript_view(transcript, self._system, self._scenario, self._calls)
        else:
            messages = user_view(transcript, self._system, self._calls)
        agent_said = _agent_said(transcript)
        nudged: str | None = None
        allowed = [t.name for t in self._tools]
        exchanges: list[dict[str, Any]] = []
        calls: list[UserToolCall] = []
        made: list[Message] = []
        used_in = used_out = 0
        counted = False
        while True:
            request = ProviderRequest.model_construct(
                model=self._model,
                messages=[*messages, *made],
                tools=self._tools,
                settings=self._settings,
                case_id=self._case_id,
                attempt=self._attempt,
                step=turn + self._extra,
            )
            exchange, cached = await self._call(request)
            response = exchange.response
            if response.usage is not None:
                counted = True
                used_in += response.usage.input_tokens or 0
                used_out += response.usage.output_tokens or 0
            if not (response.tool_calls and self._tools):
                why = None if nudged is not None else _nudge_reason(response, agent_said)
                if why is None:
                    break
                # one more ask, said why; the first reply is kept in the turn's exchanges
                nudged = why
                exchanges.append(
                    {
                        "request": exchange.request,
                        "response": response.model_dump(mode="json"),
                        "nudged": why,
                    }
                )
                self._extra += 1
                made.append(Message(role="assistant", content=response.text))
                made.append(Message(role="user", content=NUDGE.format(why=why)))
                continue
            if len(calls) + len(response.tool_calls) > MAX_USER_CALLS:
                break  # none of them runs: the reply is the user's error (below)
            exchanges.append(
                {"request": exchange.request, "response": response.model_dump(mode="json")}
            )
            self._extra += 1
            asked = [
                c if c.id else c.model_copy(update={"id": f"user_{turn}_{len(calls) + i}"})
                for i, c in enumerate(response.tool_calls)
            ]
            made.append(Message(role="assistant", content=response.text, tool_calls=asked))
            for c in asked:
                done = self._run(act, allowed, c)
                calls.append(done)
                made.append(
                    Message(
                        role="tool",
                        tool_call_id=c.id,
                        name=c.name,
                        content=done.result,
                        is_error=done.is_error,
                    )
                )
        shown = [m for m in made if m.role == "tool" or m.tool_calls]
        if shown:
            self._calls[len(transcript)] = shown
        used = (used_in, used_out) if counted else None
        raw_text = (response.text or "").strip()
        base: dict[str, Any] = {
            "source": "model",
            "request": exchange.request,
            "response": response.model_dump(mode="json"),
            "cached": cached,
            "calls": calls or None,
            "exchanges": exchanges or None,
            "nudged": nudged,
        }
        cut = (response.stop_reason or "").lower() in ("length", "max_tokens")
        problem: str | None = None
        if response.tool_calls and self._tools:
            problem = (
                f"the simulated user asked for more than {MAX_USER_CALLS} tool calls in one turn"
            )
        elif cut:
            limit = self._settings.max_tokens
            problem = (
                f"the simulated user's reply was cut at its output limit ({limit} tokens): "
                "an endless reply"
            )
        elif not raw_text:
            problem = "the simulated user answered nothing"
        if problem is not None:
            turn_record = UserTurn(text=raw_text or None, stop="user_error", **base)
            return UserReply(turn_record, used, response.model, problem)
        text, stop = split_stop(raw_text)
        return UserReply(UserTurn(text=text, stop=stop, **base), used, response.model)

    @staticmethod
    def _run(act: Act | None, allowed: Sequence[str], call: ToolCall) -> UserToolCall:
        if call.parse_error is not None or not isinstance(call.arguments, dict):
            text = json.dumps({"error": f"the arguments of {call.name} are not a JSON object"})
            return UserToolCall(tool=call.name, args=call.arguments, result=text, is_error=True)
        return _run_call(act, allowed, call.name, call.arguments)


# -- checking the simulator (pure) ------------------------------------------------------------


def _items(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _id_like(word: str) -> bool:
    """Letters with 3 digits or more (BK-4417, A123B), or a number of 5 digits or more:
    not a time (10am), a year (2026) or a small count."""
    digits = sum(ch.isdigit() for ch in word)
    if any(ch.isalpha() for ch in word):
        return digits >= 3
    return digits >= 5


def _tokens(text: str) -> set[str]:
    """The ID-like values and e-mail addresses of a text, lower-cased."""
    found = {m.group(0).lower() for m in _EMAIL.finditer(text)}
    found |= {m.group(0).lower() for m in _WORD.finditer(text) if _id_like(m.group(0))}
    return found


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def user_problems(
    user: SimulatedUser,
    transcript: Sequence[Message],
    turns: Sequence[UserTurn],
    *,
    needs_call: bool,
) -> list[str]:
    """What an LLM user did wrong in one conversation, one line each (empty: nothing).

    Deterministic and conservative; each turn is read against what the agent had
    said before it (``UserTurn.at``: the transcript messages before the turn):

    * it stated a fact of ``unknown`` (the item's ID-like values, or the whole item);
    * it gave an ID-like value (letters with 3 digits or more, a number of 5 digits or
      more, an e-mail address) found in neither its scenario, nor anything the agent said
      before, nor the results of its own tool calls;
    * it stopped (``###STOP###``) before the agent made any tool call, in a case whose
      contract needs one (``needs_call``);
    * it broke the one-message rule: a line such as ``Agent:`` or ``Customer:`` (it wrote
      several turns, or played the agent), or it repeated the agent's last message (the
      same text, or one holding the other, 30 characters or more).

    Scripted turns are the case author's text, and are not checked (a replayed turn keeps its
    recorded source, and is checked again).
    """
    problems: list[str] = []
    scenario = " ".join([user.instructions or "", *_items(user.known), user.persona or ""])
    base = _tokens(scenario)
    secret = [(item, _tokens(item) - base) for item in _items(user.unknown)]
    results: set[str] = set()  # what the user's own tool calls showed it
    for number, turn in enumerate(turns, 1):
        for done in turn.calls or ():
            results |= _tokens(done.result)
        if turn.source != "model" or not turn.text:
            continue
        before = transcript[: turn.at if turn.at is not None else len(transcript)]
        allowed = base | results
        last_agent: str | None = None
        for message in before:
            if message.role == "assistant" and message.content:
                allowed |= _tokens(message.content)
                last_agent = message.content
        problems.extend(_message_problems(turn.text, number, secret, allowed))
        if last_agent is not None and _echoes(turn.text, last_agent):
            problems.append(
                f"user turn {number}: repeated the agent's message (it played the agent, "
                "not the user): the one-message rule"
            )
    last = turns[-1] if turns else None
    if last is not None and last.source == "model" and last.stop == "user_stop" and needs_call:
        before = transcript[: last.at if last.at is not None else len(transcript)]
        if not any(m.tool_calls for m in before if m.role == "assistant"):
            problems.append(
                "the user stopped the conversation before the agent made any tool call, in a "
                "task that needs one"
            )
    return problems


#: English contractions written out, so that "I'm Chen Smith, a retail agent" repeated as
#: "I am Chen Smith, a retail agent" is the same text to the echo check.
_CONTRACTIONS = (
    (re.compile(r"(?i)\bcan[’']t\b"), "can not"),
    (re.compile(r"(?i)\bwon[’']t\b"), "will not"),
    (re.compile(r"(?i)n[’']t\b"), " not"),
    (re.compile(r"(?i)[’']m\b"), " am"),
    (re.compile(r"(?i)[’']re\b"), " are"),
    (re.compile(r"(?i)[’']ll\b"), " will"),
    (re.compile(r"(?i)[’']ve\b"), " have"),
    (re.compile(r"(?i)[’']d\b"), " would"),
)


def _expanded(text: str) -> str:
    for pattern, full in _CONTRACTIONS:
        text = pattern.sub(full, text)
    return text


def _echoes(said: str, agent: str) -> bool:
    """The user's message is the agent's last one again (or holds it, or is held in it,
    when 30 characters or more long), contractions written out ("I'm" is "I am"): the
    simulator answered as the agent."""
    mine, theirs = _norm(_expanded(said)), _norm(_expanded(agent))
    if not mine or not theirs:
        return False
    if mine == theirs:
        return True
    short = min(len(mine), len(theirs))
    return short >= 30 and (mine in theirs or theirs in mine)


def _message_problems(
    text: str, turn: int, secret: list[tuple[str, set[str]]], allowed: set[str]
) -> list[str]:
    out = []
    said = _tokens(text)
    for item, values in secret:
        leaked = sorted(values & said)
        whole = _norm(item)
        if leaked or (len(whole) >= 8 and whole in _norm(text)):
            what = ", ".join(leaked) if leaked else repr(item)
            out.append(f"user turn {turn}: stated {what}, which its scenario says it does not know")
    invented = sorted(said - allowed - {v for _, vs in secret for v in vs})
    if invented:
        out.append(
            f"user turn {turn}: gave {', '.join(invented)}, found in neither its scenario nor "
            "the conversation (invented)"
        )
    label = _LABEL.search(text)
    if label is not None:
        out.append(
            f"user turn {turn}: wrote a '{label.group(1)}:' line (several turns in one message, "
            "or the agent's part): the one-message rule"
        )
    return out

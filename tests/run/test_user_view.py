"""How a small user model is shown the conversation (the transcript view), and the label
check that reads the labels that view uses."""

from __future__ import annotations

import asyncio

from toolproof.providers import Exchange, ModelSettings, ProviderRequest
from toolproof.providers._scripted import ScriptedProvider
from toolproof.run._user import (
    FIRST_LINE,
    GREETING,
    NEXT_LINE,
    SHORT_GUIDELINES,
    LlmUser,
    transcript_view,
    user_problems,
    user_prompts,
    view_for,
)
from toolproof.types import Message, SimulatedUser, UserTurn

USER = SimulatedUser(
    instructions="Cancel booking BK-4417.",
    known="Your membership number is MEM-90210.",
    unknown="The booking's price.",
)
TRANSCRIPT = [
    Message(role="system", content="You are a bookings agent."),
    Message(role="user", content="Hi, I want to cancel a booking."),
    Message(role="assistant", content="Sure. What is your membership number?"),
]


def test_a_local_user_model_gets_the_transcript_view_and_the_others_the_chat_view() -> None:
    assert view_for("local:") == "transcript"
    assert view_for("local:/models/m.gguf") == "transcript"
    assert view_for("openai:gpt-4.1-mini") == "chat"
    assert view_for("scripted:user") == "chat"
    # the fixed texts of each view are part of the user's fingerprint, and differ
    assert SHORT_GUIDELINES in user_prompts("transcript")
    assert user_prompts("transcript") != user_prompts("chat")


def test_the_transcript_view_is_one_message_with_the_request_last() -> None:
    messages = transcript_view(TRANSCRIPT, SHORT_GUIDELINES, "# Your scenario\nX")
    assert [m.role for m in messages] == ["system", "user"]
    body = messages[1].content or ""
    assert body.startswith("# Your scenario\nX\n\n# The conversation so far\n")
    assert body.endswith(f"\n\n{NEXT_LINE}")  # the user has spoken: its next message
    lines = body.split("# The conversation so far\n")[1].split("\n\n")[0].splitlines()
    assert lines == [
        f"Agent: {GREETING}",  # the user spoke first: the greeting opens the conversation
        "Customer (you): Hi, I want to cancel a booking.",
        "Agent: Sure. What is your membership number?",
    ]
    # the agent's system prompt is not shown to the user
    assert "bookings agent" not in body


def test_the_transcript_view_of_a_first_turn_asks_for_the_first_message() -> None:
    (_, body) = transcript_view(TRANSCRIPT[:1], SHORT_GUIDELINES, "S")
    assert body.content == f"S\n\n# The conversation so far\nAgent: {GREETING}\n\n{FIRST_LINE}"


def test_a_label_line_with_the_views_own_label_is_still_flagged() -> None:
    turn = UserTurn(text="Customer (you): My number is MEM-90210.", source="model", at=3)
    problems = user_problems(USER, TRANSCRIPT, [turn], needs_call=False)
    assert problems == [
        "user turn 1: wrote a 'Customer:' line (several turns in one message, or the "
        "agent's part): the one-message rule"
    ]


def _user(answers: list[str], view: str) -> tuple[LlmUser, list[ProviderRequest]]:
    provider = ScriptedProvider.from_dict(
        {"cases": {"c": {"steps": [{"text": a} for a in answers]}}}
    )
    sent: list[ProviderRequest] = []

    async def call(request: ProviderRequest) -> tuple[Exchange, bool]:
        sent.append(request)
        return await provider.generate(request), False

    user = LlmUser(
        call,
        spec="local:",
        model="m",
        user=USER,
        settings=ModelSettings(),
        case_id="c",
        attempt=0,
        view=view,  # type: ignore[arg-type]
    )
    return user, sent


def test_an_llm_user_in_the_transcript_view_sends_that_view_and_keeps_it_raw() -> None:
    user, sent = _user(["My membership number is MEM-90210."], "transcript")
    reply = asyncio.run(user.reply(TRANSCRIPT, 0))
    assert reply.text == "My membership number is MEM-90210."
    (request,) = sent
    assert [m.role for m in request.messages] == ["system", "user"]
    assert request.messages[0].content == SHORT_GUIDELINES
    # the scenario is in the one message, before the conversation
    assert (request.messages[1].content or "").startswith("# Your scenario\nInstructions: Cancel")
    assert reply.turn.request is not None
    assert reply.turn.request["messages"][1]["content"] == request.messages[1].content


def test_a_transcript_user_writing_a_label_is_nudged_once_and_flagged_if_it_persists() -> None:
    bad = "Agent: Sure. What is your membership number?"
    user, sent = _user([bad, bad, "unused"], "transcript")
    reply = asyncio.run(user.reply(TRANSCRIPT, 0))
    assert len(sent) == 2  # asked once more, not more
    assert reply.turn.nudged == "it repeated the agent's last message"
    assert reply.text == bad
    problems = user_problems(
        USER, TRANSCRIPT, [reply.turn.model_copy(update={"at": 3})], needs_call=False
    )
    assert any("wrote a 'Agent:' line" in p for p in problems)
    assert any("repeated the agent's message" in p for p in problems)


def test_an_echo_with_contractions_written_out_is_still_an_echo() -> None:
    """Seen live: the agent said "I'm Chen Smith, a retail agent located in Jacksonville,
    Florida." and the bundled model, as the user, said it back with "I am"."""
    agent = "I'm Chen Smith, a retail agent located in Jacksonville, Florida."
    transcript = [*TRANSCRIPT, Message(role="assistant", content=agent)]
    said = "I am Chen Smith, a retail agent located in Jacksonville, Florida."
    turn = UserTurn(text=said, source="model", at=len(transcript))
    assert user_problems(USER, transcript, [turn], needs_call=False) == [
        "user turn 1: repeated the agent's message (it played the agent, not the user): the "
        "one-message rule"
    ]
    # a short answer that shares words with the agent's question is no echo
    other = UserTurn(text="I'm not sure, I don't know it.", source="model", at=len(transcript))
    assert user_problems(USER, transcript, [other], needs_call=False) == []

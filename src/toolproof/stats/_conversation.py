"""Conversation figures: pass^k over conversations, turns, questions, stop reasons.

A conversation is an attempt of a case with a simulated user (its record has
``user_turns``). The figures, as τ2 reports them:

* **pass^k** for k = 1 up to the fewest scored attempts of any conversation
  case: the mean over cases of C(c, k) / C(n, k) (n scored attempts, c passed).
  Attempts that got no verdict (infrastructure failures and ``user_error``,
  the simulator's own mistakes) are left out, as τ2 leaves them out.
* **user turns**: the messages the simulated user sent (a bare stop token is
  not a message); **agent questions**: the agent's text answers (assistant
  messages with text and no tool call) whose text ends with ``?``;
  **turns per success**: user turns plus agent text answers of the scored
  conversations, divided by the passing ones.
* **stopped by**: what ended each conversation (``user_stop``, ``transfer``,
  ``out_of_scope``, ``max_turns``, ``script_end``, ``user_error``, ``steps``...).
* **user turns asked again**: turns whose first reply repeated the agent or wrote a
  label line, so the user model was asked once more (``UserTurn.nudged``).
* the simulated user's tokens and cost, apart from the agent's.

Pure: it reads records and verdicts, one at a time, and keeps a few numbers
per conversation attempt.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from toolproof.stats._rates import Rate, rate
from toolproof.stats._repeats import pass_hat_k
from toolproof.types import Outcome, Record, Verdict

__all__ = ["ConversationCounts", "ConversationStats", "agent_questions"]


class ConversationStats(BaseModel):
    """A target's conversations (attempts of cases with a simulated user)."""

    model_config = ConfigDict(extra="forbid")

    conversations: int = Field(description="Attempts of cases with a simulated user.")
    scored: int = Field(description="Those that got a verdict.")
    passed: int
    user_errors: Rate = Field(
        description="Conversations whose simulated user erred (outcome user_error), of all "
        "conversations: not scored."
    )
    pass_hat_k: dict[int, float] = Field(
        description="pass^k for k = 1 up to the fewest scored attempts of a conversation "
        "case: the mean over cases of C(c,k)/C(n,k) (user and infrastructure errors left out)."
    )
    user_turns: int = Field(description="Messages the simulated users sent, in all.")
    user_turns_mean: float | None = Field(description="User messages per conversation.")
    agent_questions: int = Field(
        description="Agent text answers ending with '?', in all conversations."
    )
    agent_questions_mean: float | None = Field(description="Agent questions per conversation.")
    turns_per_success: float | None = Field(
        description="User messages and agent text answers of the scored conversations, per "
        "passing conversation."
    )
    stopped_by: dict[str, int] = Field(description="What ended the conversations.")
    user_turns_nudged: int = Field(
        default=0,
        description="User turns whose first reply broke the one-message rule, so the user "
        "model was asked once more (UserTurn.nudged).",
    )
    user_input_tokens: int = 0
    user_output_tokens: int = 0
    user_cost_usd: float | None = Field(
        default=None, description="The simulated user's cost (the agent's is apart)."
    )


def agent_questions(record: Record) -> int:
    """The agent's text answers in a record's transcript that end with a question mark."""
    return sum(
        1
        for m in record.transcript or ()
        if m.role == "assistant"
        and not m.tool_calls
        and m.content
        and m.content.rstrip().endswith("?")
    )


def _agent_texts(record: Record) -> int:
    return sum(
        1
        for m in record.transcript or ()
        if m.role == "assistant" and not m.tool_calls and m.content
    )


class ConversationCounts:
    """What the conversation figures need, added one record and one verdict at a time."""

    def __init__(self) -> None:
        self._turns: dict[tuple[str, int], int] = {}  # (case, attempt) -> turns, if scored
        self._conversations = 0
        self._user_errors = 0
        self._user_turns = 0
        self._nudged = 0
        self._questions = 0
        self._stops: Counter[str] = Counter()
        self._tokens = [0, 0]
        self._cost = 0.0
        self._priced = 0
        self._cases: dict[str, list[int]] = {}  # case -> [scored, passed]
        self._scored_turns = 0
        self._passed = 0

    def add_record(self, r: Record) -> None:
        if r.user_turns is None:
            return
        self._conversations += 1
        said = sum(1 for t in r.user_turns if t.text)
        self._user_turns += said
        self._nudged += sum(1 for t in r.user_turns if t.nudged)
        self._questions += agent_questions(r)
        self._stops[r.stopped_by or "agent"] += 1
        if r.outcome is Outcome.user_error:
            self._user_errors += 1
        if r.user_usage is not None:
            self._tokens[0] += r.user_usage.input_tokens or 0
            self._tokens[1] += r.user_usage.output_tokens or 0
        if r.user_cost_usd is not None:
            self._cost += r.user_cost_usd
            self._priced += 1
        if r.outcome is Outcome.ok:
            self._turns[(r.case_id, r.attempt)] = said + _agent_texts(r)

    def add_verdict(self, v: Verdict) -> None:
        turns = self._turns.pop((v.case_id, v.attempt), None)
        if turns is None:
            return
        counts = self._cases.setdefault(v.case_id, [0, 0])
        counts[0] += 1
        counts[1] += 1 if v.passed else 0
        self._scored_turns += turns
        self._passed += 1 if v.passed else 0

    def stats(self) -> ConversationStats | None:
        if not self._conversations:
            return None
        scored = sum(n for n, _ in self._cases.values())
        most = min((n for n, _ in self._cases.values()), default=0)
        curve = {
            k: sum(pass_hat_k(n, c, k) for n, c in self._cases.values()) / len(self._cases)
            for k in range(1, most + 1)
        }
        n = self._conversations
        return ConversationStats(
            conversations=n,
            scored=scored,
            passed=self._passed,
            user_errors=rate(self._user_errors, n),
            pass_hat_k=curve,
            user_turns=self._user_turns,
            user_turns_mean=self._user_turns / n,
            agent_questions=self._questions,
            agent_questions_mean=self._questions / n,
            turns_per_success=self._scored_turns / self._passed if self._passed else None,
            stopped_by=dict(self._stops.most_common()),
            user_turns_nudged=self._nudged,
            user_input_tokens=self._tokens[0],
            user_output_tokens=self._tokens[1],
            user_cost_usd=self._cost if self._priced else None,
        )

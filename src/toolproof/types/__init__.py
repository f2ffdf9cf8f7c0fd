"""toolproof's canonical, provider-neutral types."""

from toolproof.types._case import (
    CallSpec,
    Case,
    CountSpec,
    EndState,
    Expect,
    Fault,
    GoldAction,
    Kind,
    MockRule,
    Order,
    ToolMock,
    Trajectory,
)
from toolproof.types._message import Conversation, Message, Role, ToolCall
from toolproof.types._record import RECORD_FORMAT, AttemptError, Outcome, Record
from toolproof.types._response import Response, Usage
from toolproof.types._suite import (
    SUITE_FORMAT,
    Defaults,
    Environment,
    Suite,
    SuiteTool,
    Thresholds,
)
from toolproof.types._tool import Effect, Risk, Tool
from toolproof.types._verdict import STAGE_ORDER, Check, FailureClass, MultiStep, Stage, Verdict

__all__ = [
    "RECORD_FORMAT",
    "STAGE_ORDER",
    "SUITE_FORMAT",
    "AttemptError",
    "CallSpec",
    "Case",
    "Check",
    "Conversation",
    "CountSpec",
    "Defaults",
    "Effect",
    "EndState",
    "Environment",
    "Expect",
    "FailureClass",
    "Fault",
    "GoldAction",
    "Kind",
    "Message",
    "MockRule",
    "MultiStep",
    "Order",
    "Outcome",
    "Record",
    "Response",
    "Risk",
    "Role",
    "Stage",
    "Suite",
    "SuiteTool",
    "Thresholds",
    "Tool",
    "ToolCall",
    "ToolMock",
    "Trajectory",
    "Usage",
    "Verdict",
]

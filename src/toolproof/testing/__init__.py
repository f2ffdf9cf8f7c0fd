"""Test helpers shipped with toolproof: a local server that speaks the providers' wire formats,
and an in-memory transport.

Use it to test a suite, a provider or a benchmark offline: point a
provider's ``base_url`` at :class:`StubServer` and script its answers and
faults (rate limits, server errors, delays, truncated bodies). Or hand a
provider a :class:`MockTransport` whose function answers each request, with
no socket at all.
"""

from toolproof.testing._mock_transport import MockTransport
from toolproof.testing._rate_limited import BucketLimitedStub, TokenLimitedStub, WindowLimitedStub
from toolproof.testing._script import (
    Call,
    Delay,
    RateLimit,
    RawReply,
    Reply,
    ServerError,
    Step,
    Truncated,
)
from toolproof.testing._stub import StubRequest, StubServer

__all__ = [
    "BucketLimitedStub",
    "Call",
    "Delay",
    "MockTransport",
    "RateLimit",
    "RawReply",
    "Reply",
    "ServerError",
    "Step",
    "StubRequest",
    "StubServer",
    "TokenLimitedStub",
    "Truncated",
    "WindowLimitedStub",
]

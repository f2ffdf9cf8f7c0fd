"""MockTransport: answer a provider's HTTP requests from a function, in memory."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from toolproof.providers._transport import HttpRequest, HttpResponse, Transport

Handler = Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]


class MockTransport(Transport):
    """A transport whose answers come from ``handler(request)``, sync or async.

    The provider adapter runs unchanged: its request is encoded as on the wire,
    and the answer goes through the same status and body classification as
    the network transport's. Every request is kept in :attr:`requests`::

        from toolproof.providers import HttpResponse, ModelSettings
        from toolproof.providers._openai_chat import OpenAIChatProvider
        from toolproof.testing import MockTransport

        def handler(request):
            return HttpResponse.from_json({"choices": [...]})

        provider = OpenAIChatProvider("gpt-4.1-mini", ModelSettings(), MockTransport(handler))
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[HttpRequest] = []

    async def send(self, request: HttpRequest) -> HttpResponse:
        self.requests.append(request)
        answer = self.handler(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

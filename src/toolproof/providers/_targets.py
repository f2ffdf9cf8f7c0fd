"""The user's own agent as a target: a Python callable or an HTTP endpoint.

Both are :class:`~toolproof.providers.Provider` adapters, so they go through
the same runner, records and scoring as models.

``--target mypkg.agent:respond``
    ``respond(request: ProviderRequest)``, sync or async, returns a
    ``Response``, an OpenAI-style assistant message, an Anthropic-style
    content list, or a canonical Response mapping (see :func:`to_response`).
    A sync callable runs in a worker thread. If it raises, the attempt ends
    as ``server_error`` (not retried) and is never scored as model behaviour.

``--target http://127.0.0.1:8080/respond``
    receives ``POST {"messages": [...], "tools": [...], "settings": {...}}``
    (canonical JSON) and answers with a canonical Response JSON (or one of
    the shapes above). ``api_key_env`` in the settings sends
    ``Authorization: Bearer $VAR``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolproof._shared.loaded_keys import remember_secret
from toolproof.errors import UserError
from toolproof.providers._base import (
    GENERATION_FIELDS,
    Exchange,
    ModelSettings,
    Provider,
    ProviderRequest,
    TransportError,
)
from toolproof.providers._normalise import NotAResponse, to_response
from toolproof.types import Outcome

if TYPE_CHECKING:
    from toolproof.providers._transport import Transport

__all__ = ["CallableTarget", "HttpTarget", "TargetCrash", "create_target", "is_http_target"]


class TargetCrash(TransportError):
    """The agent under test raised or answered nonsense: recorded, not retried, not scored."""

    @property
    def retryable(self) -> bool:
        return False


def is_http_target(spec: str) -> bool:
    return spec.startswith(("http://", "https://"))


def agent_spec(target: str) -> str:
    """The provider spec of an agent target: ``agent:module:function`` or ``agent-http:URL``.

    Agents register in the ``toolproof.providers`` entry-point group like every model
    provider, under these two names.
    """
    return f"agent-http:{target}" if is_http_target(target) else f"agent:{target}"


def create_target(
    spec: str, settings: ModelSettings, transport: Transport | None = None
) -> Provider:
    """A provider for ``module:function`` or ``http(s)://...``."""
    if is_http_target(spec):
        if transport is None:
            from toolproof.providers._http import HttpTransport

            transport = HttpTransport()
        return HttpTarget(spec, settings, transport)
    return CallableTarget(spec, settings)


def _canonical(request: ProviderRequest) -> dict[str, Any]:
    sent: dict[str, Any] = request.model_dump(
        mode="json", include={"messages", "tools"}, exclude_none=True
    )
    settings = request.settings.model_dump(
        mode="json", include=set(GENERATION_FIELDS), exclude_none=True
    )
    if settings:
        sent["settings"] = settings
    return sent


def _read(value: Any, where: str, sent: Any) -> Any:
    try:
        return to_response(value)
    except NotAResponse as exc:
        raise TargetCrash(
            Outcome.rejected, f"{where}: unreadable answer: {exc}", request=sent
        ) from None


class CallableTarget(Provider):
    """A Python function ``module:function`` as the system under test."""

    name = "target"
    cacheable = False

    def __init__(
        self,
        spec: str,
        settings: ModelSettings | None = None,
        transport: Transport | None = None,
        *,
        fn: Callable[..., Any] | None = None,
    ) -> None:
        del transport  # a Python callable needs none
        self.spec = spec
        self.settings = settings or ModelSettings()
        self.fn = fn if fn is not None else _import_callable(spec)
        self._async = inspect.iscoroutinefunction(self.fn)

    async def generate(self, request: ProviderRequest) -> Exchange:
        sent = _canonical(request)
        started = time.perf_counter()
        try:
            if self._async:
                result = await asyncio.wait_for(self.fn(request), self.settings.timeout_s)
            else:
                result = await asyncio.wait_for(
                    asyncio.to_thread(self.fn, request), self.settings.timeout_s
                )
        except TimeoutError:
            raise TransportError(
                Outcome.timeout,
                f"{self.spec}: no answer within {self.settings.timeout_s:g} s",
                request=sent,
            ) from None
        except Exception as exc:
            detail = "".join(traceback.format_exception_only(exc)).strip()
            raise TargetCrash(
                Outcome.server_error, f"{self.spec} raised {detail}", request=sent
            ) from exc
        response = _read(result, self.spec, sent)
        if response.latency_ms is None:
            latency = (time.perf_counter() - started) * 1000.0
            response = response.model_copy(update={"latency_ms": latency})
        return Exchange(request=sent, response=response)


def _import_callable(spec: str) -> Callable[..., Any]:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UserError(f"target {spec!r} must be written module:function or http(s)://URL")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"target {spec!r}: cannot import {module_name!r}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UserError(f"target {spec!r}: {module_name!r} has no {attr!r}")
    if not callable(obj):
        raise UserError(f"target {spec!r} is not callable")
    fn: Callable[..., Any] = obj
    return fn


class HttpTarget(Provider):
    """An agent behind HTTP that speaks canonical JSON."""

    name = "target"
    cacheable = False

    def __init__(self, url: str, settings: ModelSettings, transport: Transport) -> None:
        self.url = url
        self.settings = settings
        self.transport = transport

    async def generate(self, request: ProviderRequest) -> Exchange:
        sent = _canonical(request)
        headers: dict[str, str] = {}
        if self.settings.api_key_env:
            key = os.environ.get(self.settings.api_key_env)
            if not key:
                raise UserError(
                    f"{self.url}: environment variable {self.settings.api_key_env} is not set"
                )
            remember_secret(key)  # redacted from everything toolproof writes
            headers["authorization"] = f"Bearer {key}"
        body, latency_ms = await self.transport.post_json(
            self.url, sent, headers, self.settings.timeout_s
        )
        response = _read(body, self.url, sent)
        if response.latency_ms is None:
            response = response.model_copy(update={"latency_ms": latency_ms})
        return Exchange(request=sent, response=response)

"""Find a provider by name.

Providers register in the ``toolproof.providers`` entry-point group; the
built-in ones use the same group as third-party packages::

    [project.entry-points."toolproof.providers"]
    mycloud = "mypackage.provider:MyCloudProvider"

A provider class is constructed as ``cls(model, settings, transport)``. A
module is imported only when its provider is asked for, so the command line
starts fast.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from toolproof.errors import UserError
from toolproof.providers._base import ModelSettings, Provider

if TYPE_CHECKING:
    from toolproof.providers._transport import Transport

__all__ = ["ENTRY_POINT_GROUP", "create_provider", "provider_class", "provider_names"]

ENTRY_POINT_GROUP = "toolproof.providers"


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def provider_names() -> list[str]:
    """Names of every registered provider, sorted."""
    return sorted(_entry_points())


#: Providers whose model may be left out (``local:`` means the bundled model).
_NAME_ONLY = frozenset({"local"})


def split_spec(spec: str) -> tuple[str, str]:
    """``openai:gpt-4.1-mini`` → ``("openai", "gpt-4.1-mini")``. Only the first colon splits."""
    name, sep, model = spec.partition(":")
    if name.strip() in _NAME_ONLY and sep:
        return name.strip(), model.strip()
    if not sep or not name.strip() or not model.strip():
        raise UserError(f"model {spec!r} must be written NAME:MODEL, e.g. openai:gpt-4.1-mini")
    return name.strip(), model.strip()


def provider_class(spec: str) -> type[Provider]:
    """The provider class a ``NAME:MODEL`` spec names. Unknown names are a UserError."""
    name, _ = split_spec(spec)
    return _load(name, spec)


def create_provider(spec: str, settings: ModelSettings, transport: Transport) -> Provider:
    """Create the provider a ``NAME:MODEL`` spec names. Unknown names are a UserError."""
    name, model = split_spec(spec)
    factory: Any = _load(name, spec)  # the constructor signature is a convention
    provider: Provider = factory(model, settings, transport)
    return provider


def _load(name: str, spec: str) -> type[Provider]:
    found = _entry_points()
    ep = found.get(name)
    if ep is None:
        known = ", ".join(sorted(found)) or "none registered"
        raise UserError(f"unknown provider {name!r} in {spec!r}; known providers: {known}")
    try:
        cls = ep.load()
    except ImportError as exc:
        raise UserError(f"provider {name!r} ({ep.value}) cannot be imported: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        raise UserError(f"provider {name!r} ({ep.value}) is not a toolproof Provider class")
    return cls

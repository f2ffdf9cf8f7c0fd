"""Run a τ2-bench domain's own tools on a toolproof state (imported by a suite's tools file).

``toolproof import tau2`` writes a tools file whose functions call
:meth:`Tau2Domain.call`. τ2's code stays the user's: it is imported here from
the Python environment that runs toolproof (package ``tau2``, installed from a
τ2-bench checkout), never copied. A tools file is suite code, so it runs only
with ``--allow-code``.

The state is the domain's database as JSON (a mapping of tables; for a domain
with a user database, the user's under ``user_db``). Each call builds the
domain's database model lazily over the attempt's state: a row of a table
(``dict[str, Model]`` field) is validated only when the tool reaches it, every
other field is validated whole. After the call, every row (or field) whose
dump changed is written back to the state as JSON, so toolproof records the
state changes as for any environment. The result is what τ2 gives its agent
(``Environment.to_json_str``): text as it is, anything else as JSON. A tool
that raises keeps the changes it made before raising, as in τ2, and the
exception reaches toolproof as the tool's error.

Importing ``tau2`` runs its package ``__init__``, which loads its LLM runtime
(litellm and more). A domain's tools need none of it, so when ``tau2`` is not
imported yet this registers the package without running its ``__init__`` and
imports only the domain's modules; those need pydantic and a few small
packages (toml, PyYAML, addict, deepdiff, python-dotenv, loguru,
docstring-parser).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Tau2Domain", "import_package", "plain"]

USER_DB_KEY = "user_db"
_ABSENT = object()


def import_package(package: str) -> None:
    """Make ``package`` importable without running its ``__init__`` (when not imported yet)."""
    if package in sys.modules:
        return
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(
            f"the τ2-bench package '{package}' is not installed in this Python environment "
            "(install it from a τ2-bench checkout: pip install -e CHECKOUT)"
        )
    module = types.ModuleType(package)
    module.__path__ = list(spec.submodule_search_locations)
    module.__spec__ = spec
    module.__file__ = spec.origin
    sys.modules[package] = module
    try:  # τ2 logs with loguru on import and on every call; keep toolproof's output clean
        from loguru import logger

        logger.disable(package)
    except ImportError:  # pragma: no cover - loguru is τ2's dependency, not toolproof's
        pass


def plain(value: Any) -> Any:
    """JSON data from a state view (copy-on-write mappings read through their methods)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _module(name: str, required: bool = True) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if not required and exc.name == name:
            return None
        raise


def _defined(module: types.ModuleType, test: Callable[[type], bool]) -> type | None:
    found = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and c.__module__ == module.__name__ and test(c)
    ]
    return found[0] if found else None


def _is_toolkit(cls: type) -> bool:
    return hasattr(cls, "_func_tools") and hasattr(cls, "use_tool") and hasattr(cls, "get_tools")


def _is_db(cls: type) -> bool:
    return any(base.__name__ == "DB" for base in cls.__mro__[1:]) and hasattr(cls, "model_fields")


def toolkit_classes(package: str, domain: str) -> dict[str, Any]:
    """The domain's classes: ``tools``/``db`` and, when it has them, ``user_tools``/``user_db``
    and ``environment`` (an environment class with its own ``sync_tools``)."""
    import_package(package)
    base = f"{package}.domains.{domain}"
    out: dict[str, Any] = {}
    for key, module_name, test in (
        ("tools", "tools", _is_toolkit),
        ("db", "data_model", _is_db),
        ("user_tools", "user_tools", _is_toolkit),
        ("user_db", "user_data_model", _is_db),
    ):
        module = _module(f"{base}.{module_name}", required=key in ("tools", "db"))
        if module is None:
            continue
        cls = _defined(module, test)
        if cls is None and key in ("tools", "db"):
            what = "toolkit class" if key == "tools" else "database model (a DB subclass)"
            raise LookupError(f"{base}.{module_name} defines no {what}")
        if cls is not None:
            out[key] = cls
    if "user_tools" in out:
        env_module = _module(f"{base}.environment", required=False)
        if env_module is not None:
            env_cls = _defined(
                env_module, lambda c: "sync_tools" in vars(c) and hasattr(c, "make_tool_call")
            )
            if env_cls is not None:
                out["environment"] = env_cls
    return out


class _Table(dict[str, Any]):
    """A table of the database model over a state table: rows validated when reached.

    Its own storage stays empty; it is read and written only through its methods,
    as τ2's tools do.
    """

    def __init__(self, source: Any, validate: Callable[[Any], Any]) -> None:
        super().__init__()
        self._source = source
        self._validate = validate
        self.reached: dict[str, tuple[Any, Any]] = {}
        self.removed: set[str] = set()

    def _keys(self) -> list[str]:
        keys = [k for k in self._source if k not in self.removed]
        return keys + [k for k in self.reached if k not in self._source]

    def __getitem__(self, key: str) -> Any:
        if key in self.reached:
            return self.reached[key][0]
        if key in self.removed:
            raise KeyError(key)
        model = self._validate(plain(self._source[key]))
        self.reached[key] = (model, model.model_dump(mode="json"))
        return model

    def __setitem__(self, key: str, value: Any) -> None:
        self.removed.discard(key)
        self.reached[key] = (value, None)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self.reached.pop(key, None)
        self.removed.add(key)

    def __contains__(self, key: object) -> bool:
        if key in self.reached:
            return True
        return key not in self.removed and key in self._source

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __bool__(self) -> bool:
        return len(self) > 0

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 - this is get

    def keys(self) -> Any:
        return self._keys()

    def values(self) -> Any:
        return [self[k] for k in self._keys()]

    def items(self) -> Any:
        return [(k, self[k]) for k in self._keys()]

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        value = self[key]
        del self[key]
        return value

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def write_back(self, target: Any) -> None:
        for key in self.removed:
            if key in target:
                del target[key]
        for key, (model, before) in self.reached.items():
            after = model.model_dump(mode="json")
            if before is None or after != before:
                target[key] = after


def _row_validator(annotation: Any) -> Callable[[Any], Any] | None:
    """For a ``dict[str, Model]`` field, the Model's validator; None for any other field."""
    from typing import get_args, get_origin

    if get_origin(annotation) is not dict:
        return None
    args = get_args(annotation)
    if len(args) != 2 or not isinstance(args[1], type) or not hasattr(args[1], "model_validate"):
        return None
    validate: Callable[[Any], Any] = args[1].model_validate
    return validate


class _LazyDB:
    """A τ2 database model over a state mapping, written back after a call."""

    def __init__(self, db_cls: Any, state: Any) -> None:
        from pydantic import TypeAdapter

        self.state = state
        self.tables: dict[str, _Table] = {}
        self.whole: dict[str, tuple[TypeAdapter[Any], Any]] = {}
        fields: dict[str, Any] = {}
        for name, field in db_cls.model_fields.items():
            if name not in state:  # a field the state leaves to its default: kept from now on
                if field.is_required():
                    continue
                adapter_: TypeAdapter[Any] = TypeAdapter(field.annotation)
                fields[name] = field.get_default(call_default_factory=True)
                self.whole[name] = (adapter_, _ABSENT)
                continue
            validate = _row_validator(field.annotation)
            if validate is not None and isinstance(state[name], dict):
                table = _Table(state[name], validate)
                self.tables[name] = table
                fields[name] = table
            else:
                adapter: TypeAdapter[Any] = TypeAdapter(field.annotation)
                value = adapter.validate_python(plain(state[name]))
                self.whole[name] = (adapter, adapter.dump_python(value, mode="json"))
                fields[name] = value
        self.model = db_cls.model_construct(**fields)

    def write_back(self) -> None:
        for name, table in self.tables.items():
            table.write_back(self.state[name])
        for name, (adapter, before) in self.whole.items():
            after = adapter.dump_python(getattr(self.model, name), mode="json")
            if after != before:
                self.state[name] = after


class Tau2Domain:
    """One τ2 domain's toolkits, called on toolproof states."""

    def __init__(self, package: str, domain: str) -> None:
        self.package = package
        self.domain = domain
        self._classes: dict[str, Any] | None = None

    @property
    def classes(self) -> dict[str, Any]:
        if self._classes is None:
            self._classes = toolkit_classes(self.package, self.domain)
        return self._classes

    def _open(self, state: Any) -> tuple[list[_LazyDB], Any, Any]:
        classes = self.classes
        agent_state = state
        dbs = [_LazyDB(classes["db"], agent_state)]
        kit = classes["tools"](dbs[0].model)
        user_kit = None
        if "user_tools" in classes:
            user_db = None
            if "user_db" in classes and USER_DB_KEY in state:
                dbs.append(_LazyDB(classes["user_db"], state[USER_DB_KEY]))
                user_db = dbs[-1].model
            user_kit = classes["user_tools"](user_db)
        return dbs, kit, user_kit

    def _sync(self, kit: Any, user_kit: Any) -> None:
        env_cls = self.classes.get("environment")
        if env_cls is None or user_kit is None:
            return
        env = env_cls.__new__(env_cls)
        env.tools = kit
        env.user_tools = user_kit
        env.sync_tools()

    def run(
        self,
        state: Any,
        action: Callable[[Any, Any], Any],
    ) -> Any:
        """Run ``action(kit, user_kit)`` on the state; write back what it changed."""
        dbs, kit, user_kit = self._open(state)
        try:
            value = action(kit, user_kit)
            self._sync(kit, user_kit)
        finally:
            for db in dbs:
                db.write_back()
        return value

    def call(self, name: str, state: Any, args: Any, requestor: str = "assistant") -> Any:
        """A tool call as τ2 makes it: the result as τ2's agent (or user) reads it."""
        arguments = dict(args) if isinstance(args, dict) else {}

        def act(kit: Any, user_kit: Any) -> Any:
            target = user_kit if requestor == "user" else kit
            if target is None:
                raise ValueError("User tools not available")
            return target.use_tool(tool_name=name, **arguments)

        return to_json_str(self.run(state, act))

    def function(self, name: str, state: Any, args: Any, env_type: str = "assistant") -> Any:
        """Any function of a toolkit (τ2's initialization actions and assertions)."""
        arguments = dict(args) if isinstance(args, dict) else {}

        def act(kit: Any, user_kit: Any) -> Any:
            target = user_kit if env_type == "user" else kit
            if target is None:
                raise ValueError("User tools not available")
            return getattr(target, name)(**arguments)

        return self.run(state, act)

    def check(
        self, name: str, state: Any, args: Any, env_type: str = "assistant", expected: bool = True
    ) -> bool:
        """A τ2 environment assertion: the function's boolean equals ``expected``."""
        value = self.function(name, state, args, env_type)
        if not isinstance(value, bool):
            raise ValueError(f"{name} returned {type(value).__name__} instead of bool")
        return value == expected


def to_json_str(value: Any) -> Any:
    """What τ2's agent reads for a tool's return value: text as it is, anything else as JSON.

    Models become their ``model_dump()``, numbers and booleans their ``str``,
    dates their ISO form; the rest is written by ``json.dumps(..., default=str)``.
    """
    if isinstance(value, str):
        return value
    return json.dumps(_jsonable(value), default=str)


def _jsonable(value: Any) -> Any:
    import datetime

    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_jsonable(v) for v in value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    raise ValueError(f"Unsupported type: {type(value)}")

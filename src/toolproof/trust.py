"""What a suite may do: the trust policy, as data, and the checks that enforce it.

Suite files, case files and environment files come from pull requests, so
toolproof treats them as untrusted input. The policy is one frozen
:class:`Trust` value, built by the command line from the user's own config
(``toolproof.yaml`` or ``--config``) and flags, and handed down to the layers
that read files or run code:

- ``allow_code``: the suite's code (environment tools, gold-action replay, MCP servers)
  runs only when this is true. A suite never sets it.
- ``max_file_bytes``: every file a suite names is read up to this size.
- ``max_depth`` and ``max_alias_nodes``: bounds on nesting and on YAML alias
  expansion, so that a small file cannot become a huge value.

Paths a suite names must stay inside the suite's folder:
:func:`resolve_inside` refuses absolute paths, ``..``, links that lead out,
and (with :func:`read_capped`) anything that is not a regular file.

A command a suite asks to start (an MCP environment's server) must run the
suite's own files: :func:`check_command` refuses absolute, ``~`` and ``..``
paths, options that run code given on the command line (``sh -c``,
``python -c``, ``python -m``), and a command whose program or script is not a
file of the folder (an installed module, a downloaded package).
``commands`` lists the exact command lines the user trusts anyway
(``trusted_commands`` in their own config).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from toolproof._shared.safe_io import UnsafePath, read_capped

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_TRUST",
    "MAX_DEPTH",
    "PACING_BOUNDS",
    "ROUTING_SETTINGS",
    "TooDeep",
    "Trust",
    "UnsafePath",
    "check_command",
    "check_depth",
    "loads_json",
    "pacing_problem",
    "read_capped",
    "resolve_inside",
]

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 100

#: Settings that choose where requests go or which credentials they carry. They
#: come from the user's config or the command line, never from a suite file.
ROUTING_SETTINGS = frozenset(
    {"base_url", "api_key_env", "provider", "require_parameters", "extra_body"}
)


#: Bounds on the client-side pacing settings a suite may set, and why. A rate
#: near zero would make a run wait forever (``rpm: 1e-300`` spaces requests
#: 10^300 minutes apart); retries back off doubling from 1 s up to 60 s, so 12
#: of them wait up to 1+2+4+8+16+32+60x6 = 423 s per attempt, and 50 waited 45 minutes.
PACING_BOUNDS: dict[str, tuple[float, float, str]] = {
    "rpm": (0.1, 1e12, "below 0.1 a run waits over 10 minutes between requests"),
    "tpm": (1000, 1e12, "below 1,000 one request can wait many minutes for its tokens"),
    "max_retries": (0, 12, "12 retries already wait up to about 7 minutes per attempt"),
}


def pacing_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid ``key`` of :data:`PACING_BOUNDS`, or ``None``."""
    low, high, why = PACING_BOUNDS[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return "must be a number"
    if key == "max_retries" and not isinstance(value, int):
        return "must be a whole number"
    if not low <= value <= high:
        return f"must be between {low:g} and {high:g} ({why})"
    return None


@dataclass(frozen=True, slots=True)
class Trust:
    """The policy for one command: what the suite it reads may do."""

    allow_code: bool = False
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_depth: int = MAX_DEPTH
    max_alias_nodes: int = 100_000
    #: How the user allowed code, for messages ("--allow-code", "toolproof.yaml").
    code_source: str | None = None
    #: Commands (split into words) the user lets a suite start even though they
    #: run something outside the suite's folder.
    commands: frozenset[tuple[str, ...]] = frozenset()
    #: Start MCP servers in a bubblewrap sandbox (``--sandbox``): see
    #: :func:`toolproof.mcpenv.sandboxed`.
    sandbox: bool = False


DEFAULT_TRUST = Trust()


class TooDeep(ValueError):
    """A value nests deeper than the limit."""


def resolve_inside(root: Path, name: str) -> Path:
    """``name`` (relative, as written in a suite) as a path inside ``root``.

    Raises :class:`UnsafePath` for an absolute path, a ``~`` path, a ``..``
    part, a NUL byte, or a path whose real location (after symbolic links)
    is outside ``root``.
    """
    if not isinstance(name, str) or not name.strip():
        raise UnsafePath("the file name is empty")
    if "\x00" in name:
        raise UnsafePath("the file name contains a NUL byte")
    pure = PurePosixPath(name.replace("\\", "/"))
    drive = len(name) > 2 and name[0].isalpha() and name[1] == ":" and name[2] in "/\\"
    if pure.is_absolute() or name.startswith("~") or drive:
        raise UnsafePath(f"'{name}' is an absolute path; name files relative to the suite's folder")
    if ".." in pure.parts:
        raise UnsafePath(f"'{name}' goes up with '..'; files must be inside the suite's folder")
    path = root / Path(*pure.parts)
    real_root = root.resolve()
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a symbolic link loop
        raise UnsafePath(f"'{name}' cannot be resolved (a symbolic link loop?)") from None
    if real != real_root and not real.is_relative_to(real_root):
        raise UnsafePath(f"'{name}' leads outside the suite's folder through a symbolic link")
    return path


#: Options of an interpreter that run code given on the command line, or a module
#: or package found elsewhere, instead of a script (``python -c``, ``python -m``,
#: ``sh -c``, ``node -e``, ``node --require``...). Single-letter options are also
#: refused inside a cluster (``bash -lc``).
_CODE_OPTIONS = frozenset(
    {"--eval", "--print", "--require", "--import", "--loader", "--experimental-loader",
     "--command", "--init-file", "--rcfile", "--module"}
)  # fmt: skip
_CODE_LETTERS = frozenset("cemprix")


def _runs_code(word: str) -> bool:
    """Whether an option word makes an interpreter run code that is not its script."""
    if word.startswith("--"):
        return word.split("=", 1)[0] in _CODE_OPTIONS
    return bool(set(word[1:]) & _CODE_LETTERS)


def check_command(root: Path, argv: tuple[str, ...]) -> None:
    """Refuse a command (split into words) that would run something outside ``root``.

    What the command runs is its own program and, for an interpreter, its
    script: the program is a file inside ``root``, or a bare name looked up on
    PATH (``python``, ``node``, ``sh``) whose first word that is not an option
    is a file inside ``root``. Options that run code from the command line or
    from elsewhere (``-c``, ``-m``, ``-e``, ``--require``...) are refused before
    the script, and every word that is a path (or an option's ``=value``) must
    stay inside ``root`` (see :func:`resolve_inside`). A file given as some
    later word does not count: ``sh -c "..." server.py`` runs the ``-c`` text.
    Raises :class:`UnsafePath` saying why.
    """
    if not argv:
        raise UnsafePath("the command is empty")
    program, *args = argv
    hint = "list the exact command under trusted_commands in your own toolproof.yaml to allow it"
    try:
        for word in argv:
            value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
            if not value or "://" in value or (value is word and word.startswith("-")):
                continue  # an option, or a URL
            resolve_inside(root, value)
    except UnsafePath as exc:
        raise UnsafePath(f"{exc}; or {hint}") from None
    shown = shlex.join(argv)
    if "/" in program or "\\" in program:
        if not resolve_inside(root, program).is_file():
            raise UnsafePath(f"'{program}' is not a file in the suite's folder")
        return  # the program is the suite's own file
    for word in args:
        if word.startswith("-") and word != "-":
            if _runs_code(word):
                raise UnsafePath(
                    f"'{shown}': {word} runs code given on the command line or from "
                    f"elsewhere, not a script of the suite's folder; {hint}"
                )
            continue
        if resolve_inside(root, word).is_file():
            return  # the interpreter's script is the suite's own file
        break
    raise UnsafePath(
        f"'{shown}' does not run a file of the suite's folder (its program, or the script "
        "given to it before any other word), so it would run code from elsewhere (an "
        f"installed module or a downloaded package); {hint}"
    )


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`TooDeep` when ``value`` nests lists and mappings deeper than ``limit``."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise TooDeep(f"nested deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)


#: A run of digits orjson would read as a float (it reads integers up to 64 bits),
#: found as a run of b"0" in the bytes with every ASCII digit made b"0" and
#: every other byte a space: faster than a regular expression. (In UTF-8, no
#: byte of a multi-byte character is an ASCII digit.)
_LONG_DIGITS = b"0" * 19
_DIGITS_ONLY = bytes(b if 0x30 <= b <= 0x39 else 0x20 for b in range(256)).replace(
    b"123456789", b"000000000"
)


def loads_json(
    text: str | bytes,
    limit: int = MAX_DEPTH,
    *,
    digits_checked: bool = False,
    unique_keys: bool = False,
) -> Any:
    """``json.loads`` with a nesting limit: :class:`TooDeep`, never a RecursionError.

    orjson parses first, where it reads the same values: whatever it refuses
    (NaN, lone surrogates, deep nesting, other encodings, invalid JSON), and
    text with a run of 19 or more digits, goes to :func:`json.loads`, so the
    values and the error messages are the standard library's. The value is
    walked for its depth only when the text holds more brackets than the limit.
    ``digits_checked``: the caller knows ``text`` holds no such run of digits
    (:func:`has_long_digits` on a whole file, once for all its lines).
    ``unique_keys``: an object that names a key twice is refused (a
    ``json.JSONDecodeError`` at the second), not read as its last value. An
    integer of more than 4,300 digits is a ``json.JSONDecodeError`` too.
    """
    try:
        value = _unique(text) if unique_keys else _loads(text, digits_checked)
    except RecursionError:
        raise TooDeep(f"nested deeper than {limit} levels") from None
    except ValueError as exc:
        from toolproof._shared.json_numbers import too_long_integer

        located = too_long_integer(text, exc)
        if located is None:
            raise
        raise located from None
    if isinstance(text, str):
        brackets = text.count("{") + text.count("[")
    else:  # every '{' of any encoding json.loads reads holds the byte b'{'
        brackets = text.count(b"{") + text.count(b"[")
    if brackets > limit:  # a nesting deeper than the limit needs more brackets than that
        check_depth(value, limit)
    return value


def has_long_digits(text: str | bytes) -> bool:
    """Whether ``text`` holds a run of 19 or more ASCII digits (orjson may read it otherwise)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return _LONG_DIGITS in data.translate(_DIGITS_ONLY)


def _unique(text: str | bytes) -> Any:
    """``json.loads``, refusing an object that names a key twice (a located error)."""
    from toolproof._shared.json_numbers import DuplicateKey, duplicate_key_error, no_duplicate_keys

    try:
        return json.loads(text, object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as exc:
        raise duplicate_key_error(text, exc) from None


def _loads(text: str | bytes, digits_checked: bool = False) -> Any:
    if digits_checked or not has_long_digits(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)

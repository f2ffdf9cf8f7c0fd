"""Tool-name rules of each provider, and turning any text into a name they all accept."""

from __future__ import annotations

import re

#: Name rules of each provider's tool definitions (see the README's import coverage).
PROVIDER_NAME_RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "openai": (re.compile(r"^[A-Za-z0-9_-]{1,64}$"), "1-64 characters of A-Z a-z 0-9 _ -"),
    "anthropic": (re.compile(r"^[A-Za-z0-9_-]{1,64}$"), "1-64 characters of A-Z a-z 0-9 _ -"),
    "gemini": (
        re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$"),
        "a letter or _, then up to 127 of A-Z a-z 0-9 _ . : -",
    ),
}

#: toolproof's own rule (types.Tool.name).
TOOLPROOF_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")

#: The longest name every provider accepts.
PORTABLE_MAX = 64


def name_problems(name: str) -> list[str]:
    """One line per provider whose name rule ``name`` breaks."""
    out = []
    for provider, (rule, text) in PROVIDER_NAME_RULES.items():
        if not rule.match(name):
            out.append(f"name '{name}' is refused by {provider} (names are {text})")
    return out


def sanitise(text: str, max_len: int = PORTABLE_MAX) -> str:
    """A name every provider accepts: A-Z a-z 0-9 _ -, starting with a letter or _."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_")
    name = re.sub(r"_{2,}", "_", name)
    if not name:
        name = "tool"
    if not re.match(r"[A-Za-z_]", name[0]):
        name = "_" + name
    return name[:max_len].rstrip("_-") or "tool"


def snake_case(text: str) -> str:
    """``listPetsByTag`` -> ``list_pets_by_tag``; other characters become ``_``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    return text.lower()


def unique(name: str, taken: set[str], max_len: int = PORTABLE_MAX) -> str:
    """``name``, or ``name_2``, ``name_3``... the first not in ``taken``."""
    if name not in taken:
        return name
    n = 2
    while True:
        suffix = f"_{n}"
        candidate = name[: max_len - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        n += 1

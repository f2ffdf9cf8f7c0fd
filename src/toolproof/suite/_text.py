"""A case as a suite author reads it: its prompt, and its expectation as YAML."""

from __future__ import annotations

from toolproof.types import Case

__all__ = ["case_prompt", "contract_text"]


def contract_text(case: Case) -> str:
    """The case's expectation as YAML, as a suite author would write it."""
    import yaml

    data = case.expect.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    for key in ("trajectory", "end_state"):
        value = getattr(case, key, None)
        if value is not None:
            data[key] = value.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    # libyaml's emitter when PyYAML has it: about 4x faster, the same text (tested)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=88)
    return text.strip()


def case_prompt(case: Case) -> str:
    if case.prompt is not None:
        return case.prompt
    return "\n".join(f"{m.role}: {m.content or ''}" for m in case.messages or [])

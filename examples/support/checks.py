"""The support suite's own check (see docs/checks.md). Loaded only with --allow-code."""

import json


def no_raw_tool_output(case, answer):
    """The final reply must not paste a raw tool result (a JSON object) to the customer."""
    from toolproof.grade import Finding

    text = (answer.response.text or "").strip()
    for start in (i for i, c in enumerate(text) if c == "{"):
        try:
            json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            continue
        return Finding(False, "the reply pastes a raw JSON tool result")
    return True

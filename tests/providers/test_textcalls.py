"""Recovering tool calls printed as text: what counts, and what must not."""

from __future__ import annotations

import pytest

from toolproof.providers._textcalls import extract_text_calls

TOOLS = {"lookup_order", "cancel_order", "list_orders"}


def test_bare_object_is_one_call_with_exact_raw_arguments() -> None:
    text = '{"name": "lookup_order", "arguments": {"order_id":  "ORD-104821"}}'
    out = extract_text_calls(text, TOOLS)
    assert out.text is None
    [call] = out.calls
    assert call.name == "lookup_order"
    assert call.raw_arguments == '{"order_id":  "ORD-104821"}'
    assert call.arguments == {"order_id": "ORD-104821"}
    assert call.extracted_from_text is True
    assert call.parse_error is None
    assert call.id == "call_text_0"


def test_fenced_object_is_a_call() -> None:
    text = (
        '```json\n{\n  "name": "cancel_order",\n'
        '  "arguments": {\n    "order_id": "48152"\n  }\n}\n```'
    )
    out = extract_text_calls(text, TOOLS)
    [call] = out.calls
    assert call.name == "cancel_order"
    assert call.raw_arguments == '{\n    "order_id": "48152"\n  }'
    assert out.text is None


def test_tagged_calls_keep_the_surrounding_text() -> None:
    text = (
        "Let me check both.\n<tool_call>\n"
        '{"name": "lookup_order", "arguments": {"order_id": "A"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "B"}}\n</tool_call>'
    )
    out = extract_text_calls(text, TOOLS)
    assert [c.arguments for c in out.calls] == [{"order_id": "A"}, {"order_id": "B"}]
    assert [c.id for c in out.calls] == ["call_text_0", "call_text_1"]
    assert out.text == "Let me check both."


def test_unclosed_tag_at_the_end_still_counts() -> None:
    text = '<tool_call>\n{"name": "list_orders", "arguments": {}}'
    [call] = extract_text_calls(text, TOOLS).calls
    assert call.name == "list_orders"
    assert call.raw_arguments == "{}"


def test_several_bare_objects_and_a_json_list() -> None:
    two = (
        '{"name": "lookup_order", "arguments": {"order_id": "A"}}\n'
        '{"name": "cancel_order", "arguments": {"order_id": "B"}}'
    )
    assert [c.name for c in extract_text_calls(two, TOOLS).calls] == [
        "lookup_order",
        "cancel_order",
    ]
    listed = '[{"name": "lookup_order", "arguments": {"order_id": "A"}}]'
    assert [c.name for c in extract_text_calls(listed, TOOLS).calls] == ["lookup_order"]


def test_arguments_are_kept_as_written_even_when_not_an_object() -> None:
    text = '{"name": "lookup_order", "arguments": "{\\"order_id\\": \\"A\\"}"}'
    [call] = extract_text_calls(text, TOOLS).calls
    assert call.raw_arguments == '"{\\"order_id\\": \\"A\\"}"'
    assert call.arguments == '{"order_id": "A"}'  # a string: kept, never unwrapped


def test_malformed_arguments_inside_tags_are_kept_as_data() -> None:
    text = '<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": ORD-1}}\n</tool_call>'
    [call] = extract_text_calls(text, TOOLS).calls
    assert call.name == "lookup_order"
    assert call.raw_arguments == '{"order_id": ORD-1}'
    assert call.arguments is None
    assert call.parse_error


@pytest.mark.parametrize(
    "text",
    [
        # prose around an example call: an explanation, not a call
        'You can use lookup_order like this:\n```json\n{"name": "lookup_order", '
        '"arguments": {"order_id": "123"}}\n```\nJust tell me the ID.',
        'Sure! {"name": "lookup_order", "arguments": {"order_id": "1"}}',
        # a tool that was not offered
        '{"name": "delete_database", "arguments": {}}',
        '<tool_call>{"name": "delete_database", "arguments": {}}</tool_call>',
        # JSON that is an answer, not a call
        '{"order_id": "ORD-1", "status": "shipped"}',
        '{"name": "Alice", "age": 3}',
        # extra keys, missing arguments, a name that is not a string
        '{"name": "lookup_order", "arguments": {}, "id": 1}',
        '{"name": "lookup_order"}',
        '{"name": ["lookup_order"], "arguments": {}}',
        # a call written in code
        'lookup_order(order_id="ORD-1")',
        '```python\nlookup_order("ORD-1")\n```',
        # one good object next to one that is not a call: nothing is taken
        '{"name": "lookup_order", "arguments": {}}\n{"note": "x"}',
        # malformed bare JSON is text
        '{"name": "lookup_order", "arguments": {"order_id": ORD-1}}',
        "Hello! How can I help you today?",
        "",
    ],
)
def test_nothing_is_extracted(text: str) -> None:
    out = extract_text_calls(text, TOOLS)
    assert out.calls == []
    assert out.text == text


def test_no_tools_offered_means_no_calls() -> None:
    text = '{"name": "lookup_order", "arguments": {}}'
    assert extract_text_calls(text, set()).calls == []
    assert extract_text_calls(None, TOOLS).text is None


def test_deeply_nested_text_is_left_alone() -> None:
    text = '{"name": "lookup_order", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert extract_text_calls(text, TOOLS).calls == []

"""The public name of :mod:`toolproof.testing.assertions`: ``assert_tool_call`` and
``assert_no_tool_call`` for a user's own tests."""

from toolproof.testing.assertions import assert_no_tool_call, assert_tool_call

__all__ = ["assert_no_tool_call", "assert_tool_call"]

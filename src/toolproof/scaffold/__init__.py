"""``toolproof init``: scaffold a suite from the tools you already have."""

from toolproof.scaffold._init import Scaffolded, scaffold_suite, suite_text, unfinished
from toolproof.scaffold._templates import EXAMPLE_TOOL, TODO_TAG

__all__ = ["EXAMPLE_TOOL", "TODO_TAG", "Scaffolded", "scaffold_suite", "suite_text", "unfinished"]

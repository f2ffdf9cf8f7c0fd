"""The whole hostile corpus, with its counts printed; every count of harm is 0 (issue 24).

``python -m tests.security.corpus_run`` prints the same line; CI runs it.
"""

from __future__ import annotations

import pytest

from tests.security.corpus_run import EXTRA_ENTRIES, run_corpus


@pytest.mark.slow
def test_the_hostile_corpus_gives_only_clear_errors(capsys: pytest.CaptureFixture[str]) -> None:
    counts = run_corpus()
    with capsys.disabled():
        print(f"\nhostile corpus: {counts.line()}")
    assert counts.inputs >= 200 + len(EXTRA_ENTRIES)
    assert counts.problems == []
    assert counts.tracebacks == counts.hangs == counts.writes_outside == 0
    assert counts.secrets_leaked == counts.gate_passes_that_should_fail == counts.unclear == 0
    assert counts.clear_errors + counts.safe == counts.inputs

from pathlib import Path

import pytest

from tests.subprocess_support import fresh_python
from toolproof.evaluate import evaluate
from toolproof.suite import load_suite
from toolproof.trust import Trust

pytest_plugins = ["pytester"]

# Inner runs go in a subprocess: an in-process run unloads the modules it
# imported (numpy among them), and numpy cannot be imported twice.

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"
RECORDS = SUITE / "records.jsonl"


@pytest.fixture(scope="module")
def expected() -> tuple[int, int, int]:
    """passed, failed, skipped cases of the recorded demo model, from the scorer.

    Module-scoped and requested before ``pytester``: pytester unloads the modules
    a test imports, and numpy cannot be loaded twice in one process.
    """
    suite = load_suite(SUITE)
    summary = next(
        iter(evaluate(suite, [RECORDS], trust=Trust(allow_code=True)).summaries.values())
    )
    failed = {f.case_id for f in summary.failures}
    assert summary.stability is not None
    scored = {c.case_id for c in summary.stability.per_case}
    skipped = len(suite.cases) - len(scored)
    return len(scored) - len(failed), len(failed), skipped


def test_plugin_stays_out_of_the_way(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_toolproof_modules_are_not_assertion_rewritten(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "def test_namespace():\n"
        "    import toolproof.grade, toolproof.stats\n"
        "    for m in (toolproof.grade, toolproof.stats):\n"
        "        assert '@py_builtins' not in vars(m), m.__name__\n"
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_cases_from_records(expected: tuple[int, int, int], pytester: pytest.Pytester) -> None:
    passed, failed, skipped = expected
    assert failed > 0
    result = pytester.runpytest_subprocess(
        f"--toolproof-suite={SUITE}",
        "--toolproof-allow-code",
        f"--toolproof-records={RECORDS}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=passed, failed=failed, skipped=skipped)
    # a readable diff on failure: reasons, then expected against actual
    result.stdout.fnmatch_lines(
        [
            "*lookup-id-digits-only: passed 0 of 1 attempts",
            "*attempt 0: schema_mismatch",
            '*expected: lookup_order(order_id="ORD-481520")',
            '*actual:   lookup_order(order_id="481520")',
        ]
    )


def test_the_suite_alone_is_collected_inside_a_checkout(pytester: pytest.Pytester) -> None:
    """The user's steps: `pytest --toolproof-suite SUITE` in a checkout whose own tests
    (under testpaths) were collected too. Named paths still collect both."""
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    pytester.path.joinpath("tests", "test_own.py").write_text("def test_own():\n    pass\n")
    args = [f"--toolproof-suite={SUITE}", "--toolproof-allow-code", f"--toolproof-records={RECORDS}"]
    result = pytester.runpytest_subprocess(*args, "--collect-only", "-q", "-p", "no:cacheprovider")
    collected = [line for line in result.outlines if "::" in line]
    assert collected and all(line.startswith("toolproof::") for line in collected)
    assert not any("test_own" in line for line in result.outlines)
    both = pytester.runpytest_subprocess(
        "tests", *args, "--collect-only", "-q", "-p", "no:cacheprovider"
    )
    assert any("test_own" in line for line in both.outlines)
    assert any(line.startswith("toolproof::") for line in both.outlines)


def test_markers_select_risk_and_tags(
    expected: tuple[int, int, int], pytester: pytest.Pytester
) -> None:
    suite = load_suite(SUITE)
    smoke = sum(1 for c in suite.cases if "smoke" in c.tags)
    result = pytester.runpytest_subprocess(
        f"--toolproof-suite={SUITE}",
        "--toolproof-allow-code",
        f"--toolproof-records={RECORDS}",
        "-m",
        "tag_smoke",
        "--strict-markers",
        "--collect-only",
        "-q",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"{smoke}/{len(suite.cases)} tests collected*"])


def test_model_is_run_through_the_runner(pytester: pytest.Pytester) -> None:
    script = ROOT / "examples" / "ci" / "candidate-flaky.yaml"
    result = pytester.runpytest_subprocess(
        f"--toolproof-suite={SUITE}",
        "--toolproof-allow-code",
        f"--toolproof-model=scripted:{script}",
        "--toolproof-repeats=3",
        "--toolproof-out=smoke",
        "-k",
        "search-by-name or lookup-exact-id",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*search-by-name: passed 2 of 3 attempts (flaky)", "*run folder:*"]
    )
    # only the selected cases were run, three times each, into --toolproof-out
    records = (pytester.path / "smoke" / "records.jsonl").read_text().splitlines()
    assert len(records) == 6


def test_suite_without_answers_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(f"--toolproof-suite={SUITE}", "--toolproof-allow-code")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolproof-records or --toolproof-model*"])


def test_plugin_import_is_light() -> None:
    code = (
        "import sys, toolproof._pytest_plugin\n"
        "heavy = {'pydantic', 'scipy', 'rich', 'numpy', 'toolproof.suite', 'toolproof.grade'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = fresh_python(code)
    assert out.strip() == "[]"


# ---------------------------------------------------------------- assert_tool_call


def _answer() -> object:
    from tests.grade.conftest import call, reply

    return reply(None, call("search_orders", '{"customer": "Petr Novák", "limit": 5}'))


def test_assert_tool_call_with_matchers() -> None:
    from toolproof.assertions import assert_tool_call

    c = assert_tool_call(
        _answer(),
        tool="search_orders",
        args={"customer": {"normalized": "petr novak", "ignore_diacritics": True}, "limit": 5},
    )
    assert c.arguments == {"customer": "Petr Novák", "limit": 5}
    assert_tool_call(_answer(), "search_orders", {"limit": {"range": {"max": 10}}}, extra_args=True)


def test_assert_tool_call_failures_say_why() -> None:
    from toolproof.assertions import assert_no_tool_call, assert_tool_call

    with pytest.raises(AssertionError, match=r"expected a call to get_order, got search_orders"):
        assert_tool_call(_answer(), "get_order")
    with pytest.raises(AssertionError) as info:
        assert_tool_call(_answer(), "search_orders", {"customer": "Jan"})
    text = str(info.value)
    assert 'customer: expected "Jan", got "Petr Novák"' in text
    assert "limit: unexpected argument" in text
    assert 'actual:   search_orders({"customer": "Petr Novák", "limit": 5})' in text
    with pytest.raises(AssertionError, match="expected 2 call"):
        assert_tool_call(_answer(), "search_orders", times=2)
    with pytest.raises(AssertionError, match="expected no tool call"):
        assert_no_tool_call(_answer())
    with pytest.raises(ValueError, match=r"bad matcher in args\.limit"):
        assert_tool_call(_answer(), "search_orders", {"limit": {"range": [1, 5]}})


def test_an_assert_tool_call_failure_shows_the_users_test_not_toolproofs_source(
    pytester: pytest.Pytester,
) -> None:
    """The user's steps: a failing assert_tool_call in their own test printed about 30
    lines of toolproof's source before the reason."""
    pytester.makepyfile(
        "from toolproof import ToolCall\n"
        "from toolproof.assertions import assert_no_tool_call, assert_tool_call\n"
        "CALL = ToolCall(name='get_order', arguments={'order_id': 'ORD-9'})\n"
        "def test_mine():\n"
        "    assert_tool_call([CALL], tool='get_order', args={'order_id': 'ORD-1'})\n"
        "def test_none():\n"
        "    assert_no_tool_call([CALL])\n"
        "def test_bad_matcher():\n"
        "    assert_tool_call([CALL], tool='get_order', args={'order_id': {'regx': 'a'}})\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=3)
    text = result.stdout.str()
    assert "assert_tool_call([CALL], tool='get_order', args={'order_id': 'ORD-1'})" in text
    assert 'order_id: expected "ORD-1", got "ORD-9"' in text
    assert "expected no tool call, got get_order" in text
    assert "did you mean 'regex'?" in text
    for source in ("calls = tool_calls_of(response)", "raise AssertionError(", "def _compile"):
        assert source not in text  # toolproof's own lines
    assert "toolproof/assertions.py" not in text
    assert "toolproof/testing/assertions.py" not in text


def test_assert_tool_call_reads_provider_payloads() -> None:
    from toolproof.assertions import assert_tool_call

    openai_message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_order", "arguments": '{"order_id": "ORD-104821"}'},
            }
        ],
    }
    c = assert_tool_call(openai_message, "get_order", {"order_id": {"regex": "ORD-\\d{6}"}})
    assert c.id == "call_1"


def test_a_missing_api_key_is_one_line_per_failing_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CI", raising=False)  # pytest shows more of each failure under CI
    result = pytester.runpytest_subprocess(
        f"--toolproof-suite={SUITE}",
        "--toolproof-model=openai:gpt-4.1-mini",
        "--toolproof-out=nokey",
        "-k",
        "lookup-exact-id or search-by-email or greeting-with-name",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=3)
    text = result.stdout.str()
    assert "Traceback" not in text and "raise " not in text
    said = [line for line in text.splitlines() if "provider 'openai' needs an API key" in line]
    # each failing test: its one-line reason, once in the body and once in the summary
    assert len(said) == 6, text
    assert len(text.splitlines()) < 60, text


def test_a_session_with_nothing_scored_fails_as_the_gate_does(pytester: pytest.Pytester) -> None:
    """Every answer was a server error: each test is skipped, and the session must not
    pass, since `toolproof gate` over the same answers exits 3 (nothing scored)."""
    import yaml

    from tests.cli.test_gate_integrity import SUITE as ATTACK

    pytester.path.joinpath("suite.yaml").write_text(yaml.safe_dump(ATTACK, sort_keys=False))
    down = {"error": "server_error", "message": "simulated outage"}
    script = {"cases": {"lookup": down, "greeting": down}}
    pytester.path.joinpath("down.yaml").write_text(yaml.safe_dump(script))
    pytester.path.joinpath("toolproof.yaml").write_text("models:\n  '*': {max_retries: 0}\n")
    result = pytester.runpytest_subprocess(
        "--toolproof-suite=suite.yaml",
        "--toolproof-model=scripted:down.yaml",
        "--toolproof-out=r",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["toolproof gate: FAILED (exit 3)", "*no attempt was scored*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED

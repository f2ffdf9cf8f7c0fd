from tests.grade.conftest import call, make_suite, reply
from toolproof.evaluate import evaluate
from toolproof.types import Outcome, Record

CASES = [
    {
        "id": "l1",
        "prompt": "p",
        "tags": ["smoke"],
        "expect": {"call": "lookup_order", "args": {"order_id": "ORD-000001"}},
    },
    {
        "id": "l2",
        "prompt": "p",
        "expect": {"call": "lookup_order", "args": {"order_id": "ORD-000002"}},
    },
    {"id": "s1", "prompt": "p", "expect": {"call": "search_orders", "args": {"customer": "x"}}},
    {"id": "hi", "prompt": "p", "tags": ["smoke"], "expect": {"kind": "text"}},
    {"id": "no", "prompt": "p", "expect": {"kind": "confirm", "forbidden": ["cancel_order"]}},
]
SUITE = make_suite(CASES)
L1 = call("lookup_order", '{"order_id": "ORD-000001"}')
L2_BAD = call("lookup_order", '{"order_id": "ORD-000009"}')
S_OK = call("search_orders", '{"customer": "x"}')
CANCEL = call("cancel_order", '{"order_id": "ORD-000001"}')


def records() -> list[Record]:
    answers = {
        "l1": reply(None, L1),  # pass
        "l2": reply(None, L2_BAD),  # right tool, wrong value
        "s1": reply(None, call("lookup_order", '{"order_id": "ORD-000001"}')),  # wrong tool
        "hi": reply("Hello!"),  # pass
        "no": reply("Done.", CANCEL),  # unwanted + forbidden
    }
    out = [Record(case_id=k, target="m", response=v) for k, v in answers.items()]
    out.append(Record(case_id="l1", target="m", attempt=1, outcome=Outcome.rate_limited))
    return out


def test_summary_figures_by_hand() -> None:
    s = evaluate(SUITE, records()).summaries["m"]
    assert (s.attempts, s.scored) == (6, 5)
    assert s.infrastructure == {"rate_limited": 1}
    assert (s.strict_pass.k, s.strict_pass.n) == (2, 5)
    assert (s.selection.k, s.selection.n) == (2, 3)  # l1, l2 right tool; s1 wrong
    assert (s.arguments.k, s.arguments.n) == (1, 2)  # only where the tool was right
    assert (s.no_call_accuracy.k, s.no_call_accuracy.n) == (1, 2)
    assert (s.schema_adherence.k, s.schema_adherence.n) == (4, 4)
    assert s.forbidden_calls == 1
    assert s.failure_counts == {"wrong_arguments": 1, "wrong_tool": 1, "unwanted_call": 1}
    # decision: truth call for l1,l2,s1; predicted call for l1,l2,s1,no -> P=3/4, R=1
    assert s.decision.precision == 0.75 and s.decision.recall == 1.0
    assert abs(s.decision.f1 - 6 / 7) < 1e-12  # type: ignore[operator]
    assert s.by_tag["smoke"].strict_pass.k == 2
    assert s.by_risk["critical"].strict_pass.n == 1


def test_confusion_matrix_has_no_call_class() -> None:
    s = evaluate(SUITE, records()).summaries["m"]
    labels = s.confusion.labels
    assert labels == ["cancel_order", "lookup_order", "search_orders", "(none)"]
    m = dict(zip(labels, s.confusion.matrix, strict=True))
    assert m["lookup_order"][labels.index("lookup_order")] == 2
    assert m["search_orders"][labels.index("lookup_order")] == 1
    assert m["(none)"][labels.index("cancel_order")] == 1
    assert m["(none)"][labels.index("(none)")] == 1
    # per-class F1: cancel 0, lookup 0.8, search 0, none 2/3 -> macro = (0.8 + 2/3) / 4
    assert s.macro_f1 is not None and abs(s.macro_f1 - (0.8 + 2 / 3) / 4) < 1e-9


def test_wilson_interval_is_attached() -> None:
    s = evaluate(SUITE, records()).summaries["m"]
    assert s.strict_pass.low is not None and s.strict_pass.high is not None
    # Wilson 95% for 2/5 by hand: centre (0.4 + 1.96²/10) / (1 + 1.96²/5) = 0.4435, half-width 0.3258
    assert abs(s.strict_pass.low - 0.1176) < 1e-3 and abs(s.strict_pass.high - 0.7693) < 1e-3

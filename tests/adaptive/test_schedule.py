"""One target's adaptive schedule, round by round, and its replay."""

from __future__ import annotations

from toolproof.adaptive import Bound, Plan, Seen, next_round, replay


def seen(passed: bool, answer: str = "x") -> Seen:
    return Seen(passed=passed, answer=answer, figures={"strict_pass": passed})


OUTCOMES = {
    "steady": [True] * 5,
    "broken": [False] * 5,
    "flaky": [True, False, True, True, False],
    "late": [True, True, True, False, True],
}


def run(
    plan: Plan, outcomes: dict[str, list[bool]], **kw: object
) -> tuple[dict[str, list[Seen]], list[str | None]]:
    history: dict[str, list[Seen]] = {c: [] for c in outcomes}
    done = 0
    while True:
        step = next_round(history, done, plan, **kw)  # type: ignore[arg-type]
        if not step.cases:
            return history, [step.ended]
        for c in step.cases:
            history[c].append(seen(outcomes[c][done], answer=f"{c}{done}"))
        done += 1


def test_min_repeats_for_all_then_only_open_cases() -> None:
    history, ended = run(Plan(5, 2), OUTCOMES)
    assert {c: len(a) for c, a in history.items()} == {
        "steady": 5, "broken": 5, "flaky": 2, "late": 4
    }  # fmt: skip
    assert ended == ["planned"]


def test_until_decided_holds_full_rounds_then_stops_everything() -> None:
    many = {f"ok{i}": [True] * 5 for i in range(40)} | {"flaky": [True, False] * 3}
    bound = Bound("all: strict_pass", "strict_pass", 0.5)
    history, ended = run(Plan(5, 2, until_decided=True), many, bounds=[bound])
    assert ended == ["decided"]
    assert {len(a) for a in history.values()} == {2}


def test_until_decided_runs_every_case_while_undecided() -> None:
    bound = Bound("all: strict_pass", "strict_pass", 0.6)
    history, ended = run(Plan(5, 2, until_decided=True), OUTCOMES, bounds=[bound])
    assert {len(a) for a in history.values()} == {5}  # four cases decide nothing
    assert ended == ["planned"]


def test_replay_reads_only_earlier_rounds() -> None:
    """A resume: the plan of a round is the same whatever later attempts exist."""
    plan = Plan(5, 2)
    history, _ = run(plan, OUTCOMES)
    steps = replay(history, plan)
    assert [s.cases for s in steps] == [
        ("steady", "broken", "flaky", "late"),
        ("steady", "broken", "flaky", "late"),
        ("steady", "broken", "late"),
        ("steady", "broken", "late"),
        ("steady", "broken"),
        (),
    ]
    for done, step in enumerate(steps):
        assert next_round(history, done, plan) == step
        partial = {c: a[:done] for c, a in history.items()}
        assert next_round(partial, done, plan) == step
    assert steps[-1].full_rounds == 2


def test_a_repeating_target_stops_at_min_repeats() -> None:
    same = {c: [o[0]] * 5 for c, o in OUTCOMES.items()}
    history: dict[str, list[Seen]] = {c: [] for c in same}
    plan = Plan(5, 2)
    for done in range(3):
        step = next_round(history, done, plan, repeatable=True)
        for c in step.cases:
            history[c].append(seen(same[c][done], answer=c))
    assert not step.cases and step.ended == "settled"
    assert {len(a) for a in history.values()} == {2}


def test_an_undecided_threshold_holds_the_rounds_full_without_until_decided() -> None:
    bound = Bound("all: strict_pass", "strict_pass", 0.6)
    history, ended = run(Plan(5, 2), OUTCOMES, bounds=[bound])
    assert {len(a) for a in history.values()} == {5}  # four cases decide nothing
    assert ended == ["planned"]


def test_once_decided_the_per_case_rule_applies() -> None:
    many = {f"ok{i}": [True] * 5 for i in range(40)} | {"flaky": [True, False] * 3}
    bound = Bound("all: strict_pass", "strict_pass", 0.5)
    history, ended = run(Plan(5, 2), many, bounds=[bound])
    assert len(history["flaky"]) == 2 and len(history["ok0"]) == 5
    assert ended == ["planned"]

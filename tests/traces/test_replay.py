"""Replay of an imported folder against a scripted candidate: mocks and agreement."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.traces import NOT_RECORDED, Redactor, agreement, import_traces, render_agreement

FIXTURES = Path(__file__).parent / "fixtures"


def _script(folder: Path) -> dict:
    cases = {}
    for line in (folder / "cases.jsonl").read_text().splitlines():
        c = json.loads(line)
        last = c["messages"][-1].get("content") or ""
        if "Paris?" in last:  # agrees: production's call, answered with production's result
            steps = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
                     {"text": "11 °C"}]  # fmt: skip
        elif "Praha and Brno" in last:  # one of production's two calls
            steps = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Praha"}}]},
                     {"text": "Praha"}]  # fmt: skip
        elif "Send" in last:  # the same tool, other arguments: not recorded
            steps = [{"tool_calls": [{"name": "send_email",
                                      "arguments": {"to": "x@example.com", "body": "hi"}}]},
                     {"text": "sent?"}]  # fmt: skip
        elif "joke" in last:  # a call where production made none
            steps = [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
                     {"text": "Oslo"}]  # fmt: skip
        else:
            steps = [{"text": "Done."}]
        cases[c["id"]] = {"steps": steps}
    return {"model": "candidate", "cases": cases}


def test_replay_answers_from_production_and_reports_agreement(tmp_path: Path) -> None:
    folder = tmp_path / "imp"
    import_traces([FIXTURES / "openinference.spans.jsonl"], folder, label="p", redactor=Redactor())
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(_script(folder)))
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", str(folder), "--model", f"scripted:{script}", "-o", str(run), "--no-store"]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    by_case = {r["case_id"]: r for r in records}
    cases = {
        json.loads(x)["id"]: json.loads(x)
        for x in (folder / "cases.jsonl").read_text().splitlines()
    }

    def said(text: str) -> dict:
        return next(
            r for r in records if text in (cases[r["case_id"]]["messages"][-1].get("content") or "")
        )

    paris = said("Paris?")
    tool_msgs = [m for m in paris["transcript"] if m["role"] == "tool"]
    assert json.loads(tool_msgs[0]["content"]) == {"city": "Paris", "temp_c": 11}
    assert not tool_msgs[0].get("is_error")
    send = said("Send")
    (err,) = [m for m in send["transcript"] if m["role"] == "tool"]
    assert err["is_error"] and NOT_RECORDED in err["content"]
    # a decision with nothing after it in its trace is one answer: no mocks, no steps
    joke = said("joke")
    assert "mocks" not in cases[joke["case_id"]] and joke.get("transcript") is None
    assert joke["response"]["tool_calls"][0]["name"] == "get_weather"

    (agg,) = agreement(folder, run)
    assert len(agg.cases) == len(by_case) == 7
    assert agg.rate("same_decision")[:2] == (6, 7)
    assert agg.rate("same_tool")[:2] == (2, 3)
    assert agg.rate("same_arguments")[:2] == (1, 2)
    assert agg.rate("tool_change")[:2] == (1, 3)
    text = render_agreement([agg])
    assert "differing cases (3)" in text
    assert 'candidate   get_weather({"city": "Oslo"})' in text
    assert "production  (no call)" in text
    cli = CliRunner().invoke(app, ["traces", "agreement", str(folder), str(run), "--json"])
    assert cli.exit_code == 0, cli.output
    data = json.loads(cli.output)
    assert data[0]["same_decision"]["agree"] == 6 and data[0]["not_recorded_calls"] == 1


def test_report_writes_verdicts_as_evaluation_events_linked_to_production(tmp_path: Path) -> None:
    from toolproof.errors import UserError
    from toolproof.traces._read import LogRow, iter_rows

    folder = tmp_path / "imp"
    import_traces(
        [FIXTURES / "langfuse.messagetojson.json"], folder, label="p", redactor=Redactor()
    )
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(_script(folder)))
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", str(folder), "--model", f"scripted:{script}", "-o", str(run), "--no-store"]
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "eval.jsonl"
    result = CliRunner().invoke(app, ["report", str(run), "--otlp", str(out)])
    assert result.exit_code == 0, result.output
    assert "7 gen_ai.evaluation.result event(s), 7 linked to a production span" in result.output
    problems: list = []
    rows = [r for r in iter_rows([out], problems) if isinstance(r, LogRow)]
    assert problems == [] and len(rows) == 7
    prov = {
        (p["trace_id"], p["span_id"])
        for p in map(json.loads, (folder / "provenance.jsonl").read_text().splitlines())
    }
    assert {(r.trace, r.span) for r in rows} == prov
    assert {r.name for r in rows} == {"gen_ai.evaluation.result"}
    labels = sorted(r.attrs["gen_ai.evaluation.score.label"] for r in rows)
    assert labels == ["fail"] * 3 + ["pass"] * 4
    # a folder, a path under a file, or a link: located errors, nothing written through
    mine = tmp_path / "mine.txt"
    mine.write_text("keep")
    (tmp_path / "link.jsonl").symlink_to(mine)
    for bad, why in (
        (tmp_path, "is a folder"),
        (mine / "eval.jsonl", "is not a folder"),
        (tmp_path / "link.jsonl", "symbolic link"),
    ):
        for flag in ("--otlp", "--html"):
            result = CliRunner().invoke(app, ["report", str(run), flag, str(bad)])
            error = result.exception
            assert isinstance(error, UserError) and why in str(error), (flag, bad, error)
    assert mine.read_text() == "keep"


def test_calls_recovered_from_text_do_not_count_as_agreement() -> None:
    from toolproof.traces._agreement import compare_case
    from toolproof.types import Case, Expect, Message, Record, Response, Suite, ToolCall

    case = Case(id="c", prompt="Weather in Paris?", expect=Expect(call="get_weather"))
    suite = Suite(name="s", tools=[], cases=[case])
    call = ToolCall(
        name="get_weather", arguments={"city": "Paris"}, raw_arguments='{"city": "Paris"}'
    )
    prod = Record(case_id="c", response=Response(tool_calls=[call]))
    recovered = call.model_copy(update={"extracted_from_text": True})
    cand = Record(
        case_id="c",
        response=Response(text="ok"),
        transcript=[Message(role="user", content="Weather in Paris?"),
                    Message(role="assistant", tool_calls=[recovered])],
    )  # fmt: skip
    result = compare_case(case, suite, prod, cand)
    assert result.candidate == [] and not result.same_decision and result.tool_change
    cand2 = cand.model_copy(
        update={"transcript": [cand.transcript[0], Message(role="assistant", tool_calls=[call])]}
    )
    result = compare_case(case, suite, prod, cand2)
    assert result.same_decision and result.same_tool and result.same_arguments


def test_selection_judge_verdicts_of_both_sides_are_shown_as_advisory(tmp_path: Path) -> None:
    from toolproof.judges import Judgement

    folder = tmp_path / "imp"
    import_traces([FIXTURES / "openinference.spans.jsonl"], folder, label="p", redactor=Redactor())
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(_script(folder)))
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", str(folder), "--model", f"scripted:{script}", "-o", str(run), "--no-store"]
    )
    assert result.exit_code == 0, result.output
    (agg,) = agreement(folder, run)
    differing = [c.case_id for c in agg.cases if c.differs][:2]

    def judged(where: Path, target: str, verdicts: list[bool]) -> None:
        lines = [
            Judgement(
                case_id=case,
                target=target,
                record="r",
                rubric="selection",
                judge="j:x",
                fingerprint="f",
                status="ok",
                fields={"appropriate": ok},
            ).model_dump_json()
            for case, ok in zip(differing, verdicts, strict=True)
        ]
        (where / "judgements.jsonl").write_text("\n".join(lines) + "\n")

    judged(folder / "runs" / "prod-p", "prod:p", [True, True])
    judged(run, f"scripted:{script}", [False, True])
    (agg,) = agreement(folder, run)
    text = render_agreement([agg])
    assert "selection judge, 'appropriate' (advisory): production 2/2, candidate 1/2" in text
    assert "[judge: not appropriate]" in text and "[judge: appropriate]" in text
    assert agg.as_json()["selection_judge"]["advisory"] is True

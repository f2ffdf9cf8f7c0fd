"""The graceful-failure heuristic's false alarms on correct paths.

A correct path is a multi-step attempt whose trajectory and end state are
both right. On such a path, an "ungraceful" judgement is a false alarm when
the attempt also handles the tool failure as its case asks (it is a correct
answer by construction: the example suite's scripted answers). The figure is
measured on:

- the example suite's scripted answers (script.yaml: the correct answer to
  every case), run through the agent loop;
- the multi-step attempts of the two demo record files whose trajectory and
  end state are right.

Prints, for each source, how many correct paths there were, on how many the
heuristic applied (a tool failure left unrepaired), and how many it flagged.

    python bench/graceful_false_alarms.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from toolproof.grade import Scorer
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.run import RunOptions, Target, expected_states, run_suite
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Record, Verdict

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"


def _correct_paths(scorer: Scorer, records: list[Record]) -> list[Verdict]:
    out = []
    for record in records:
        if not scorer.is_multistep(record.case_id):
            continue
        verdict = scorer.grade(record)
        ms = verdict.multistep if verdict is not None else None
        if verdict is None or ms is None:
            continue
        if ms.trajectory_ok is not False and ms.end_state_ok is not False:
            out.append(verdict)
    return out


def _line(name: str, verdicts: list[Verdict]) -> str:
    applied = [v for v in verdicts if v.multistep is not None and v.multistep.graceful is not None]
    flagged = [v for v in applied if v.multistep is not None and v.multistep.graceful is False]
    ids = ", ".join(sorted({v.case_id for v in flagged})) or "none"
    return (
        f"{name}: {len(verdicts)} correct paths, heuristic applied on {len(applied)}, "
        f"flagged {len(flagged)} ({ids})"
    )


def main() -> None:
    suite = load_suite(SUITE)
    scorer = Scorer(suite, expected_states(suite, Trust(allow_code=True)))
    script = yaml.safe_load((SUITE / "script.yaml").read_text(encoding="utf-8"))
    provider = ScriptedProvider.from_dict(script)
    multi = suite.model_copy(
        update={"cases": [c for c in suite.cases if scorer.is_multistep(c.id)]}
    )
    with tempfile.TemporaryDirectory() as tmp:
        opts = RunOptions(
            out=Path(tmp) / "run", cache=False, fsync=False, trust=Trust(allow_code=True)
        )
        result = run_suite(multi, [Target(spec="scripted:script.yaml", provider=provider)], opts)
        scripted = _correct_paths(scorer, list(result.records))
    demo = _correct_paths(
        scorer, read_records(SUITE / "records.jsonl") + read_records(SUITE / "records-b.jsonl")
    )
    print(_line("scripted correct answers", scripted))
    print(_line("demo records, right trajectory and end state", demo))
    total = scripted + demo
    applied = [v for v in total if v.multistep is not None and v.multistep.graceful is not None]
    flagged = sum(1 for v in applied if v.multistep is not None and v.multistep.graceful is False)
    print(f"false alarms: {flagged} of {len(applied)} correct paths where the heuristic applied")


if __name__ == "__main__":
    main()

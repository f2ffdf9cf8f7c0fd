"""LLM judges that must earn their vote.

A judge is a model spec (any provider toolproof speaks) judging records by a
rubric: typed fields plus a reason, parsed strictly (anything else is a
``judge_error``, never a verdict). Judge calls run through the runner.
Calibration measures a judge against human labels (Cohen's κ); only a
calibrated judge's figures may block a release::

    from toolproof.judges import Judge, builtin_rubric
    judge = Judge("openai:gpt-4.1", "trajectory", builtin_rubric("trajectory"))
    judge.messages(suite, case, record)    # what the judge is sent
    judge.read(record, response)           # its answer, as a Judgement
"""

from toolproof.judges._api import (
    JudgeCheck,
    argument_decisions,
    judge_run,
    judges_for,
    suite_rubrics,
)
from toolproof.judges._batch import Item, JudgeRunOptions, judge_items, judge_items_async
from toolproof.judges._blocking import (
    JudgeGateCheck,
    calibration_status,
    family,
    judge_gate,
    self_preference,
)
from toolproof.judges._calibrate import (
    VARIANTS,
    Calibration,
    InjectionResult,
    calibrate,
    calibration_items,
    field_calibrated,
    match_labels,
    plant,
    planted_verdict,
    read_calibration,
    write_calibration,
)
from toolproof.judges._calibrations import suite_calibrations
from toolproof.judges._figures import FieldFigure, RubricFigures, rubric_figures
from toolproof.judges._file import JUDGEMENTS_FILE, append_judgements, read_judgements
from toolproof.judges._judge import (
    JUDGE_DEFAULTS,
    WEAK_JUDGE_NOTE,
    Judge,
    Judgement,
    judge_settings,
    record_digest,
)
from toolproof.judges._kappa import Agreement, agreement, bootstrap_interval, kappa
from toolproof.judges._labels import (
    Label,
    LabelsFile,
    LabelsHeader,
    append_label,
    read_labels,
    write_header,
)
from toolproof.judges._parse import JudgeReplyError, Parsed, parse_reply
from toolproof.judges._prompt import (
    PROMPT_VERSION,
    ArgumentItem,
    argument_document,
    argument_item,
    quote,
    system_prompt,
    transcript_data,
)
from toolproof.judges._rubrics import builtin_rubric, case_rubrics, rubric_named

__all__ = [
    "JUDGEMENTS_FILE",
    "JUDGE_DEFAULTS",
    "PROMPT_VERSION",
    "VARIANTS",
    "WEAK_JUDGE_NOTE",
    "Agreement",
    "ArgumentItem",
    "Calibration",
    "FieldFigure",
    "InjectionResult",
    "Item",
    "Judge",
    "JudgeCheck",
    "JudgeGateCheck",
    "JudgeReplyError",
    "JudgeRunOptions",
    "Judgement",
    "Label",
    "LabelsFile",
    "LabelsHeader",
    "Parsed",
    "RubricFigures",
    "agreement",
    "append_judgements",
    "append_label",
    "argument_decisions",
    "argument_document",
    "argument_item",
    "bootstrap_interval",
    "builtin_rubric",
    "calibrate",
    "calibration_items",
    "calibration_status",
    "case_rubrics",
    "family",
    "field_calibrated",
    "judge_gate",
    "judge_items",
    "judge_items_async",
    "judge_run",
    "judge_settings",
    "judges_for",
    "kappa",
    "match_labels",
    "parse_reply",
    "plant",
    "planted_verdict",
    "quote",
    "read_calibration",
    "read_judgements",
    "read_labels",
    "record_digest",
    "rubric_figures",
    "rubric_named",
    "self_preference",
    "suite_calibrations",
    "suite_rubrics",
    "system_prompt",
    "transcript_data",
    "write_calibration",
    "write_header",
]

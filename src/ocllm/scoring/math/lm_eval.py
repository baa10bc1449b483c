"""lm-eval's math tasks (`gsm8k`, `gsm8k_cot*`, `minerva_math*`, `hendrycks_math*`, `aime*`; a doc of another name
by its fields, when the MCQ room found no options in it): a doc's lines -> a math task and the tool's verdicts under
`previous` (the reader, formats/lm_eval.py, adds the response lm-eval kept).

The gold is taken from the doc, never from lm-eval's `target` where the doc holds one: the minerva_math tasks'
`process_docs` replaces the doc's `answer` (and so the target) by its normalised form, which before lm-eval 0.4.13
deleted `ft` wherever it stood (`\\left(` became `\\le(`) and joined `3, 5, 7` into `357` (0.4.13 no longer does,
but still drops every space). So a MATH doc's gold is the last
`\\boxed{}` of its `solution` (the one both lm-eval math families build `answer` from), a GSM8K doc's what follows
the last `####` of its `answer`, an AIME doc's its `answer`/`Answer` field; `previous.gold_source` says which,
and `previous.tool_target` keeps the target lm-eval compared with.

GSM8K files have two filters (`strict-match`, `flexible-extract`), each with its extraction and `exact_match`;
MATH files one line (filter `none`) with two metrics, `exact_match` (Minerva's "Final Answer: ..." read,
normalised and compared by sympy) and `math_verify`; AIME files one, `exact_match`. Every filter's every metric
is kept (`verdicts`); `previous.correct` is the chosen filter's `math_verify` where it has one, else its
`exact_match`. Where the filter is `none`, lm-eval logs no extracted answer (its metric code extracts it and
keeps it to itself): `extracted_final_answer` is then null, never the whole response again.
"""

from __future__ import annotations

from typing import Any, Literal

from ocllm.models import Task
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.golds import aime_integer, gsm8k_gold, last_boxed, level_name, without_thousands_commas
from ocllm.scoring.other_harnesses import LmEvalDoc, LmEvalMapping, NotScorable, first_item, metric_verdicts

Family = Literal["gsm8k", "math", "aime"]
# The task-name prefixes of lm-eval's math tasks, by the doc layout they read.
_PREFIXES: tuple[tuple[str, Family], ...] = (
    ("gsm8k", "gsm8k"),
    ("minerva_math", "math"),
    ("hendrycks_math", "math"),
    ("aime", "aime"),
)
# The metric whose verdict is the tool's own, in preference: math_verify is what MATH results are quoted by.
VERDICT_METRICS = ("math_verify", "exact_match")
INVALID = ("[invalid]", "[invalidanswer]")  # what lm-eval's regex filters and Minerva's reader give for nothing


def by_name(task: str) -> Family | None:
    """Which math layout an lm-eval task reads, by its name: lm-eval's own math tasks and the variants named
    after them. None: not a math task by name."""
    for prefix, name in _PREFIXES:
        if task.startswith(prefix):
            return name
    return None


def by_shape(doc: dict[str, Any]) -> Family | None:
    """Which math layout a doc of another name is, by its fields: a GSM8K `question` with an `answer` holding
    `####`, a MATH `problem` with a `solution`. Asked only of docs the multiple-choice reader found no options
    in, so that no MCQ file is read another way."""
    if isinstance(doc.get("question"), str) and "####" in str(doc.get("answer", "")):
        return "gsm8k"
    if isinstance(doc.get("problem"), str) and isinstance(doc.get("solution"), str):
        return "math"
    return None


def read(doc: LmEvalDoc) -> tuple[Task, dict[str, Any]]:
    """Sample `index` of the doc (its `index`-th response), with the tool's verdicts on the doc. Asked of a task
    claimed by its name, or of a doc by its shape (round 4, scoring/other_harnesses.py): the name decides first."""
    kind = by_name(doc.task) or by_shape(doc.doc)
    if kind is None:
        raise NotScorable(doc.task_id, doc.where, "not a math task by its name nor a math doc by its fields")
    fields = doc.doc
    gold, source = _gold(kind, fields, doc.row.get("target"))
    if gold is None:
        raise NotScorable(doc.task_id, doc.where, f"no gold answer: {source}")
    category, subset = doc.task, None
    if kind == "math":
        subject = fields.get("type") or fields.get("subject")
        category = subject if isinstance(subject, str) and subject.strip() else doc.task
        subset = level_name(fields.get("level"))
    built = MathTask(id=doc.task_id, question=_question(kind, fields), answer=gold, category=category,
                 subset=subset, prompt=doc.prompt)  # fmt: skip
    filters = {name: _outcome(line, doc.responses) for name, (_, line) in doc.lines.items()}
    outcome = filters[doc.chosen]
    method = f"lm-eval filter {doc.chosen}" if doc.chosen != "none" else f"lm-eval metric {outcome['metric']}"
    previous = {
        "tool": "lm-eval",
        "filter": doc.chosen,
        "extraction_method": method,
        "extracted_final_answer": outcome["extracted"],
        "tool_answer": outcome["answer"],
        "correct": outcome["correct"],
        "metric": outcome["metric"],
        "metric_value": outcome["metric_value"],
        "verdicts": outcome["verdicts"],
        "filters": filters,
        "gold_source": source,
        "tool_target": doc.row.get("target"),
    }
    return built, previous


def _gold(kind: Family, doc: dict[str, Any], target: Any) -> tuple[str | None, str]:
    """The gold and where it was taken from (or, with None, what was looked for)."""
    if kind == "gsm8k":
        answer = doc.get("answer")
        if isinstance(answer, str) and (gold := gsm8k_gold(answer)) is not None:
            return gold, "doc.answer, after its last ####"
        if isinstance(target, str | int) and not isinstance(target, bool):
            text = str(target)  # gsm8k_cot's target is the gold already; gsm8k's the whole answer text
            return (gsm8k_gold(text) or without_thousands_commas(text.strip()) or None), "target"
        return None, "the doc has no answer with ####, and the line no target"
    if kind == "math":
        solution = doc.get("solution")
        if isinstance(solution, str) and (gold := last_boxed(solution)) is not None:
            return gold, "doc.solution, its last \\boxed{}"
        answer = doc.get("answer")
        if isinstance(answer, str) and answer.strip():
            return answer.strip(), "doc.answer"
        if isinstance(target, str) and target.strip():
            return target.strip(), "target"
        return None, "the doc has no solution with a \\boxed{} nor an answer, and the line no target"
    # AIME: the doc's answer field in any case, as lm-eval's own aime code finds it.
    key = next((k for k in doc if isinstance(k, str) and k.lower() == "answer"), None)
    for value, source in ((doc.get(key) if key else None, f"doc.{key}"), (target, "target")):
        if value is None or isinstance(value, bool | list | dict):
            continue
        gold = aime_integer(value) or str(value).strip()
        if gold:
            return gold, source
    return None, "the doc has no answer field, and the line no target"


def _question(kind: Family, doc: dict[str, Any]) -> str:
    names = {"gsm8k": ("question",), "math": ("problem",), "aime": ("problem", "Problem", "question", "Question")}
    for name in names[kind]:
        if isinstance(doc.get(name), str):
            return str(doc[name])
    return ""


def _outcome(row: dict[str, Any], responses: list[str]) -> dict[str, Any]:
    """One filter's extraction (null when lm-eval logged none, or its "[invalid]"), and its metrics' verdicts."""
    raw = first_item(row.get("filtered_resps"))
    # Filter `none` (take_first): a response itself, not an extraction (with repeats, the first response).
    answer = raw if raw not in responses else None
    return {
        "answer": answer,
        "extracted": answer.strip() if isinstance(answer, str) and answer.strip() not in ("", *INVALID) else None,
        **metric_verdicts(row, VERDICT_METRICS),
    }


LM_EVAL = LmEvalMapping(
    read=read,
    claims_task=lambda task: by_name(task) is not None,
    may_claim_doc=lambda doc: by_shape(doc) is not None,
)

"""lm-eval's `ifeval` task (and any task whose docs are IFEval's rows): a doc's line -> an instructions task and
lm-eval's four metrics under `previous` (the reader, formats/lm_eval.py, adds the response lm-eval kept).

The doc is the Hugging Face row lm-eval loaded (`key`, `prompt`, `instruction_id_list`, `kwargs`, every argument
of every instruction in each kwargs object, null where unused), read as `ocllm import ifeval` reads the dataset:
the same instructions, and the same id (`ifeval/<key>`, the task's name then IFEval's key, not lm-eval's row
number), so that an lm-eval run and a run of the imported suite compare task by task. A doc whose instructions
this scorer cannot check (an unknown id, arguments an instruction does not take), or that the importer would refuse
(no `key`, a `prompt` that is not text: `key_and_prompt`, the importer's own rule), is unscorable, with why.

ifeval's `process_results` returns four values, which the evaluator writes into the line beside the doc:
`prompt_level_strict_acc` and `prompt_level_loose_acc` (one bool), `inst_level_strict_acc` and
`inst_level_loose_acc` (a bool per instruction, in the doc's order). `previous.correct` is the strict prompt-level
one (as this scorer's `correct` is), `correct_loose` the loose one, `instructions_followed(_loose)` the lists, and
`metrics` all four as written. lm-eval logs no extraction for ifeval (it has no filter: `filtered_resps` is the
response), so `previous` names none.
"""

from __future__ import annotations

from typing import Any

from ocllm.models import Task
from ocllm.scoring.instructions.dataset import instructions_of, key_and_prompt, key_of
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.scoring.other_harnesses import LmEvalDoc, LmEvalMapping, NotScorable, verdict_of

METRICS = ("prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc")
VERDICT_METRIC = "prompt_level_strict_acc"


def _named_ifeval(task: str) -> bool:
    return task.startswith("ifeval")


def _an_ifeval_row(doc: dict[str, Any]) -> bool:
    """A doc of any task that is an IFEval row by its fields (no multiple-choice or math doc has an
    `instruction_id_list`)."""
    return "instruction_id_list" in doc


def read(read_doc: LmEvalDoc) -> tuple[Task, dict[str, Any]]:
    """Sample `index` of the doc (its `index`-th response), with lm-eval's verdicts on the doc. The reader's
    `<task>/<doc_id>` names it only where the doc has no key to name it by."""
    task_id, where, task, row = read_doc.task_id, read_doc.where, read_doc.task, read_doc.row
    doc = read_doc.doc
    key = key_of(doc.get("key"))
    if key is not None:
        task_id = f"{task}/{key}"
    if "instruction_id_list" not in doc:
        raise NotScorable(task_id, where, "the doc has no instruction_id_list (not an IFEval row)")
    read = key_and_prompt(doc.get("key"), doc.get("prompt"))
    if isinstance(read, str):
        raise NotScorable(task_id, where, f"the doc is no IFEval row `ocllm import ifeval` reads: {read}")
    question = read[1]
    instructions, problem = instructions_of(doc.get("instruction_id_list"), doc.get("kwargs"))
    if instructions is None:
        raise NotScorable(task_id, where, f"instructions this scorer cannot check: {problem}")
    built = InstructionsTask(id=task_id, question=question,
                 instructions=instructions, category=task, prompt=read_doc.prompt)  # fmt: skip
    metrics = {name: row[name] for name in METRICS if name in row}
    previous = {
        "tool": "lm-eval",
        "filter": row.get("filter") if isinstance(row.get("filter"), str) else "none",
        "extraction_method": f"lm-eval metric {VERDICT_METRIC}",
        "correct": verdict_of(metrics.get(VERDICT_METRIC)),
        "correct_loose": verdict_of(metrics.get("prompt_level_loose_acc")),
        "instructions_followed": _verdicts(metrics.get("inst_level_strict_acc")),
        "instructions_followed_loose": _verdicts(metrics.get("inst_level_loose_acc")),
        "metric": VERDICT_METRIC,
        "metric_value": metrics.get(VERDICT_METRIC),
        "metrics": metrics,
    }
    return built, previous


def _verdicts(value: Any) -> list[bool | None] | None:
    """A per-instruction list as verdicts (true/false, or 1/0); None where lm-eval wrote no list."""
    if not isinstance(value, list):
        return None
    return [verdict_of(item) for item in value]


# IFEval's rows are claimed by their fields before any other room is asked, whatever the task's name.
LM_EVAL = LmEvalMapping(read=read, claims_doc=_an_ifeval_row, claims_task=_named_ifeval)

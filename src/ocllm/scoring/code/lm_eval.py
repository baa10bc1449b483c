"""lm-eval's code tasks (`humaneval`, `humaneval_instruct`, `humaneval_64*`, `humaneval_plus`, `mbpp`,
`mbpp_instruct`, `mbpp_plus*`, by name; a doc of another name by its fields, `entry_point` with a `test` defining
`check`, or MBPP's `test_list`): a doc's line -> a code task and lm-eval's verdict under `previous`.

The tests are the ones lm-eval ran, its line's `target`, so that the two verdicts differ only by how the answer was
read and run: for the humaneval tasks `doc.test` (the target is it and `check(<entry_point>)`; humaneval_plus's doc
holds evalplus's test), for the mbpp tasks the three asserts of `test_list` the target lists (lm-eval runs no
`test_setup_code`, and mbpp_plus* only the base asserts, not evalplus's plus tests). The humaneval tasks' code prefix
is `doc.prompt` (lm-eval's own filter runs prompt + response); the mbpp tasks have none.

The response is the sample as lm-eval kept it, an empty one too (it reaches the scorer as an empty answer). The
*_instruct tasks sent a `gen_prefix` that opens a ```python fence (humaneval_instruct: with the prompt's code in it),
so their responses start inside that fence; `previous.gen_prefix_open` says so where the prompt ends inside one.
lm-eval's verdict is its per-doc `pass@1` (humaneval*) or `pass_at_1` (mbpp*), 1 or 0; with `repeats` it is the
doc's, kept under every sample (`verdict_of: task`, the reader adds it). The program lm-eval ran is its filter's
output (`filtered_resps`: for humaneval the prompt joined to the response), kept as `previous.tool_program`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ocllm.models import Task
from ocllm.scoring.code.datasets import MBPP_QUESTION, PREFIX_QUESTION, asserts_check, mbpp_entry_point
from ocllm.scoring.code.fields import CodeTask, task_fields_problem
from ocllm.scoring.dataset_rows import BadRow
from ocllm.scoring.other_harnesses import LmEvalDoc, LmEvalMapping, NotScorable, first_item, metric_verdicts

VERDICT_METRICS = ("pass@1", "pass_at_1")
_PREFIXES = ("humaneval", "mbpp")


def by_name(task: str) -> str | None:
    return next((prefix for prefix in _PREFIXES if task.startswith(prefix)), None)


def by_shape(doc: dict[str, Any]) -> str | None:
    test = doc.get("test")
    if isinstance(doc.get("entry_point"), str) and isinstance(test, str) and "def check" in test:
        return "humaneval"
    described = isinstance(doc.get("text"), str) or isinstance(doc.get("prompt"), str)
    if isinstance(doc.get("test_list"), list) and described:
        return "mbpp"
    return None


def read(doc: LmEvalDoc) -> tuple[Task, dict[str, Any]]:
    family = by_name(doc.task) or by_shape(doc.doc)
    if family is None:
        raise NotScorable(doc.task_id, doc.where, "not a code task by its name nor a code doc by its fields")
    built = _humaneval(doc) if family == "humaneval" else _mbpp(doc)
    fields = {"entry_point": built.entry_point, "test": built.test, "code_prefix": built.code_prefix}
    problem = task_fields_problem(fields)
    if problem is not None:
        raise NotScorable(doc.task_id, doc.where, problem)
    filters = {name: _outcome(line) for name, (_, line) in doc.lines.items()}
    outcome = filters[doc.chosen]
    previous: dict[str, Any] = {
        "tool": "lm-eval",
        "filter": doc.chosen,
        "extraction_method": f"lm-eval filter {doc.chosen}",
        "extracted_final_answer": None,  # lm-eval extracts no answer: it runs a program (tool_program)
        "tool_program": outcome["program"],
        "correct": outcome["correct"],
        "metric": outcome["metric"],
        "metric_value": outcome["metric_value"],
        "verdicts": outcome["verdicts"],
        "filters": filters,
        "tests_from": _tests_from(family, doc),
    }
    if doc.prompt is not None and _ends_in_open_fence(doc.prompt):
        previous["gen_prefix_open"] = True
        # The response continues the fence the gen_prefix opened: the task says so, from that fence on.
        built = msgspec.structs.replace(built, prefill=doc.prompt[doc.prompt.rindex("```") :])
    return built, previous


def _tests_from(family: str, doc: LmEvalDoc) -> str:
    if family == "humaneval":
        return "doc.test (lm-eval's target: it and check(entry_point))"
    return "the asserts of lm-eval's target (doc.test_list[:3])" if _target_asserts(doc) else "doc.test_list"


def _humaneval(doc: LmEvalDoc) -> CodeTask:
    fields = doc.doc
    entry, test, prompt = fields.get("entry_point"), fields.get("test"), fields.get("prompt")
    if not isinstance(entry, str) or not isinstance(test, str) or not isinstance(prompt, str):
        raise NotScorable(doc.task_id, doc.where, "the doc has no prompt, test and entry_point")
    return CodeTask(id=doc.task_id, question=PREFIX_QUESTION.format(entry_point=entry), code_prefix=prompt,
                    entry_point=entry, test=test, category=doc.task, prompt=doc.prompt)  # fmt: skip


def _mbpp(doc: LmEvalDoc) -> CodeTask:
    fields = doc.doc
    asserts = _target_asserts(doc) or [a.strip() for a in fields.get("test_list") or [] if isinstance(a, str)]
    if not asserts:
        raise NotScorable(doc.task_id, doc.where, "no asserts in the line's target nor the doc's test_list")
    code = fields.get("code")
    entry = fields.get("entry_point")
    if not isinstance(entry, str):
        entry = _entry(code if isinstance(code, str) else "", asserts)
    if entry is None:
        raise NotScorable(doc.task_id, doc.where, "no function is called by the asserts")
    text = fields.get("text") if isinstance(fields.get("text"), str) else fields.get("prompt")
    question = MBPP_QUESTION.format(text=str(text or "").strip(), tests="\n".join(asserts))
    return CodeTask(id=doc.task_id, question=question, entry_point=entry, test=asserts_check(asserts, entry),
                    category=doc.task, prompt=doc.prompt)  # fmt: skip


def _target_asserts(doc: LmEvalDoc) -> list[str]:
    target = doc.row.get("target")
    if not isinstance(target, str):
        return []
    lines = [line.strip() for line in target.splitlines() if line.strip()]
    return lines if lines and all(line.startswith("assert") for line in lines) else []


def _entry(code: str, asserts: list[str]) -> str | None:
    """The importer's rule, one for both: the function of `code` the asserts call, else the first they call."""
    try:
        return mbpp_entry_point(code, asserts)
    except BadRow:
        return None


def _ends_in_open_fence(prompt: str) -> bool:
    """Whether the prompt (with lm-eval's gen_prefix at its end) leaves a ``` fence open: an odd number of fences."""
    return prompt.count("```") % 2 == 1


def _outcome(row: dict[str, Any]) -> dict[str, Any]:
    """One filter's program (its `filtered_resps`) and its metrics' verdicts."""
    program = first_item(row.get("filtered_resps"))
    return {"program": program if isinstance(program, str) else None, **metric_verdicts(row, VERDICT_METRICS)}


LM_EVAL = LmEvalMapping(
    read=read,
    claims_task=lambda task: by_name(task) is not None,
    may_claim_doc=lambda doc: by_shape(doc) is not None,
)

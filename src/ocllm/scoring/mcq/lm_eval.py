"""lm-eval's multiple-choice docs (MMLU-Pro's, MMLU's, ARC's, GPQA's, or lettered options in the prompt): a doc ->
an MCQ task, and the chosen filter's extraction and verdict under `previous`, every filter's beside it.

The MCQ room reads any doc no other room claimed (scoring/other_harnesses.py, round 3): a doc it finds no options in is
NotScorable, unless a room takes it by its fields after all (a math doc of another name)."""

from __future__ import annotations

from typing import Any

from ocllm.models import Task
from ocllm.scoring.mcq.harness_tasks import lone_letter, mcq_task, options_in_prompt
from ocllm.scoring.other_harnesses import LmEvalDoc, LmEvalMapping, NotScorable, first_item, verdict_of

METRICS = ("exact_match", "acc")  # the per-sample metrics of generative tasks, looked for when not listed


def read(doc: LmEvalDoc) -> tuple[Task, dict[str, Any]]:
    built = _task(doc)
    filters = {name: _filter_outcome(line) for name, (_, line) in doc.lines.items()}
    outcome = filters[doc.chosen]
    previous = {
        "tool": "lm-eval",
        "filter": doc.chosen,
        "extraction_method": f"lm-eval filter {doc.chosen}",
        "extracted_final_answer": outcome["extracted"],
        "tool_answer": outcome["answer"],
        "correct": outcome["correct"],
        "metric": outcome["metric"],
        "metric_value": outcome["metric_value"],
        "filters": filters,
    }
    return built, previous


def _filter_outcome(row: dict[str, Any]) -> dict[str, Any]:
    """One filter's extraction and verdict: its raw value, that value as a letter when it is one, and the
    tool's own correct/incorrect from its per-sample metric."""
    answer = first_item(row.get("filtered_resps"))
    metric, value = _metric(row)
    return {
        "answer": answer,
        "extracted": lone_letter(answer),
        "metric": metric,
        "metric_value": value,
        "correct": verdict_of(value),
    }


def _metric(row: dict[str, Any]) -> tuple[str | None, Any]:
    listed = row.get("metrics")
    names = [m for m in listed if isinstance(m, str)] if isinstance(listed, list) else []
    for name in [*names, *METRICS]:
        value = row.get(name)
        if isinstance(value, int | float):  # bool included: a metric may be written as true/false
            return name, value
    return None, None


def _task(read_doc: LmEvalDoc) -> Task:
    doc = read_doc.doc
    options, answer = _options_and_answer(doc, read_doc.row.get("target"), read_doc.prompt)
    if options is None:
        raise NotScorable(
            read_doc.task_id,
            read_doc.where,
            "cannot tell the options and the answer: the doc has none of options+answer, choices+answer, "
            "choices{text,label}+answerKey, choice1..4+answer, and the prompt lists no lettered options",
        )
    question = doc.get("question", doc.get("Question", ""))
    category = doc.get("category", doc.get("subject"))
    return mcq_task(
        read_doc.where,
        read_doc.task_id,
        options,
        answer,
        question=question if isinstance(question, str) else "",
        category=category if isinstance(category, str) and category else read_doc.task,
        subset=doc["src"] if isinstance(doc.get("src"), str) else None,
        prompt=read_doc.prompt,
    )


def _options_and_answer(doc: dict[str, Any], target: Any, prompt: str | None) -> tuple[list[Any] | None, Any]:
    """Options and gold letter from the doc, in the shapes lm-eval's multiple-choice tasks use; else the
    lettered option lines of the prompt with the line's target."""
    if isinstance(doc.get("options"), list):  # MMLU-Pro: options, answer letter (answer_index beside it)
        answer = doc.get("answer")
        if not isinstance(answer, str) and isinstance(doc.get("answer_index"), int):
            answer = _letter_at(doc["answer_index"])
        return doc["options"], answer
    choices = doc.get("choices")
    if isinstance(choices, list):  # MMLU: choices, answer index
        answer = doc.get("answer")
        return choices, _letter_at(answer) if isinstance(answer, int) and not isinstance(answer, bool) else answer
    if isinstance(choices, dict) and isinstance(choices.get("text"), list):  # ARC: labels A-E, or 1-5
        labels = choices.get("label")
        key = doc.get("answerKey")
        if isinstance(labels, list) and key in labels:
            return choices["text"], _letter_at(labels.index(key))
        return choices["text"], target
    numbered = [doc.get(f"choice{n}") for n in range(1, 5)]
    if all(isinstance(c, str) for c in numbered):  # GPQA: choice1..choice4, answer "(A)"
        return numbered, doc.get("answer", target)
    options = options_in_prompt(prompt or "")
    if not options:
        return None, None
    if isinstance(target, int) and not isinstance(target, bool):
        target = _letter_at(target)
    return options, target


def _letter_at(index: int) -> str | None:
    return chr(ord("A") + index) if 0 <= index < 26 else None


LM_EVAL = LmEvalMapping(read=read, reads_any=True)

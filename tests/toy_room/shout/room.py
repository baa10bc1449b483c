"""The `shout` room's parts: its task and decision structs, its prompt, its one rule, its simulated answers and the
words reports draw its evidence with."""

from __future__ import annotations

from typing import Any, Literal

from ocllm.errors import InputError
from ocllm.models import Decision, Policy, Sample, Task
from ocllm.scoring.regions import split_regions
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest
from ocllm.scoring.task_type import Message, PromptSettings, Scored, chat

DEFAULT_TEMPLATE = "{question}\nReply with the word {word} in capital letters, and nothing else."
PLACEHOLDERS = ("question", "word")
REQUIRED_PLACEHOLDERS = ("word",)


class ShoutTask(Task, tag="shout", kw_only=True):
    """A shout task: the word to be shouted."""

    word: str = ""


class ShoutDecision(Decision, kw_only=True):
    """A shout verdict: what the visible answer said, stripped."""

    extraction_method: Literal["whole_answer"]
    ambiguity: Literal["none"]
    rule: Literal["shouted", "not_shouted"]
    heard: str = ""


def _word(where: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: field 'word': a shout task needs a word")
    return value


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    _word(where, row.get("word"))


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"word": _word(where, row.get("word"))}


def record_fields(task: ShoutTask) -> dict[str, Any]:
    return {"word": task.word}


def gold(task: ShoutTask) -> str | None:
    return task.word.upper()


def prompt(task: ShoutTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, settings.template.format(question=task.question, word=task.word))


def decide_shout(task: ShoutTask, sample: Sample, policy: Policy) -> ShoutDecision:
    visible = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled).visible_text()
    heard = visible.strip()
    shouted = heard == task.word.upper()
    return ShoutDecision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=gold(task),
        extracted_final_answer=heard or None,
        extraction_source="content" if heard else "none",
        extraction_method="whole_answer",
        ambiguity="none",
        correct=shouted,
        rule="shouted" if shouted else "not_shouted",
        reason=f"the visible answer is {heard!r}; {task.word.upper()!r} was asked for",
        heard=heard,
        truncated=sample.finish_reason == "length",
    )


def evidence_lines(scored: Scored[ShoutTask, ShoutDecision]) -> list[tuple[str, str]]:
    return [("heard", (scored.decision.heard if scored.decision is not None else "") or "—")]


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    task = request.task
    if not isinstance(task, ShoutTask):
        return None  # a prompt the simulator does not know is not this room's
    said = task.word.upper() if request.correct else task.word.lower()
    return SimulatedAnswer(said, f"The word is {task.word}; I shout it." if request.reasoning else None)

"""The instructions room's dataset for `ocllm import`, IFEval: a row of its `input_data.jsonl` (`key`, `prompt`,
`instruction_id_list`, `kwargs`), or of Hugging Face's google/IFEval copy (the same fields, JSONL or Parquet) -> a
Task of type instructions.

`kwargs` is a list of objects, one per instruction and in the same order. Hugging Face's copy writes every
argument of every instruction in each object, null where unused; the nulls are dropped, so both copies give the
same suite byte for byte. The instructions are checked as the suite reader checks them (the instructions room's
`instructions_problem`): an unknown id, or arguments an instruction does not take, refuse the row.

Ids are `ifeval/<key>`, IFEval's own key (`ifeval/1000`); the lm-eval reader names its ifeval docs the same way,
so a run of an imported suite and lm-eval's samples compare task by task. Every task's category is "ifeval":
IFEval reports per instruction kind, which the instructions summary does already; a prompt holds up to three
instructions of different groups, so a category taken from one of them (its first) would put a prompt's verdict
under a group that is only part of it, and read like a per-instruction figure it is not.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow, Dataset, Row, field
from ocllm.scoring.instructions.fields import InstructionsTask, instructions_problem

CATEGORY = "ifeval"


def instructions_of(ids: Any, kwargs: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """IFEval's two parallel lists as a task's instructions ([{"id", "kwargs"}...], nulls dropped), or None and
    what is wrong with them. Shared by the importer and the lm-eval reader, whose docs are the same rows."""
    if not isinstance(ids, list | tuple):
        return None, "'instruction_id_list' is not a list"
    if not ids:
        return None, "no instructions ('instruction_id_list' is empty)"
    if not isinstance(kwargs, list | tuple):
        return None, "'kwargs' is not a list (one object per instruction)"
    if len(kwargs) != len(ids):
        return None, f"{len(kwargs)} kwargs objects for {len(ids)} instruction(s)"
    built: list[dict[str, Any]] = []
    for number, (name, arguments) in enumerate(zip(ids, kwargs, strict=True), start=1):
        if not isinstance(name, str):
            return None, f"instruction {number} of 'instruction_id_list' is {name!r}, not an id"
        if isinstance(arguments, dict):
            arguments = {key: value for key, value in arguments.items() if value is not None}
        built.append({"id": name, "kwargs": {} if arguments is None else arguments})
    problem = instructions_problem(built)
    return (None, problem) if problem is not None else (built, None)


def key_of(value: Any) -> str | None:
    """IFEval's key as the id's text: a whole number (written 1000 or, by pandas, 1000.0) or non-empty text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def key_and_prompt(key: Any, prompt: Any) -> tuple[str, str] | str:
    """A row's key (as the id's text) and prompt, or what is wrong with them: one rule for the importer and the
    lm-eval reader, so that a row one refuses the other does not score under another id."""
    if key is None:
        return "no 'key'"
    if (text := key_of(key)) is None:
        return f"'key' is not a number or text ({key!r})"
    if prompt is None:
        return "no 'prompt'"
    if not isinstance(prompt, str):
        return "'prompt' is not text"
    if not prompt.strip():
        return "'prompt' is empty"
    return text, prompt


def _ifeval_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    read = key_and_prompt(row.fields.get("key"), row.fields.get("prompt"))
    if isinstance(read, str):
        raise BadRow(read)
    key, prompt = read
    instructions, problem = instructions_of(field(row, "instruction_id_list"), field(row, "kwargs"))
    if instructions is None:
        raise BadRow(problem or "no instructions")
    # The prompt exactly as IFEval wrote it: it is what is sent, and repeat_prompt compares answers with it.
    return InstructionsTask(id=f"ifeval/{key}", question=prompt, instructions=instructions,
                category=CATEGORY)  # fmt: skip


DATASETS = (Dataset(name="ifeval", label="IFEval", files=("parquet", "jsonl"), task=_ifeval_task),)

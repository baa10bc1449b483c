"""The text of a simulated answer to a json task: one JSON value (bare, or in a fenced block with a line of prose)
that fits the task's schema, or one that a model gets wrong in one of the ways models do: a value that breaks the
schema, JSON that does not parse, or two fenced blocks.

The value is made from the schema itself (`scoring/schema_values.py`). Every random choice comes from the
`random.Random` handed in.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ocllm.scoring.json_answer.fields import JsonTask
from ocllm.scoring.schema_values import schema_value
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook (`TaskType.simulated_answer`): an answer to a json task; no answer to a prompt it does not
    know."""
    if not isinstance(request.task, JsonTask):
        return None  # a prompt it does not know (no task), or another room's task, which its own room answers
    content, thinking = json_answer(request.rng, request.task, correct=request.correct, reasoning=request.reasoning)
    return SimulatedAnswer(content, thinking)


def json_answer(rng: random.Random, task: JsonTask, *, correct: bool, reasoning: bool) -> tuple[str, str | None]:
    """The content and reasoning (None in non-reasoning mode) of an answer to a json task: a value that fits its
    schema when `correct`."""
    schema = task.schema if isinstance(task.schema, dict) else {}
    value = schema_value(rng, schema)
    if correct:
        content = _written(rng, value)
    else:
        # Without a schema any JSON value is right: only broken JSON or two blocks can be wrong.
        ways = [_breaks_schema, _does_not_parse, _two_blocks] if schema else [_does_not_parse, _two_blocks]
        content = rng.choice(ways)(rng, schema, value)
    thinking = None
    if reasoning:
        thinking = "The answer must be JSON. I will write the object first, then check each required field."
    return content, thinking


def _written(rng: random.Random, value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    form = rng.choice(["bare", "fenced", "prose_and_fence"])
    if form == "bare":
        return text
    fenced = f"```json\n{text}\n```"
    return fenced if form == "fenced" else f"Here is the JSON you asked for:\n\n{fenced}"


def _breaks_schema(rng: random.Random, schema: dict[str, Any], value: Any) -> str:
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    if isinstance(value, dict) and required:
        del value[rng.choice(required)]  # a required field left out
    elif isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        value[key] = [value[key]]  # a field of the wrong type
    else:
        value = {"value": value} if schema.get("type") != "object" else "not an object"
    return _written(rng, value)


def _does_not_parse(rng: random.Random, _schema: dict[str, Any], value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    broken = text[:-1] + ",\n}" if text.endswith("}") else text + ","  # a trailing comma, as models write
    return f"```json\n{broken}\n```" if rng.random() < 0.5 else broken


def _two_blocks(rng: random.Random, _schema: dict[str, Any], value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return f"First try:\n```json\n{text}\n```\nOr, better:\n```json\n{text}\n```"

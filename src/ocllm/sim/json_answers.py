"""The text of a simulated answer to a json task: one JSON value (bare, or in a fenced block with a line of prose)
that fits the task's schema, or one that a model gets wrong in one of the ways models do: a value that breaks the
schema, JSON that does not parse, or two fenced blocks.

The value is made from the schema itself, for the keywords suites use (type, properties, required, items, enum,
const, minimum, maximum, minLength, minItems); a keyword it does not know is left to chance, as a model's answer
is. Every random choice comes from the `random.Random` handed in.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ocllm.models import Task

_WORDS = ("harbor", "lantern", "river", "stone", "garden", "morning", "field", "paper")


def json_answer(rng: random.Random, task: Task, *, correct: bool, reasoning: bool) -> tuple[str, str | None]:
    """The content and reasoning (None in non-reasoning mode) of an answer to a json task: a value that fits its
    schema when `correct`."""
    schema = task.schema if isinstance(task.schema, dict) else {}
    value = _value(rng, schema, depth=0)
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


def schema_value(rng: random.Random, schema: Any) -> Any:
    """A value that fits `schema`, for the keywords this module knows (a tool call's made-up arguments use it too)."""
    return _value(rng, schema, depth=0)


def _value(rng: random.Random, schema: Any, *, depth: int) -> Any:
    """A value that fits `schema`, for the keywords this module knows."""
    if not isinstance(schema, dict) or depth > 6:
        return rng.choice(_WORDS)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        return {name: _value(rng, sub, depth=depth + 1) for name, sub in properties.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 0) or 0), 2)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [_value(rng, schema.get("items"), depth=depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", (low if isinstance(low, int | float) else 0) + 100))
        low = low + 1 if "exclusiveMinimum" in schema and "minimum" not in schema else low
        high = high - 1 if "exclusiveMaximum" in schema and "maximum" not in schema else high
        number = rng.randint(int(low), max(int(low), int(high)))
        return number if kind == "integer" else number + 0.5 if number + 0.5 <= high else float(number)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    word = rng.choice(_WORDS)
    minimum = schema.get("minLength")
    if isinstance(minimum, int) and len(word) < minimum:
        word = (word * (minimum // len(word) + 1))[:minimum]
    return word

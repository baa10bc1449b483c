"""A JSON value made from a JSON Schema, for the keywords suites use (type, properties, required, items, enum,
const, minimum, maximum, minLength, minItems); a keyword it does not know is left to chance, as a model's answer is.
Shared by the simulated answers of the json room (a value that fits the task's schema) and the tool_call room (a
made-up call's arguments), so that neither room imports the other's internals. Every random choice comes from the
`random.Random` handed in.
"""

from __future__ import annotations

import random
from typing import Any

_WORDS = ("harbor", "lantern", "river", "stone", "garden", "morning", "field", "paper")


def schema_value(rng: random.Random, schema: Any) -> Any:
    """A value that fits `schema`, for the keywords this module knows."""
    return _value(rng, schema, depth=0)


def _value(rng: random.Random, schema: Any, *, depth: int) -> Any:
    # Nesting past six levels gets a word: a schema may be recursive in effect, and the answer must end.
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
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            properties = {}
        return {name: _value(rng, sub, depth=depth + 1) for name, sub in properties.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 0) or 0), 2)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [_value(rng, schema.get("items"), depth=depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        # A bound that is no number (null, a string: a request's tools are not checked) is left to chance, as a
        # keyword this module does not know.
        minimum, exclusive_minimum = _number(schema.get("minimum")), _number(schema.get("exclusiveMinimum"))
        maximum, exclusive_maximum = _number(schema.get("maximum")), _number(schema.get("exclusiveMaximum"))
        low = minimum if minimum is not None else exclusive_minimum if exclusive_minimum is not None else 0
        high = maximum if maximum is not None else exclusive_maximum if exclusive_maximum is not None else low + 100
        low = low + 1 if exclusive_minimum is not None and minimum is None else low
        high = high - 1 if exclusive_maximum is not None and maximum is None else high
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


def _number(value: Any) -> float | None:
    """A bound as a number (a bool is one, as in Python: draft 4's `"exclusiveMinimum": true`), else None."""
    return value if isinstance(value, int | float) else None

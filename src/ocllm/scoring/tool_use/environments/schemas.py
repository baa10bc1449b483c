"""OpenAI function tools, written briefly: what an environment offers when a task does not list its tools."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def function(
    name: str, description: str, properties: Mapping[str, dict[str, Any]], *, required: Iterable[str] | None = None
) -> dict[str, Any]:
    """A function tool; every property required unless `required` says which."""
    needed = list(properties) if required is None else list(required)
    parameters = {"type": "object", "properties": dict(properties), "required": needed}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def string(description: str, *, enum: Iterable[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description}
    if enum is not None:
        schema["enum"] = list(enum)
    return schema


def integer(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": description}

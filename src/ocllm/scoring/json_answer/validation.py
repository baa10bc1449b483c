"""A json answer's value validated against its task's schema by `jsonschema` (on a validator that never fetches,
scoring/json_schemas/), each violation with its JSON path."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

import referencing.exceptions
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from ocllm.scoring.json_answer.decision import MAX_VIOLATIONS, SchemaViolation
from ocllm.scoring.json_schemas.checks import short


def violations(validator: Validator, value: Any) -> tuple[list[SchemaViolation], int]:
    """Every way `value` breaks the schema, in a stable order (by path in the value, then keyword): the first
    MAX_VIOLATIONS, and how many more there were. Raises referencing's Unresolvable for a reference that does not
    resolve (suites refuse those first; a nested `$id` can hide one)."""
    count = 0

    def counted(errors: Iterator[ValidationError]) -> Iterator[ValidationError]:
        nonlocal count
        for error in errors:
            count += 1
            yield error

    # The first MAX_VIOLATIONS by order, the others counted and dropped as they come: a value with a million
    # violations held them all (3 GB) to keep 20.
    first = heapq.nsmallest(MAX_VIOLATIONS, counted(validator.iter_errors(value)), key=_order)
    kept = [
        SchemaViolation(
            path=error.json_path,
            message=short(error.message),
            keyword=str(error.validator),
            schema_path="/" + "/".join(map(str, error.absolute_schema_path)),
        )
        for error in first
    ]
    return kept, max(0, count - MAX_VIOLATIONS)


# What validating raises for a reference that does not resolve (jsonschema wraps referencing's own error in it).
UNRESOLVABLE = referencing.exceptions.Unresolvable


def _order(error: ValidationError) -> tuple[tuple[tuple[int, int, str], ...], str, str]:
    # By place in the value, an array's items by number ($[2] before $[10]), then keyword and message.
    place = tuple((1, 0, e) if isinstance(e, str) else (0, e, "") for e in error.absolute_path)
    return (place, str(error.validator), error.message)

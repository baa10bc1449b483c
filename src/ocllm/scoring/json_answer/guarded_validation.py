"""Every schema validation runs in the guarded child (`scoring/guarded.py`), limited by the CPU time it used
(docs/scoring/json.md, rule J5).

jsonschema runs a schema's patterns with Python's `re`, a backtracking engine: `"pattern": "^(a+)+$"` against 34
`a` and a `!` takes about 50 minutes, past any timeout inside the process. No linear-time engine is used instead:
jsonschema calls `re.search` in five places (pattern, patternProperties, additionalProperties and both
unevaluated keywords), and a second engine would differ from `re` (and from ECMA-262) where they differ. A schema
without patterns costs without bound as well, by the answer: `uniqueItems` compares items pairwise when they do
not sort (100,000 objects: hours), an `enum` or `anyOf` of thousands of values is tried on each item of a long
array, a million violations are a million error objects, and a float `multipleOf` raises OverflowError on an
integer past a float's range (jsonschema divides before it guards). So the validation runs as it always did, in a
child stopped once it has used VALIDATION_LIMIT_S of CPU time: the verdict is then `schema_check_killed`, never
correct, counted apart; a check that raised is the same rule, its reason naming the error. The hand-over costs
about 1.5 ms a decision.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NamedTuple

from ocllm.scoring.guarded import Limits, Service
from ocllm.scoring.json_answer.decision import SchemaViolation

# The CPU time one validation may use. An ordinary schema validates in milliseconds; 2 s is a thousand times that,
# and a catastrophic pattern reaches it within a few dozen characters.
VALIDATION_LIMIT_S = 2.0
STARTUP_LIMIT_S = 30.0

Outcome = Literal["checked", "unresolvable", "too_deep", "killed", "failed"]


class Validated(NamedTuple):
    outcome: Outcome
    violations: list[SchemaViolation]
    left_out: int
    detail: str  # for unresolvable, killed and failed: a sentence saying why


_service = Service(
    "json-schema", startup=f"{__name__}:_start", startup_limits=Limits(cpu_s=STARTUP_LIMIT_S, stall_s=STARTUP_LIMIT_S)
)


def validate_guarded(schema: dict[str, Any], text: str, limit_s: float = VALIDATION_LIMIT_S) -> Validated:
    """`validation.violations` of the JSON value written in `text` (a text that parses), run in the guarded child under
    a CPU-time limit. The schema and the value cross as JSON text, read again in the child: pickling a value nested
    a few hundred deep raised RecursionError in the worker, before any limit applied."""
    args = (json.dumps(schema), text)
    result = _service.call(f"{__name__}:_validate_in_child", args, Limits(cpu_s=limit_s))
    if result.status == "done":
        return result.value  # type: ignore[no-any-return]
    if result.status == "limit":
        return Validated("killed", [], 0, f"the schema check {result.detail} and was killed")
    return Validated("failed", [], 0, f"the schema check could not run: {result.detail}")


# ---- in the child --------------------------------------------------------------------------------------------


def _start() -> str:
    """Import jsonschema once, outside any call's limit."""
    from ocllm.scoring.json_answer import validation  # noqa: F401

    return "jsonschema"


def _validate_in_child(schema_text: str, text: str) -> Validated:
    from ocllm.scoring.json_answer.extract import parse
    from ocllm.scoring.json_answer.validation import UNRESOLVABLE, violations
    from ocllm.scoring.json_schemas.checks import validator_of

    schema = json.loads(schema_text)
    try:
        value = parse(text).value  # it parsed in the worker: the same text, the same reader, the same value
        found, left_out = violations(validator_of(schema), value)
    except UNRESOLVABLE as exc:
        return Validated("unresolvable", [], 0, str(exc))
    except RecursionError:
        return Validated("too_deep", [], 0, "")
    return Validated("checked", found, left_out, "")

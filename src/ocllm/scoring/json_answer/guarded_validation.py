"""A schema with regular expressions (`pattern`, `patternProperties`) is validated in the guarded child
(`scoring/guarded.py`), limited by the CPU time the validation used (docs/scoring.md, rule J5).

jsonschema runs a schema's patterns with Python's `re`, a backtracking engine: `"pattern": "^(a+)+$"` against 34
`a` and a `!` takes about 50 minutes, past any timeout inside the process. No linear-time engine is used instead:
jsonschema calls `re.search` in five places (pattern, patternProperties, additionalProperties and both
unevaluated keywords), and a second engine would differ from `re` (and from ECMA-262) where they differ. So the
validation runs as it always did, in a child that is stopped once it has used PATTERN_LIMIT_S of CPU time: the
verdict is then `schema_check_killed`, never correct, counted apart. A schema without patterns costs time in
proportion to the schema and the value (both bounded), and is validated in the process, as before.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from ocllm.scoring.guarded import Limits, Service
from ocllm.scoring.json_answer.decision import SchemaViolation

# The CPU time one validation may use. An ordinary schema with patterns validates in milliseconds; 2 s is a
# thousand times that, and a catastrophic pattern reaches it within a few dozen characters.
PATTERN_LIMIT_S = 2.0
STARTUP_LIMIT_S = 30.0
_PATTERN_KEYWORDS = frozenset({"pattern", "patternProperties"})
_DATA = frozenset({"enum", "const", "default", "examples"})

Outcome = Literal["checked", "unresolvable", "too_deep", "killed", "failed"]


class Validated(NamedTuple):
    outcome: Outcome
    violations: list[SchemaViolation]
    left_out: int
    detail: str  # for unresolvable, killed and failed: a sentence saying why


_service = Service(
    "json-schema", startup=f"{__name__}:_start", startup_limits=Limits(cpu_s=STARTUP_LIMIT_S, stall_s=STARTUP_LIMIT_S)
)


def has_patterns(schema: object) -> bool:
    """Whether the schema holds a regular expression jsonschema would run (its data keywords aside)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if _PATTERN_KEYWORDS & node.keys():
                return True
            stack.extend(value for key, value in node.items() if key not in _DATA)
        elif isinstance(node, list):
            stack.extend(node)
    return False


def validate_guarded(schema: dict[str, Any], value: Any, limit_s: float = PATTERN_LIMIT_S) -> Validated:
    """`schemas.violations` of the value, run in the guarded child under a CPU-time limit."""
    result = _service.call(f"{__name__}:_validate_in_child", (schema, value), Limits(cpu_s=limit_s))
    if result.status == "done":
        return result.value  # type: ignore[no-any-return]
    if result.status == "limit":
        return Validated("killed", [], 0, f"the schema check {result.detail} and was killed")
    return Validated("failed", [], 0, f"the schema check could not run: {result.detail}")


# ---- in the child --------------------------------------------------------------------------------------------


def _start() -> str:
    """Import jsonschema once, outside any call's limit."""
    from ocllm.scoring.json_answer import schema  # noqa: F401

    return "jsonschema"


def _validate_in_child(schema: dict[str, Any], value: Any) -> Validated:
    from ocllm.scoring.json_answer import schema as schemas

    try:
        found, left_out = schemas.violations(schemas.validator_of(schema), value)
    except schemas.UNRESOLVABLE as exc:
        return Validated("unresolvable", [], 0, str(exc))
    except RecursionError:
        return Validated("too_deep", [], 0, "")
    return Validated("checked", found, left_out, "")

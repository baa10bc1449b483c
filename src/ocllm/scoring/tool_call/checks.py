"""A call checked against an expected call (rules T4-T6), as BFCL's AST checker checks one: the function's name,
the schema's required parameters present, no parameter the schema or the expected call does not name, each value of
the schema's type and among the acceptable values; several calls matched to the expected ones in any order, one to
one. docs/scoring/tool_call.md says where this differs from BFCL on purpose."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ocllm.scoring.tool_call.decision import ArgumentCheck, CallCheck

# BFCL's standardisation of strings, kept so that verdicts agree: whitespace and , . / - _ * ^ removed, case
# folded, single quotes read as double ("April 1, 2024" = "april 1 2024").
_IGNORED_IN_STRINGS = re.compile(r"[\s,./\-_*^]")
_SHORT = 60
# JSON Schema's types and BFCL's names for them ("dict" is an object, "float" a number, "tuple" an array).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "float": (int, float), "boolean": (bool,),
    "array": (list,), "tuple": (list,), "object": (dict,), "dict": (dict,), "null": (type(None),),
}  # fmt: skip


def parameters_of(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool's name -> its parameters schema (checked when the suite was read)."""
    return {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"


def normal_string(text: str) -> str:
    return _IGNORED_IN_STRINGS.sub("", text).casefold().replace("'", '"')


def same_value(value: Any, acceptable: Any) -> bool:
    """`value` is `acceptable`: numbers as numbers (an int equals its float), strings standardised, lists item by
    item, an object key by key (BFCL's nested form: each key's acceptable values as a list, "" among them = may be
    left out)."""
    if isinstance(value, bool) or isinstance(acceptable, bool):
        return isinstance(value, bool) and isinstance(acceptable, bool) and value == acceptable
    if isinstance(value, int | float) and isinstance(acceptable, int | float):
        return value == acceptable
    if isinstance(value, str) and isinstance(acceptable, str):
        return normal_string(value) == normal_string(acceptable)
    if isinstance(value, list) and isinstance(acceptable, list):
        return len(value) == len(acceptable) and all(same_value(v, a) for v, a in zip(value, acceptable, strict=True))
    if isinstance(value, dict) and isinstance(acceptable, dict):
        if set(value) - set(acceptable):
            return False
        for key, wanted in acceptable.items():
            options = wanted if isinstance(wanted, list) else [wanted]
            if key not in value:
                if "" not in options:
                    return False
            elif not any(same_value(value[key], option) for option in options):
                return False
        return True
    return value is None and acceptable is None


def type_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """Why `value` is not of the schema's type (None: it is, or the schema names no type this checks): an int is a
    number, a bool is no integer; an array's items and an object's properties are checked by their own schemas."""
    named = schema.get("type")
    listed = named if isinstance(named, list) else [named]
    names = [n for n in listed if isinstance(n, str)]
    kinds = [_TYPES[n] for n in names if n in _TYPES]
    if kinds and not any(_is(value, kind) for kind in kinds):
        return f"{short(value)} is {_json_type(value)}, not {' or '.join(names)}"
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for number, item in enumerate(value):
            problem = type_problem(item, items)
            if problem:
                return f"item {number}: {problem}"
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, dict):
        for key, item in value.items():
            if isinstance(properties.get(key), dict) and (problem := type_problem(item, properties[key])):
                return f"{key!r}: {problem}"
    return None


def _is(value: Any, kind: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kind
    return isinstance(value, kind)


def _json_type(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)  # fmt: skip


def check_call(call: CallCheck, expected: Mapping[str, Any] | None, expected_index: int | None,
               schemas: Mapping[str, Mapping[str, Any]]) -> CallCheck:  # fmt: skip
    """`call` with its checks against `expected` (None: no expected call to set it against; its name is checked)."""
    if call.problem in ("invalid_arguments_json", "arguments_not_an_object", "not_a_call"):
        return msgspec.structs.replace(call, expected_index=expected_index, ok=False)
    if call.name is None or call.name not in schemas:
        known = ", ".join(sorted(schemas)) or "none"
        return msgspec.structs.replace(call, expected_index=expected_index, ok=False, problem="unknown_function",
                                       said=f"{call.name!r} is none of the task's tools ({known})")  # fmt: skip
    if expected is None:
        return msgspec.structs.replace(call, ok=False, said=f"{call.name!r} is a tool, but no call was expected here")
    if call.name != expected["name"]:
        return msgspec.structs.replace(call, expected_index=expected_index, ok=False, problem="wrong_function",
                                       said=f"{call.name!r} called where {expected['name']!r} was expected")
    schema = schemas[call.name]
    properties = schema.get("properties") or {}
    required = [p for p in schema.get("required") or [] if isinstance(p, str)]
    acceptable: Mapping[str, list[Any]] = expected.get("arguments") or {}
    arguments = call.arguments or {}
    checks: list[ArgumentCheck] = []
    for name in required:
        if name not in arguments:
            checks.append(ArgumentCheck(name=name, given=False, ok=False, problem="missing_required",
                                        said="required by the schema, not given"))  # fmt: skip
    for name, value in arguments.items():
        checks.append(_argument(name, value, properties, acceptable))
    for name, options in acceptable.items():
        if name in arguments or name in required:
            continue
        if "" in options:
            checks.append(ArgumentCheck(name=name, given=False, ok=True, said='optional ("" is acceptable): left out'))
        else:
            checks.append(ArgumentCheck(name=name, given=False, ok=False, problem="missing",
                                        said=f"not given; expected one of {short(options)}"))  # fmt: skip
    ok = all(c.ok for c in checks)
    bad = [c for c in checks if not c.ok]
    said = (f"{call.name}: every argument as expected ({len(checks)} checked)" if ok else
            f"{call.name}: {len(bad)} argument(s) not as expected ({', '.join(c.name for c in bad)})")  # fmt: skip
    return msgspec.structs.replace(call, expected_index=expected_index, ok=ok, said=said, argument_checks=checks)


def _argument(
    name: str, value: Any, properties: Mapping[str, Any], acceptable: Mapping[str, list[Any]]
) -> ArgumentCheck:
    if name not in properties:
        return ArgumentCheck(name=name, given=True, value=value, ok=False, problem="unknown_parameter",
                             said="the tool's schema has no such parameter")  # fmt: skip
    if name not in acceptable:
        return ArgumentCheck(name=name, given=True, value=value, ok=False, problem="unexpected_parameter",
                             said="a parameter of the tool, but the expected call does not give it")  # fmt: skip
    schema = properties[name] if isinstance(properties[name], dict) else {}
    problem = type_problem(value, schema)
    if problem:
        return ArgumentCheck(name=name, given=True, value=value, ok=False, problem="wrong_type", said=problem)
    options = acceptable[name]
    if any(same_value(value, option) for option in options):
        return ArgumentCheck(name=name, given=True, value=value, ok=True,
                             said=f"{short(value)} is among {short(options)}")  # fmt: skip
    return ArgumentCheck(name=name, given=True, value=value, ok=False, problem="wrong_value",
                         said=f"{short(value)} is none of {short(options)}")  # fmt: skip


def match(fits: list[list[bool]], expected: int) -> list[int | None]:
    """For each call, the expected call it is matched to (None: none), the most calls matched one to one (Kuhn's
    augmenting paths: BFCL takes the first fit, which can miss a matching that exists)."""
    owner: list[int | None] = [None] * expected

    def place(call: int, seen: set[int]) -> bool:
        for target in range(expected):
            if fits[call][target] and target not in seen:
                seen.add(target)
                holder = owner[target]
                if holder is None or place(holder, seen):
                    owner[target] = call
                    return True
        return False

    for call in range(len(fits)):
        place(call, set())
    placed: list[int | None] = [None] * len(fits)
    for target, taker in enumerate(owner):
        if taker is not None:
            placed[taker] = target
    return placed

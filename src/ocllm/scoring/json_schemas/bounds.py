"""What a schema may be before it is used (docs/lanes.md, "Bounds on suites"): at most MAX_SCHEMA_VALUES JSON
values holding at most MAX_SCHEMA_CHARS characters, and no reference cycle that a validator would follow for ever
without going one level into the value.

The size bound comes first because `check_schema` costs about 0.2 ms of CPU per property (a schema of 100,000
properties took 2 minutes on a loaded machine before the first request); the count stops as soon as it passes the
bound, so an absurd schema costs no more than a reasonable one to refuse.

A reference cycle is harmless when it passes through a keyword that applies its schema to a part of the value
(`properties`, `items`, ...): each turn goes one level deeper into a finite value (a tree's `children` items
`{"$ref": "#"}`). It never ends when every step applies to the same value: `{"$ref": "#"}` itself, two `$defs`
that refer to each other, a schema in its own `allOf`. jsonschema then recurses until Python's recursion limit,
on a one-level answer, and the verdict would say nothing about the answer; such a schema is refused when the suite
is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import referencing
import referencing.exceptions

if TYPE_CHECKING:
    # What `Registry.resolver` gives: referencing exports no name for it, and its own modules take it from _core.
    from referencing._core import Resolver

# Every JSON value of the schema counts once (an object, each of its values, each array item, each string...): a
# property `{"type": "string"}` is 2. 10,000 is 50 times a large BFCL tool and twice the 5,000 properties OpenAI's
# structured outputs accept; check_schema takes about 0.6 s of CPU at the bound.
MAX_SCHEMA_VALUES = 10_000
# The characters of all its strings and keys: the count of values leaves one long string unbounded, and a string
# costs by its length. A `pattern` is compiled by check_schema (about 1.2 us of CPU a character: a 10-million-
# character pattern took 12 s before the first request, and again in every guarded validation), and a tool's text
# travels in every request. 100,000 is many times a BFCL task's tools (a few thousand characters) and takes about
# 0.13 s to compile as one pattern.
MAX_SCHEMA_CHARS = 100_000

# Keywords whose subschemas apply to the same value as the schema they stand in (JSON Schema's in-place
# applicators, drafts 3 to 2020-12). Any other subschema applies to a part of the value, or to none.
_IN_PLACE_ONE = ("not", "if", "then", "else", "extends", "disallow")
# Draft 3's `type` and `disallow` may list schemas among type names.
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf", "extends", "type", "disallow")
_IN_PLACE_BY_NAME = ("dependentSchemas", "dependencies")
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
# Values that are data, not schemas: an object inside them is never a subschema.
_DATA = frozenset({"enum", "const", "default", "examples"})


def size_problem(schema: object, what: str = "the schema holds") -> str | None:
    """Why `schema` is too large to check, if it is (`what` the sentence's subject and verb)."""
    values, chars = count_values(schema, MAX_SCHEMA_VALUES)
    if values > MAX_SCHEMA_VALUES:
        return f"{what} more than {MAX_SCHEMA_VALUES:,} JSON values ({_BOUND})"
    if chars > MAX_SCHEMA_CHARS:
        return f"{what} more than {MAX_SCHEMA_CHARS:,} characters in its strings and keys ({_BOUND})"
    return None


_BOUND = "a bound on suites' schemas: docs/lanes.md, 'Bounds on suites'"


def count_values(node: object, limit: int) -> tuple[int, int]:
    """The JSON values in `node`, counted up to `limit` + 1 (the count stops there, so that an absurd schema costs
    no more to refuse than one at the bound), and the characters of the strings and keys counted so far."""
    count = chars = 0
    stack = [node]
    while stack and count <= limit:
        value = stack.pop()
        count += 1
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, dict):
            chars += sum(len(key) for key in value if isinstance(key, str))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count, chars


def cycle_problem(schema: dict[str, Any], resolver: Resolver[Any]) -> str | None:
    """Why a validator of `schema` would recurse for ever on any value, if it would: a cycle of references and
    in-place applicators. `resolver` resolves the schema's own references (`#...`); a reference it cannot resolve
    is left out (schema_problem refuses those)."""
    nodes = {id(node): (node, where) for node, where in _subschemas(schema, "")}
    edges: dict[int, list[tuple[int, str]]] = {}
    for key, (node, where) in nodes.items():
        edges[key] = [(id(target), how) for target, how in _in_place(node, where, resolver) if id(target) in nodes]
    # Depth-first search without recursion (a schema may be deep): white 0, on the path 1, done 2.
    state: dict[int, int] = dict.fromkeys(nodes, 0)
    for start in nodes:
        if state[start]:
            continue
        state[start] = 1
        path: list[tuple[int, Iterator[tuple[int, str]], str]] = [(start, iter(edges[start]), "")]
        while path:
            key, pending, _ = path[-1]
            step = next(pending, None)
            if step is None:
                state[key] = 2
                path.pop()
                continue
            target, how = step
            if state[target] == 1:
                loop = [h for _, _, h in path[[k for k, _, _ in path].index(target) + 1 :]] + [how]
                return (
                    f"the schema refers to itself without going into the value ({' -> '.join(loop)}): a validator "
                    "would recurse for ever on any answer"
                )
            if state[target] == 0:
                state[target] = 1
                path.append((target, iter(edges[target]), how))
    return None


def _subschemas(node: Any, where: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object of the schema that may be a subschema, with its JSON pointer (data keywords left out)."""
    stack: list[tuple[Any, str]] = [(node, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, dict):
            yield value, at
            stack.extend((sub, f"{at}/{key}") for key, sub in value.items() if key not in _DATA)
        elif isinstance(value, list):
            stack.extend((sub, f"{at}/{index}") for index, sub in enumerate(value))


def _in_place(
    node: dict[str, Any], where: str, resolver: Resolver[Any]
) -> Iterator[tuple[Any, str]]:
    """The schemas applied to the same value as `node`, each with how it is reached ("$ref '#' at /")."""
    for keyword in _REFERENCES:
        ref = node.get(keyword)
        if isinstance(ref, str) and ref.startswith("#"):
            try:
                target = resolver.lookup(ref).contents
            except referencing.exceptions.Unresolvable:
                continue
            yield target, f"{keyword} {ref!r} at {where or '/'}"
    for keyword in _IN_PLACE_ONE:
        if isinstance(node.get(keyword), dict):
            yield node[keyword], f"{keyword} at {where or '/'}"
    for keyword in _IN_PLACE_MANY:
        if isinstance(node.get(keyword), list):
            for index, sub in enumerate(node[keyword]):
                if isinstance(sub, dict):
                    yield sub, f"{keyword}/{index} at {where or '/'}"
    for keyword in _IN_PLACE_BY_NAME:
        if isinstance(node.get(keyword), dict):
            for name, sub in node[keyword].items():
                if isinstance(sub, dict):
                    yield sub, f"{keyword}/{name} at {where or '/'}"

"""A JSON Schema as the rooms that carry one use it (a json task's `schema`, a tool_call task's tools' parameters):
checked once when the suite is read (its size bound, its draft's meta-schema, a known `$schema`, references that
resolve inside it, no reference cycle in place), and a validator that never fetches. Never a network call:
references are followed inside the schema (and to the meta-schemas jsonschema ships) only; any other is refused
when the suite is read (rule J6). Several rooms use it, so it is no room's own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as META_SCHEMAS

from ocllm.scoring.json_schemas.bounds import cycle_problem, size_problem

if TYPE_CHECKING:
    # What `Registry.resolver` gives: referencing exports no name for it, and its own modules take it from _core.
    from referencing._core import Resolver

DEFAULT: type[Validator] = jsonschema.Draft202012Validator  # a schema without `$schema` is read as Draft 2020-12
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
MESSAGE_LIMIT = 300  # a message of jsonschema's names the value, which may be large


_DRAFTS: dict[type[Validator], str] = {
    jsonschema.Draft3Validator: "3", jsonschema.Draft4Validator: "4", jsonschema.Draft6Validator: "6",
    jsonschema.Draft7Validator: "7", jsonschema.Draft201909Validator: "2019-09",
    jsonschema.Draft202012Validator: "2020-12",
}  # fmt: skip


def draft_of(validator: type[Validator]) -> str:
    """ "2020-12", "7", ...: the draft a validator class implements."""
    return _DRAFTS.get(validator, validator.__name__)


def validator_class(schema: dict[str, Any]) -> type[Validator] | None:
    """The validator its `$schema` names (Draft 2020-12 without one); None for a `$schema` jsonschema does not know."""
    if "$schema" not in schema:
        return DEFAULT
    # jsonschema is untyped (Any to the checker): it gives the class of the draft `$schema` names, or the default.
    found: type[Validator] | None = jsonschema.validators.validator_for(schema, default=None)
    return found


def schema_problem(schema: object) -> str | None:
    """What makes `schema` unusable (larger than the bound on schemas, not a JSON Schema by its draft's meta-schema,
    an unknown `$schema`, a reference that would be fetched or that does not resolve, a reference cycle that never
    goes into the value), or None."""
    if not isinstance(schema, dict):
        return "a JSON Schema object is expected"
    if (too_large := size_problem(schema)) is not None:
        return too_large  # before check_schema, whose cost grows with the schema
    cls = validator_class(schema)
    if cls is None:
        return f"unknown $schema {schema['$schema']!r} (drafts 3, 4, 6, 7, 2019-09 and 2020-12 are known)"
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(map(str, exc.absolute_path))
        return f"not a valid JSON Schema (draft {draft_of(cls)}): {short(exc.message)}" + (
            f" at /{where}" if where else ""
        )
    nested_ids = any(where for where, _ in _keyword_values(schema, ("$id", "id")))
    resolver = _offline_resolver(schema, cls)
    for where, ref in _keyword_values(schema, _REF_KEYWORDS):
        if not isinstance(ref, str):
            continue
        if not ref.startswith("#") and ref.rstrip("#") not in _META_URIS:
            return (
                f"$ref {ref!r} at {where or '/'} is not followed: ocllm resolves references inside the schema only "
                "(#/$defs/..., #anchor) and never fetches one"
            )
        if ref.startswith("#") and not nested_ids:
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                return f"$ref {ref!r} at {where or '/'} does not resolve inside the schema"
    # With nested `$id`s a reference resolves against its own resource, which this resolver does not follow.
    return None if nested_ids else cycle_problem(schema, resolver)


def validator_of(schema: dict[str, Any], cls: type[Validator] | None = None) -> Validator:
    """A validator that never fetches: its registry holds the meta-schemas jsonschema ships and nothing else (the
    default one would download an unknown reference)."""
    cls = cls or validator_class(schema) or DEFAULT
    return cls(schema, registry=referencing.Registry())


def _offline_resolver(schema: dict[str, Any], cls: type[Validator]) -> Resolver[Any]:
    """A resolver of references inside the schema itself (where a reference without `$id`s in between lands)."""
    specification = referencing.jsonschema.specification_with(
        str(cls.META_SCHEMA.get("$schema", "")), default=referencing.jsonschema.DRAFT202012
    )
    base = "urn:ocllm:schema"
    # with_resources, which with_resource calls with its one pair: with_resource has no return type (Any to mypy).
    registry = referencing.Registry().with_resources([(base, specification.create_resource(schema))])
    return registry.resolver(base)


def short(message: str) -> str:
    """A message of jsonschema's, cut to MESSAGE_LIMIT characters."""
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"


def _keyword_values(node: Any, keywords: tuple[str, ...], where: str = "") -> Iterator[tuple[str, Any]]:
    """(where, value) of every occurrence of the keywords in the schema, `where` a JSON pointer ("" for the root)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keywords:
                yield where, value
            yield from _keyword_values(value, keywords, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _keyword_values(value, keywords, f"{where}/{index}")


_META_URIS = frozenset(uri.rstrip("#") for uri in META_SCHEMAS)

"""What an instruction check is: IFEval's instruction id, the keyword arguments it takes, and the function that
measures a text against them. Each check says what it measured (`words: 312, needed at least 300`), so a verdict
is never a bare yes or no.

A check is pure and deterministic: no I/O, no network, no downloaded data (language detection is seeded), so the
same text and arguments give the same verdict on every machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Measured(NamedTuple):
    """A check's verdict on one text, and what it measured, in words a reader checks by eye."""

    followed: bool
    measured: str


@dataclass(frozen=True)
class Param:
    """One keyword argument of an instruction, as IFEval's input_data.jsonl names it."""

    name: str
    kinds: tuple[type, ...]  # the JSON types it may have (int, str, list, ...)
    required: bool = True
    choices: tuple[str, ...] = ()  # the values a text argument may take ("less than", "at least"), when closed
    minimum: int | None = None  # the least a whole-number argument may be


# The relations IFEval's comparisons take ("relation", "let_relation", "capital_relation").
RELATIONS = ("less than", "at least")


@dataclass(frozen=True)
class Check:
    id: str  # "length_constraints:number_words"
    describe: str  # what the instruction asks, in a few words ("a number of words")
    params: tuple[Param, ...]
    run: Callable[[str, Mapping[str, Any]], Measured]  # (the answer's text, the checked kwargs) -> verdict
    # Arguments IFEval's data carries for this instruction but that the check does not read (kept, not refused).
    ignored: tuple[str, ...] = field(default=())
    # What else is wrong with arguments of the right kinds (an empty keyword, a paragraph past the last), or None.
    validate: Callable[[Mapping[str, Any]], str | None] | None = None


def present(check: Check, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments given: without nulls (Hugging Face's copy of IFEval writes every argument of every
    instruction, null where unused), and without an empty value (`[]`, `""`, `0`) of an argument this instruction
    does not take, which IFEval's and lm-eval's readers drop too. Anything else stays, to be checked."""
    known = {p.name for p in check.params} | set(check.ignored)
    return {k: v for k, v in kwargs.items() if v is not None and (k in known or v)}


def checked_kwargs(check: Check, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The instruction's arguments checked against its params: a problem raises ValueError with one line saying
    it. Arguments absent by `present` are absent; any other argument the instruction does not take is refused."""
    given = present(check, kwargs)
    known = {p.name for p in check.params} | set(check.ignored)
    unknown = sorted(set(given) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        raise ValueError(f"{check.id} takes no argument {unknown[0]!r} (it takes: {takes})")
    out: dict[str, Any] = {}
    for param in check.params:
        if param.name not in given:
            if param.required:
                raise ValueError(f"{check.id} needs the argument {param.name!r}")
            continue
        value = given[param.name]
        if int in param.kinds and isinstance(value, float) and value.is_integer():
            value = int(value)  # 3.0 for 3: a copy of the data written through pandas
        if isinstance(value, bool) or not isinstance(value, param.kinds):
            names = " or ".join(k.__name__ for k in param.kinds)
            raise ValueError(f"{check.id}: argument {param.name!r} is {value!r}, not {names}")
        if param.choices and value not in param.choices:
            raise ValueError(
                f"{check.id}: argument {param.name!r} is {value!r}, not one of {', '.join(map(repr, param.choices))}"
            )
        if param.minimum is not None and isinstance(value, int) and value < param.minimum:
            raise ValueError(f"{check.id}: argument {param.name!r} is {value}, less than {param.minimum}")
        out[param.name] = value
    problem = check.validate(out) if check.validate is not None else None
    if problem is not None:
        raise ValueError(f"{check.id}: {problem}")
    return out


def compare(count: int, relation: str, wanted: int) -> bool:
    """IFEval's two relations: "less than" is count < wanted, "at least" is count >= wanted."""
    return count < wanted if relation == "less than" else count >= wanted

"""What a room gives the run report's view of one task: its own evidence as typed blocks (lines, the options with
their marks, the statements found, tables), which the report's templates draw without knowing the type.

The room reads its own fields of the task's record (a mapping, as a document's JSON says it) and says what they
mean; the report draws the blocks as they come, the same way for every type (docs/architecture.md, "Task types").
Everything here is plain text: the templates escape it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Tag(NamedTuple):
    """A word drawn beside a statement ("hedged", a reading rule); `warn`: drawn as a warning."""

    text: str
    warn: bool = False


@dataclass(frozen=True)
class Statement:
    """A statement the scorer found in the answer, as the view lists it and marks it in the raw text."""

    kind: str
    method: str
    region: str
    text: str
    deciding: bool
    letters: list[str] = field(default_factory=list)  # the letters it names (MCQ); [] for a statement of a value
    stated: str | None = None  # the value it states (math), with its normal form beside it
    tags: list[Tag] = field(default_factory=list)
    # Where it stands in the raw output, to mark it there: the field ("content", "reasoning") and its span. None
    # where the record does not say (the statement is listed, not marked).
    raw_field: str | None = None
    start: int | None = None
    end: int | None = None


class MarkedOption(NamedTuple):
    """One option of a task that offers some, with its label; the expected one and a wrong pick marked."""

    letter: str
    text: str
    expected: bool
    wrong_pick: bool


class EvidenceTable(NamedTuple):
    """A table of a task's own evidence (the header's first column a label, the others figures or words)."""

    title: str
    header: list[str]
    rows: list[list[str]]


class Listing(NamedTuple):
    """A text of the task's own drawn verbatim, its lines kept (a program that ran, what it printed); `note`: what
    the reader must know of it (where it was cut); `language`: what it is written in, for a renderer that marks
    it ("python"), else ""."""

    title: str
    text: str
    note: str | None = None
    language: str = ""


@dataclass(frozen=True)
class TaskView:
    """A task's own evidence in blocks: label/text facts drawn among the common ones, its options, the statements
    found (with their spans), any tables and any listings (texts drawn verbatim). A block a type does not have stays
    empty and is not drawn."""

    facts: list[tuple[str, str]] = field(default_factory=list)
    options: list[MarkedOption] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    tables: list[EvidenceTable] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)


def statement(
    candidate: Mapping[str, Any],
    deciding: bool,
    *,
    letters: Sequence[str] = (),
    stated: str | None = None,
    own_tags: Sequence[Tag] = (),
) -> Statement:
    """A candidate of a decision record as a Statement: the room gives what its statements name (letters or a
    value) and its own tags; where it was read from and the reading rules that shaped it are every room's."""
    tags = list(own_tags)
    if candidate.get("field") and candidate.get("field") != candidate.get("region"):
        tags.append(Tag(f"in the {candidate['field']} field"))
    tags += [Tag(str(r)) for r in candidate.get("reading") or []]
    start, end = candidate.get("start"), candidate.get("end")
    return Statement(
        kind=str(candidate.get("kind", "?")),
        method=str(candidate.get("method", "?")),
        region=str(candidate.get("region", "?")),
        text=str(candidate.get("text", "")),
        deciding=deciding,
        letters=list(letters),
        stated=stated,
        tags=tags,
        raw_field=str(candidate["field"]) if candidate.get("field") else None,
        start=start if isinstance(start, int) else None,
        end=end if isinstance(end, int) else None,
    )


def candidates_of(record: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], bool]]:
    """The statements a decision record keeps, each with whether it is the one that decided."""
    decided = record.get("decided_by")
    return [(c, i == decided) for i, c in enumerate(record.get("candidates") or [])]

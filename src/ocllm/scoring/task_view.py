"""What a room gives the run report's view of one task: its own evidence as typed blocks (lines, the options with
their marks, the statements found, tables), which the report's templates draw without knowing the type.

The room reads its own fields of the task's record (decoded into its structs: scoring/scored.py) and says what they
mean; the report draws the blocks as they come, the same way for every type (docs/architecture.md, "Task types").
Everything here is plain text: the templates escape it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, TypeVar


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


class Found(Protocol):
    """A statement a room's reading found, as its candidate struct holds it (MCQ's Candidate, math's MathCandidate):
    what it is, where it stands in which raw field, and the reading rules that shaped it."""

    @property
    def kind(self) -> str: ...

    @property
    def method(self) -> str: ...

    @property
    def region(self) -> str: ...  # the region it was read in: the visible answer ("content") or the reasoning

    @property
    def field(self) -> str: ...  # the raw field `start` and `end` index into

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def reading(self) -> Sequence[str]: ...


def statement(
    candidate: Found,
    deciding: bool,
    *,
    letters: Sequence[str] = (),
    stated: str | None = None,
    own_tags: Sequence[Tag] = (),
) -> Statement:
    """A candidate of a decision as a Statement: the room gives what its statements name (letters or a value) and
    its own tags; where it was read from and the reading rules that shaped it are every room's."""
    tags = list(own_tags)
    if candidate.field and candidate.field != candidate.region:
        tags.append(Tag(f"in the {candidate.field} field"))
    tags += [Tag(str(r)) for r in candidate.reading]
    return Statement(
        kind=candidate.kind,
        method=candidate.method,
        region=candidate.region,
        text=candidate.text,
        deciding=deciding,
        letters=list(letters),
        stated=stated,
        tags=tags,
        raw_field=candidate.field or None,
        start=candidate.start,
        end=candidate.end,
    )


_C = TypeVar("_C")


def candidates_of(candidates: Sequence[_C], decided_by: int | None) -> list[tuple[_C, bool]]:
    """The statements a decision keeps, each with whether it is the one that decided."""
    return [(c, i == decided_by) for i, c in enumerate(candidates)]

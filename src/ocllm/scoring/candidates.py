"""The pieces every statement finder shares: what it knows of the task, and how a found statement
becomes a Candidate (its kind, method, rank, and the reading rules that shaped it)."""

from __future__ import annotations

import bisect
import functools
import re
from typing import Literal, NamedTuple

from ocllm.models import Candidate
from ocllm.scoring.regions import Piece
from ocllm.scoring.values import ValueKey, value_key

Region = Literal["content", "reasoning"]

# The kinds of statement, strongest first. The rank is what "take the strongest kind" compares.
KIND_RANK: dict[str, int] = {
    "final_colon": 1,
    "final_answer": 2,
    "answer": 3,
    "boxed": 4,
    "option_claim": 5,
    "option_line": 6,
    "bare": 7,
}
# Hedged statements ("the answer would be (A)") rank below every firm kind.
HEDGED_RANK = 10


class TaskContext(NamedTuple):
    """What statement-finding needs to know about the task."""

    options: list[str]
    valid: frozenset[str]  # the option letters
    placeholders: frozenset[str]  # letters the prompt uses as placeholders, none of them an option
    longest_option: int = 0  # no stated value much longer than this can equal an option

    @property
    def option_keys(self) -> tuple[ValueKey, ...]:
        """The options' texts as values are compared; computed only when a value is stated."""
        return _option_keys(tuple(self.options))


@functools.lru_cache(maxsize=4096)
def _option_keys(options: tuple[str, ...]) -> tuple[ValueKey, ...]:
    return tuple(value_key(o) for o in options)


class Found(NamedTuple):
    letters: list[str]
    start: int  # statement start in the piece's text
    end: int  # statement end in the piece's text
    value: str | None = None  # the stated value when the letters came from matching option texts


_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _fences(text: str) -> list[int]:
    if "```" not in text and "~~~" not in text:
        return []
    return [m.start() for m in _FENCE.finditer(text)]


def inside_code_block(text: str, pos: int) -> bool:
    """Is `pos` inside a fenced Markdown code block (an odd number of fences before it)?"""
    fences = _fences(text)  # cached per text: this is asked once per statement, and a text may hold thousands
    return bool(fences) and bisect.bisect_right(fences, pos) % 2 == 1


def rank(candidate: Candidate) -> int:
    return HEDGED_RANK if candidate.hedged else KIND_RANK[candidate.kind]


def make_candidate(
    found: Found, kind: str, region: Region, piece: Piece, ctx: TaskContext, *, hedged: bool = False
) -> Candidate:
    letters = found.letters
    if found.value is not None:
        method = "option_text"
    elif kind in ("option_line", "option_claim"):
        method = kind
    else:
        method = f"{kind}_letter"
    in_code = inside_code_block(piece.text, found.start)
    # Code is not prose: "print('FINAL: A')" states nothing, unless nothing outside code does.
    hedged = hedged or in_code
    out_of_range = any(letter not in ctx.valid for letter in letters)
    placeholder = out_of_range and all(letter in ctx.placeholders for letter in letters)
    text = piece.text[found.start : found.end]
    return Candidate(
        letter=letters[0] if len(letters) == 1 else None,
        letters=letters,
        kind=kind,
        method=method,
        region=region,
        field=piece.field,
        start=piece.offset + found.start,
        end=piece.offset + found.end,
        text=text,
        hedged=hedged,
        out_of_range=out_of_range,
        placeholder=placeholder,
        value=found.value,
        reading=reading_tags(text, kind, found, hedged=hedged, placeholder=placeholder)
        + (["in_code_block"] if in_code else []),
    )


_LATEX_SIGNS = ("\\(", "\\[", "$", "\\text", "\\math", "\\ ")


def reading_tags(text: str, kind: str, found: Found, *, hedged: bool, placeholder: bool) -> list[str]:
    """Name the reading rules that made this statement what it is, for the audit."""
    tags = []
    if any(sign in text for sign in _LATEX_SIGNS):
        tags.append("latex")
    if kind != "boxed" and "\\boxed" in text:
        tags.append("box_after_marker")
    if found.value is not None:
        tags.append("option_text")
    if kind in ("final_colon", "final_answer", "answer") and "\n" in text and len(found.letters) > 1:
        tags.append("several_option_lines")
    if hedged:
        tags.append("hedged")
    if placeholder:
        tags.append("placeholder_echo")
    return tags

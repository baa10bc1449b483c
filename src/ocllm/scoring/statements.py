"""Find every final-answer statement in a region.

A statement is a marker ("FINAL:", "Final answer:", "The answer is", "\\boxed{") followed by a
letter, or a visible answer that is nothing but a letter. Each statement becomes a Candidate with
its kind and its span in the raw field, whether or not it ends up deciding anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from ocllm.models import Candidate
from ocllm.scoring.letters import LetterValue, read_letters, skip_to_value
from ocllm.scoring.regions import Piece

# The kinds of statement, strongest first. The rank is what "take the strongest kind" compares.
KIND_RANK: dict[str, int] = {
    "final_colon_letter": 1,
    "final_answer_letter": 2,
    "answer_letter": 3,
    "boxed_letter": 4,
    "bare_letter": 5,
}
# Hedged statements ("the answer would be (A)") rank below every firm kind.
HEDGED_RANK = 10

_WS = r"(?:\s|\\ |~)+"
_COLON_OR_IS = r"(?:[ \t]*[*_]*[ \t]*:|" + _WS + r"is\b[ \t]*[*_]*[ \t]*:?)"
_MARKERS = re.compile(
    "|".join(
        [
            r"(?P<final_colon_letter>\bfinal[ \t]*[*_]*[ \t]*:)",
            r"(?P<final_answer_letter>\bfinal" + _WS + r"answer" + _COLON_OR_IS + ")",
            r"(?P<hedged>\b(?:(?:correct|best|right)"
            + _WS
            + r")?answer"
            + _WS
            + r"(?:(?:would|should|might|may|could|must)"
            + _WS
            + r"be"
            + r"|(?:is|seems)(?:"
            + _WS
            + r"to"
            + _WS
            + r"be)?"
            + _WS
            + r"(?:most"
            + _WS
            + r")?(?:likely|probably|possibly|perhaps))\b[ \t]*:?)",
            r"(?P<answer_letter>\b(?:(?:(?:correct|best|right)"
            + _WS
            + r")?answer"
            + r"|(?:correct|best|right)"
            + _WS
            + r"(?:option|choice))"
            + _COLON_OR_IS
            + ")",
            r"(?P<boxed_letter>\\boxed[ \t]*\{)",
        ]
    ),
    re.IGNORECASE,
)


# Every marker begins with one of these words. Finding them with str.find on a lower-cased copy and
# trying the marker pattern only there is ~20x faster than letting the regex scan long reasoning.
_MARKER_WORDS = ("final", "answer", "boxed", "correct", "best", "right")


def _marker_matches(text: str) -> Iterator[re.Match[str]]:
    lower = text.lower()
    if len(lower) != len(text):  # a few Unicode letters change length when lower-cased
        yield from _MARKERS.finditer(text)
        return
    starts: set[int] = set()
    for word in _MARKER_WORDS:
        at = lower.find(word)
        while at != -1:
            starts.add(at - 1 if word == "boxed" and at and text[at - 1] == "\\" else at)
            at = lower.find(word, at + len(word))
    end = 0
    for start in sorted(starts):
        if start < end:
            continue
        m = _MARKERS.match(text, start)
        if m is not None:
            end = m.end()
            yield m


def letters_in_range(n_options: int) -> frozenset[str]:
    return frozenset(chr(ord("A") + i) for i in range(n_options))


def find_statements(
    pieces: list[Piece], region: Literal["content", "reasoning"], valid: frozenset[str]
) -> list[Candidate]:
    """All marker statements in the pieces of one region, in reading order."""
    found: list[Candidate] = []
    for piece in pieces:
        text = piece.text
        consumed = 0
        for m in _marker_matches(text):
            if m.start() < consumed:
                continue  # part of a statement already read ("Final answer: \boxed{B}")
            kind = m.lastgroup or ""
            if kind == "boxed_letter":
                value = _read_box(text, m.end())
            else:
                value = read_letters(text, skip_to_value(text, m.end()), explicit_marker=True)
            if value is None:
                continue
            consumed = value.end
            hedged = kind == "hedged"
            found.append(
                _candidate(
                    value,
                    "answer_letter" if hedged else kind,
                    region,
                    piece,
                    m.start(),
                    valid,
                    hedged=hedged,
                )
            )
    return found


def find_bare_letter(pieces: list[Piece], valid: frozenset[str]) -> Candidate | None:
    """A visible region that is nothing but one letter: "D", "(D)", "**D**", "D."."""
    texts = [p for p in pieces if p.text.strip()]
    if len(texts) != 1:
        return None
    piece = texts[0]
    stripped = piece.text.strip()
    if len(stripped) > 24:
        return None
    lead = piece.text.index(stripped[0])
    value = read_letters(stripped, 0, explicit_marker=False)
    if value is None or len(value.letters) != 1:
        return None
    if stripped[value.end :].strip() not in ("", "."):
        return None
    return _candidate(value, "bare_letter", "content", piece, lead, valid, local_offset=lead)


def rank(candidate: Candidate) -> int:
    return HEDGED_RANK if candidate.hedged else KIND_RANK[candidate.method]


def _read_box(text: str, pos: int) -> LetterValue | None:
    """The inside of \\boxed{...} must be a letter (wrapped or followed by option text), not math."""
    depth = 1
    close = pos
    while close < len(text) and depth:
        if text[close] == "{":
            depth += 1
        elif text[close] == "}":
            depth -= 1
        close += 1
    if depth:
        return None
    inner = text[pos : close - 1]
    lead = len(inner) - len(inner.lstrip())
    value = read_letters(inner, lead, explicit_marker=True)
    if value is None:
        return None
    rest = inner[value.end :].lstrip()
    if rest and rest[0] not in ".):":
        return None
    return LetterValue(value.letters, pos + value.start, close, True)


def _candidate(
    value: LetterValue,
    method: str,
    region: Literal["content", "reasoning"],
    piece: Piece,
    start: int,
    valid: frozenset[str],
    *,
    hedged: bool = False,
    local_offset: int = 0,
) -> Candidate:
    end = value.end + local_offset
    return Candidate(
        letter=value.letters[0] if len(value.letters) == 1 else None,
        letters=value.letters,
        method=method,
        region=region,
        field=piece.field,
        start=piece.offset + start,
        end=piece.offset + end,
        text=piece.text[start:end],
        hedged=hedged,
        out_of_range=any(letter not in valid for letter in value.letters),
    )

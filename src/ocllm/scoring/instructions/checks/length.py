"""IFEval's `length_constraints` instructions: how many sentences, words and paragraphs an answer has, and the
first word of one paragraph.

Words and sentences are counted by `ocllm.scoring.instructions.text` (IFEval's `\\w+` words; sentences by written
rules where IFEval uses NLTK's downloaded punkt model). Paragraphs are split two ways, as IFEval splits them:
`number_paragraphs` on the markdown divider `***`, `nth_paragraph_first_word` on a blank line (`\\n\\n`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import RELATIONS, Check, Measured, Param, compare
from ocllm.scoring.instructions.text import count_sentences, count_words

_DIVIDER = re.compile(r"\s?\*\*\*\s?")  # IFEval's divider: *** with at most one whitespace character either side
# Where IFEval's first word stops (its punctuation set, plus ":" and ";", see _first_word).
_WORD_STOPS = frozenset(".,?!'\":;")


def _number_sentences(text: str, kwargs: Mapping[str, Any]) -> Measured:
    count = count_sentences(text)
    relation, wanted = kwargs["relation"], kwargs["num_sentences"]
    return Measured(compare(count, relation, wanted), f"sentences: {count}, needed {relation} {wanted}")


def _number_words(text: str, kwargs: Mapping[str, Any]) -> Measured:
    count = count_words(text)
    relation, wanted = kwargs["relation"], kwargs["num_words"]
    return Measured(compare(count, relation, wanted), f"words: {count}, needed {relation} {wanted}")


def _number_paragraphs(text: str, kwargs: Mapping[str, Any]) -> Measured:
    """Exactly `num_paragraphs` pieces between `***` dividers. An empty piece before the first divider or after the
    last is dropped (a divider may open or close the answer); an empty piece between two dividers breaks the
    instruction, as in IFEval (so `******`, two dividers back to back, does)."""
    pieces = _DIVIDER.split(text)
    wanted = kwargs["num_paragraphs"]
    for number, piece in enumerate(pieces[1:-1], start=2):
        if not piece.strip():
            return Measured(False, f"paragraph {number} (split on ***) is empty: two dividers with nothing between")
    found = len(pieces) - (not pieces[0].strip()) - (len(pieces) > 1 and not pieces[-1].strip())
    return Measured(found == wanted, f"paragraphs found: {found} (split on ***), needed {wanted}")


def _first_word(paragraph: str) -> str:
    """A paragraph's first word as IFEval reads it: the first whitespace-separated token without opening quotes,
    up to the first punctuation mark, lower-cased. Unlike IFEval, a colon or semicolon ends the word too, so
    "Summary:" starts with "summary"."""
    token = paragraph.split()[0].lstrip("'\"")
    word = ""
    for char in token:
        if char in _WORD_STOPS:
            break
        word += char
    return word.lower()


def _nth_paragraph_first_word(text: str, kwargs: Mapping[str, Any]) -> Measured:
    """Exactly `num_paragraphs` paragraphs (split on a blank line, empty ones not counted) and paragraph
    `nth_paragraph` starting with `first_word`, ignoring case. Unlike IFEval, paragraph n is the n-th non-empty one:
    IFEval counts the non-empty paragraphs but indexes all of them, so three or more newlines in a row (an empty
    piece) shift its paragraph n onto the wrong one."""
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    wanted, nth = kwargs["num_paragraphs"], kwargs["nth_paragraph"]
    first_word = kwargs["first_word"].strip().lower()
    count = f"paragraphs found: {len(paragraphs)} (split on blank lines), needed {wanted}"
    if nth > len(paragraphs):
        return Measured(False, f"{count}; there is no paragraph {nth}")
    starts = _first_word(paragraphs[nth - 1])
    followed = len(paragraphs) == wanted and starts == first_word
    return Measured(followed, f'{count}; paragraph {nth} starts with "{starts}", needed "{first_word}"')


def _nth_within(kwargs: Mapping[str, Any]) -> str | None:
    # IFEval draws a random paragraph when nth_paragraph is past num_paragraphs; such an instruction cannot be met.
    if kwargs["nth_paragraph"] > kwargs["num_paragraphs"]:
        return f"nth_paragraph {kwargs['nth_paragraph']} is past num_paragraphs {kwargs['num_paragraphs']}"
    if not kwargs["first_word"].strip():
        return "argument 'first_word' is empty"
    return None


CHECKS = [
    Check(
        "length_constraints:number_sentences",
        "a number of sentences",
        (Param("num_sentences", (int,), minimum=0), Param("relation", (str,), choices=RELATIONS)),
        _number_sentences,
    ),
    Check(
        "length_constraints:number_paragraphs",
        "a number of paragraphs split on ***",
        (Param("num_paragraphs", (int,), minimum=1),),
        _number_paragraphs,
    ),
    Check(
        "length_constraints:number_words",
        "a number of words",
        (Param("num_words", (int,), minimum=0), Param("relation", (str,), choices=RELATIONS)),
        _number_words,
    ),
    Check(
        "length_constraints:nth_paragraph_first_word",
        "paragraphs split on blank lines, one starting with a word",
        (
            Param("num_paragraphs", (int,), minimum=1),
            Param("nth_paragraph", (int,), minimum=1),
            Param("first_word", (str,)),
        ),
        _nth_paragraph_first_word,
        validate=_nth_within,
    ),
]

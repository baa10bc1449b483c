"""IFEval's `keywords` instructions: words that must appear, appear a number of times, or must not appear, and a
character that appears a number of times.

As in IFEval, every comparison ignores case; `existence` and `frequency` look for the keyword anywhere (so
"intern" is found in "internship"), `forbidden_words` only as a whole word ("very" is not found in "everyone").
Where IFEval reads a keyword as a regular expression (`re.search(keyword, ...)`), a keyword here is always the
literal text: "c++" or "3.5" mean those characters, not a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import RELATIONS, Check, Measured, Param, compare


def _needed(relation: str, wanted: int) -> str:
    return f"needed {relation} {wanted}"


# IFEval draws random words or a random letter where these are missing or empty (olmo-eval#314 counts such
# draws); here they are refused when the suite is read, so a verdict is always about what the task asked.
def _word_list(name: str) -> Callable[[Mapping[str, Any]], str | None]:
    def validate(kwargs: Mapping[str, Any]) -> str | None:
        value = kwargs[name]
        if not value or not all(isinstance(word, str) and word.strip() for word in value):
            return f"argument {name!r} is {value!r}, not a non-empty list of non-empty texts"
        return None

    return validate


def _keyword(kwargs: Mapping[str, Any]) -> str | None:
    return None if kwargs["keyword"].strip() else "argument 'keyword' is empty"


def _letter(kwargs: Mapping[str, Any]) -> str | None:
    letter = kwargs["letter"].strip()
    return None if len(letter) == 1 else f"argument 'letter' is {kwargs['letter']!r}, not one character"


def _existence(text: str, kwargs: Mapping[str, Any]) -> Measured:
    found: list[str] = []
    missing: list[str] = []
    for keyword in kwargs["keywords"]:
        match = re.search(re.escape(keyword.strip()), text, flags=re.IGNORECASE)
        if match is None:
            missing.append(f'"{keyword}"')
        else:
            found.append(f'"{keyword}" at {match.start()}')
    if missing:
        also = f"; found: {', '.join(found)}" if found else ""
        return Measured(False, f"keyword(s) not found: {', '.join(missing)}{also}")
    return Measured(True, f"found: {', '.join(found)}")


def _frequency(text: str, kwargs: Mapping[str, Any]) -> Measured:
    keyword = kwargs["keyword"].strip()
    # Non-overlapping occurrences anywhere, ignoring case, as IFEval's re.findall counts them.
    count = len(re.findall(re.escape(keyword), text, flags=re.IGNORECASE))
    relation, wanted = kwargs["relation"], kwargs["frequency"]
    measured = f'keyword "{keyword}": {count} times, {_needed(relation, wanted)}'
    return Measured(compare(count, relation, wanted), measured)


def _forbidden_words(text: str, kwargs: Mapping[str, Any]) -> Measured:
    hits: list[tuple[int, str]] = []
    for word in sorted(set(kwargs["forbidden_words"])):
        match = re.search(r"\b" + re.escape(word.strip()) + r"\b", text, flags=re.IGNORECASE)
        if match is not None:
            hits.append((match.start(), word))
    if not hits:
        return Measured(True, "no forbidden word")
    hits.sort()
    return Measured(False, "; ".join(f'forbidden word "{word}" at {at}' for at, word in hits))


def _letter_frequency(text: str, kwargs: Mapping[str, Any]) -> Measured:
    letter = kwargs["letter"].strip().lower()
    relation, wanted = kwargs["let_relation"], kwargs["let_frequency"]
    # Any one character (IFEval's data asks for "#" and "!" too), counted in the lower-cased text.
    count = text.lower().count(letter)
    measured = f'letter "{letter}": {count} times, {_needed(relation, wanted)}'
    return Measured(compare(count, relation, wanted), measured)


CHECKS = [
    Check(
        "keywords:existence", "keywords that must appear", (Param("keywords", (list,)),), _existence,
        validate=_word_list("keywords"),
    ),
    Check(
        "keywords:frequency",
        "a keyword a number of times",
        (
            Param("keyword", (str,)),
            Param("frequency", (int,), minimum=0),
            Param("relation", (str,), choices=RELATIONS),
        ),
        _frequency,
        validate=_keyword,
    ),
    Check(
        "keywords:forbidden_words", "words that must not appear", (Param("forbidden_words", (list,)),),
        _forbidden_words, validate=_word_list("forbidden_words"),
    ),
    Check(
        "keywords:letter_frequency",
        "a letter a number of times",
        (
            Param("letter", (str,)),
            Param("let_frequency", (int,), minimum=0),
            Param("let_relation", (str,), choices=RELATIONS),
        ),
        _letter_frequency,
        validate=_letter,
    ),
]

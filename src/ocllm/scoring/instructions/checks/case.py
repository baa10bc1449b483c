"""IFEval's `change_case` instructions: words in all capitals, and an answer all in capitals or all in lowercase,
in English (docs/scoring/instructions.md, "Group B checks").

Words in capitals. IFEval tokenizes with NLTK's word tokenizer and counts the tokens Python calls upper case
(`str.isupper`: at least one cased letter, none lowercase). We use no NLTK (no data to download): a word is a run
of word characters (`\\w`), runs joined by a hyphen or a dot staying one word (`WELL-KNOWN`, `COVID-19`, `U.S`),
and split at an apostrophe (`DON'T` is `DON` and `T`; NLTK's `DO` and `N'T` are two capital tokens as well).
So "I" and "A" count, as in IFEval, and a number alone ("2024") does not.

All capitals / all lowercase "in English". IFEval asks `str.isupper()` (or `islower()`) of the whole answer and
also that langdetect says the answer is English. Language detection belongs to the `language` checks, so here
English is a documented rule instead: at least 90% of the answer's letters are the basic Latin letters A-Z
(accents, as in "café", stay under the bar). It refuses an answer in another script (Cyrillic, Greek, CJK mixed
with capitals) but not one in French or German; IFEval's langdetect would refuse those too, so an all-capital
answer in another Latin-script language is followed here and not in IFEval.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from ocllm.scoring.instructions.checks.registry import RELATIONS, Check, Measured, Param, compare

_WORD = re.compile(r"\w+(?:[-.]\w+)*")
ENGLISH_LATIN_SHARE = 0.9  # the least share of letters in A-Z for an answer to count as English here
_ASCII_LETTERS = frozenset(string.ascii_letters)


def capital_words(text: str) -> list[str]:
    """The answer's words in all capitals, in order (the module docstring says what a word is)."""
    return [word for word in _WORD.findall(text) if word.isupper()]


def _capital_frequency(text: str, kwargs: Mapping[str, Any]) -> Measured:
    """Words in all capitals against the relation. Differs from IFEval in the tokenizer only (no NLTK)."""
    relation, wanted = kwargs["capital_relation"], kwargs["capital_frequency"]
    words = capital_words(text)
    measured = f"capital words: {len(words)}, needed {relation} {wanted}"
    if words:
        measured += f" ({', '.join(words[:5])}{', ...' if len(words) > 5 else ''})"
    return Measured(compare(len(words), relation, wanted), measured)


def _latin_share(text: str) -> tuple[int, float]:
    count = latin = 0  # counted, never listed: an answer of megabytes held a list of every letter
    for c in text:
        if c.isalpha():
            count += 1
            latin += c in _ASCII_LETTERS
    return count, (latin / count if count else 0.0)


def _english(text: str) -> str | None:
    """Why the answer is not English by this module's rule, or None when it is."""
    count, share = _latin_share(text)
    if share < ENGLISH_LATIN_SHARE:
        needed = f"needed at least {ENGLISH_LATIN_SHARE:.0%} (our rule for English)"
        return f"{share:.0%} of its {count} letters are A-Z, {needed}"
    return None


def _wrong_case(c: str, upper: bool) -> bool:
    if upper:
        return (c.islower() or c.istitle()) and not c.isupper()
    return c.isupper() or c.istitle()


def _all_case(text: str, upper: bool) -> Measured:
    """All capitals (or all lowercase) and English. Differs from IFEval: English by the A-Z share, not langdetect."""
    name, other = ("capitals", "lowercase") if upper else ("lowercase", "capital")
    whole = text.isupper() if upper else text.islower()
    if not whole:
        # A cased letter of the wrong case: lowercase (or titlecase, like "ǅ") for capitals, and the reverse.
        # Counted with the first one kept, never listed: a list of (index, letter) for every letter of a 5 MB
        # answer held 500 MB.
        count, first = 0, None
        for i, c in enumerate(text):
            if _wrong_case(c, upper):
                count += 1
                if first is None:
                    first = (i, c)
        if first is None:
            return Measured(False, f"no cased letters: the answer is not in {name}")
        at, letter = first
        return Measured(False, f"{other} letters: {count}, the first {letter!r} at {at}; needed none")
    not_english = _english(text)
    if not_english is not None:
        return Measured(False, f"all cased letters are {name}, but {not_english}")
    count, share = _latin_share(text)
    english = f"{share:.0%} of its {count} letters are A-Z (English by our rule)"
    return Measured(True, f"all cased letters are {name}; {english}")


def _english_capital(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    return _all_case(text, upper=True)


def _english_lowercase(text: str, _kwargs: Mapping[str, Any]) -> Measured:
    return _all_case(text, upper=False)


CHECKS = [
    Check("change_case:capital_word_frequency", "a number of words in all capitals",
          (Param("capital_frequency", (int,), minimum=0), Param("capital_relation", (str,), choices=RELATIONS)),
          _capital_frequency),
    Check("change_case:english_capital", "all capital letters, in English", (), _english_capital),
    Check("change_case:english_lowercase", "all lowercase letters, in English", (), _english_lowercase),
]  # fmt: skip

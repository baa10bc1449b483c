"""Words and sentences of an answer, counted the same way on every machine, with no downloaded model.

Words: every maximal run of word characters (`\\w+`: letters, digits and the underscore, in any script), which is
exactly how IFEval counts them. So "don't" is two words ("don", "t"), "3.5" is two, "state-of-the-art" is four, and
punctuation, markdown and emoji are no words at all.

Sentences: IFEval counts them with NLTK's punkt model for English (a file downloaded at run time); this module
writes the rules that model applies to ordinary prose instead, so a count needs no download:

- A sentence ends at `.`, `!`, `?` or `…` (or a run of them, like `?!`), with any closing quotes, brackets or
  markdown emphasis (`*`, `_`) right after it, when whitespace or the end of the text follows. So `3.5`,
  `example.com` and `v1.2` end nothing.
- A `.` never ends a sentence after a title or a word that introduces something (`Mr.`, `Dr.`, `e.g.`, `vs.`:
  `LEADING_ABBREVIATIONS`), after a single letter other than "I" (an initial: `J. Smith`), after a dotted acronym
  (`U.S.`), nor after a number that opens a line (a list marker: `1. Mix the flour`). After an abbreviation that
  closes a phrase (`etc.`, `Inc.`, `Jr.`: `TRAILING_ABBREVIATIONS`) it ends one only when the next word starts with
  a capital letter. Both lists are matched case-insensitively. `No.` is an abbreviation only before a number
  (`No. 5`): "My answer is no." ends a sentence.
- An ellipsis (`...` or `…`) ends a sentence only when the next word starts with a capital letter or a digit.
- A line break alone ends nothing (a heading or a bullet without a full stop runs into the next sentence), as in
  punkt.
- Text after the last full stop is a sentence when it holds a word character; a piece with none (a stray `***`)
  is no sentence.
"""

from __future__ import annotations

import re

# Abbreviations (lower case, without the final dot) whose full stop never ends a sentence: something follows them.
LEADING_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "st", "mt", "rev", "hon", "gen", "col", "capt", "lt", "sgt", "vs", "e.g",
        "i.e", "cf", "approx", "fig", "vol", "pp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
        "sept", "oct", "nov", "dec",
    }
)  # fmt: skip
# Abbreviations that often close a sentence too: their full stop ends one when a capitalised word follows.
TRAILING_ABBREVIATIONS = frozenset({"etc", "inc", "ltd", "co", "corp", "jr", "sr", "al", "dept", "est", "ed"})

_WORD = re.compile(r"\w+")
# A run of sentence-ending marks, the closing quotes or brackets after it, then whitespace or the end of the text.
# A run starts only where no mark precedes it, and is taken whole (possessive): a long run of dots followed by a
# letter is tried once, not once from each of its dots (that was quadratic).
_END = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’)\]*_]*+(?=\s|$)")
# What follows a sentence's end: spaces, then opening quotes, brackets and markup, spaces, then its first character.
_NEXT = re.compile(r"\s*[\"'“‘(\[*_#>-]*\s*(.)?", re.DOTALL)
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]?")  # U.S / e.g / a.b.c (the final dot is the mark itself)


def words(text: str) -> list[str]:
    """The words of `text`: each maximal run of `\\w` characters, in order (IFEval's tokenizer)."""
    return _WORD.findall(text)


def count_words(text: str) -> int:
    """How many words `text` has (see `words`)."""
    return len(words(text))


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, in order, each stripped of surrounding whitespace (the rules are in the module's
    docstring). An empty or blank text has none."""
    sentences: list[str] = []
    start = 0
    for match in _END.finditer(text):
        if not _ends_sentence(text, match):
            continue
        piece = text[start : match.end()].strip()
        if _WORD.search(piece):
            sentences.append(piece)
        elif sentences and piece:
            sentences[-1] += " " + piece  # a stray "!!" after a sentence belongs to it, it is not one
        start = match.end()
    rest = text[start:].strip()
    if _WORD.search(rest):
        sentences.append(rest)
    return sentences


def count_sentences(text: str) -> int:
    """How many sentences `text` has (see `split_sentences`)."""
    return len(split_sentences(text))


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    marks = match.group().rstrip("\"'”’)]*_")
    nxt = _NEXT.match(text, match.end())
    first = nxt.group(1) if nxt is not None else None  # read in place: copying the rest was quadratic
    capital_next = first is None or first.isupper() or first.isdigit()
    if marks.startswith("...") or marks.startswith("…"):
        return capital_next
    if marks != ".":
        return True  # "!", "?", "?!", ".?": always an end
    token = _token_before(text, match.start())
    if not token:
        return True
    bare = token.lower()
    if bare in LEADING_ABBREVIATIONS:
        return False
    if bare == "no":
        # "No. 5" abbreviates "number"; "My answer is no." (IFEval's own fixed answer) ends a sentence.
        return first is None or not first.isdigit()
    if bare in TRAILING_ABBREVIATIONS:
        return capital_next
    if len(token) == 1 and token.isalpha() and token != "I":
        return False  # an initial: "J. Smith"
    if _DOTTED.fullmatch(token) and "." in token:
        return False  # a dotted acronym: "U.S."
    # A number opening a line is a list marker ("1. Mix the flour"), not a sentence's last word.
    return not (token.isdigit() and _opens_line(text, match.start() - len(token)))


def _token_before(text: str, end: int) -> str:
    """The characters before a full stop back to the last whitespace, without opening quotes or brackets."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:end].lstrip("\"'“‘([*_")


def _opens_line(text: str, at: int) -> bool:
    """Only spaces, tabs, `*` and `-` stand between the line's start and `at`: read backwards from `at`, stopping
    at the first other character (looking back to the line's start for every number was quadratic on one line)."""
    while at > 0 and text[at - 1] in " \t*-":
        at -= 1
    return at == 0 or text[at - 1] == "\n"

"""Read the answer letter (or letters) that a final-answer marker points at.

This is the one place that decides what counts as "a letter standing alone". It is a small
hand-written scanner rather than one large regular expression, because each step carries a rule
of docs/scoring/mcq.md and has to be explainable on its own.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ocllm.scoring.special_tokens import SPECIAL_TOKEN

# Wrappers a model puts around a letter: brackets, Markdown emphasis, and inline LaTeX.
_OPENERS = (
    "\\boxed{",
    "\\text{",
    "\\textbf{",
    "\\textit{",
    "\\texttt{",
    "\\mathrm{",
    "\\mathbf{",
    "\\mathit{",
    "\\mathsf{",
    "\\(",
    "\\[",
    "$$",
    "$",
    "**",
    "__",
    "*",
    "(",
    "[",
    "{",
    '"',
    "`",
    "“",
    "‘",
    "'",
)
_CLOSERS = ("\\)", "\\]", "$$", "$", "**", "__", "*", ")", "]", "}", '"', "`", "”", "’", "'")
# Their first characters: most letters stand unwrapped, and one look at the next character says so.
_OPENER_STARTS = frozenset(opener[0] for opener in _OPENERS)
_CLOSER_STARTS = frozenset(closer[0] for closer in _CLOSERS)
# Separators of a list of letters: "B or C", "B, C", "B/C", "B and C", "B & C".
# "、" is the enumeration comma of Chinese and Japanese: "C、D" names two letters.
_LIST_SEPARATOR = re.compile(r"[ \t]*(?:,[ \t]*(?:or|and)?|、|/|&|\bor\b|\band\b)[ \t]*", re.IGNORECASE)
# Words that may follow a bare letter and still leave it a letter: "The answer is A because ...".
_CONNECTORS = frozenset(
    (
        "because",
        "since",
        "as",
        "for",
        "with",
        "is",
        "was",
        "which",
        "that",
        "given",
        "due",
        "from",
        "in",
        "on",
        "by",
        "here",
        "there",
        "according",
        "so",
        "hence",
        "thus",
        "therefore",
        "while",
        "whereas",
        # The same after the markers of other languages: es/pt "porque", "pois", it "perché", "poiché",
        # fr "car", "parce", "puisque", de "weil", "denn", "da".
        "porque",
        "pois",
        "perché",
        "poiché",
        "car",
        "parce",
        "puisque",
        "weil",
        "denn",
        "da",
    )
)
# Letters that are also words, and so may open a sentence after a marker: the pronoun "I" and the article
# "a"/"A" ("Answer: I don't know", "The answer is a selection of ..."). Every other letter followed by an
# ordinary word is still a letter: "FINAL: C would be my guess", "Answer: B seems right".
ENGLISH_WORD_LETTERS = frozenset("IAa")
# After a marker in another language, its one-letter words too: es "a", "e", "o", "u", "y"; fr "a", "à",
# "y"; pt "a", "e", "o"; it "a", "e", "i", "o".
OTHER_WORD_LETTERS = frozenset("IAaEeiOoUuYyàÀ")
# The article "A" is followed by a noun phrase, never by a verb; a capital A followed by one of these verbs,
# modals or adverbs is the subject of its clause, the letter A ("FINAL: A would be my guess", "Answer: A seems
# right", "Answer: A only"), as the same sentence with B is B. Words that are also nouns after an article ("a
# will", "a can", "a fit") are left out; a hyphen after the word makes a compound ("A would-be solution").
_VERBS_AFTER_SUBJECT = frozenset(
    (
        "would", "should", "could", "might", "may", "must", "shall", "cannot", "can't", "won't", "wouldn't",
        "shouldn't", "couldn't", "isn't", "wasn't", "has", "hasn't", "does", "doesn't", "did", "didn't",
        "seems", "seemed", "looks", "appears", "appeared", "sounds", "feels", "fits", "matches", "remains",
        "stands", "holds", "works", "follows", "gives", "makes", "satisfies", "agrees", "applies", "describes",
        "represents", "corresponds", "answers", "wins", "only", "alone", "again", "too",
    )
)  # fmt: skip
# Characters after a letter that make it part of a formula, not an answer ("x = 5", "A + B").
_MATH_AFTER = frozenset("=+^<>")
# A sign and a number: after a letter in brackets, the value restated ("The answer is (H) +3.03 kJ"), not math;
# unless the formula goes on after the number ("(a) + 3 = 7", "(B) + 2, giving 5").
_SIGNED_NUMBER = re.compile(r"\+[ \t]?(?:\d+(?:\.\d+)?|\.\d+)(?![\d.])(?![ \t]*[=+\-*/^<>,])")
# Optional words between a marker and its letter: "The correct answer is option A".
# Words between a marker and its letter: "The answer is option C", "The correct answer is therefore C",
# and the articles and nouns of other languages ("la respuesta es la opción C", "a alternativa C").
_LEAD_WORD = re.compile(
    r"(?:option|choice|letter|therefore|thus|hence|clearly|indeed|definitely|also|opción|opcion|alternativa|"
    r"opção|letra|lettera|lettre|choix)\b[ \t]*|(?-i:(?:la|el|le|die|der|das|a)[ \t]+(?=(?:opción|opcion|alternativa|"
    r"opção|letra|lettera|lettre|option)\b|\(?[A-Z]\b))",
    re.IGNORECASE,
)
_SPACE = " \t"
# "}" and "$" close a LaTeX wrapper around the marker itself: "$$\text{Answer: } B$$".
_SKIP_AFTER_MARKER = " \t\r\n*_~:}$"
_BLANK = " \t\r\n"


class LetterValue(NamedTuple):
    letters: list[str]  # in the order named, upper case
    start: int  # where the first letter token (with its wrappers) begins
    end: int  # just past the last letter token and its closing wrappers
    wrapped: bool
    # An unwrapped letter followed by an ordinary word ("FINAL: C would be my guess", but also "The answer
    # is D minor"): a letter unless an option's text reads it better; the caller, who knows the options, decides.
    before_word: bool = False
    # A lower-case label closed by ")" and followed by running text ("(i) The number is: 42"): a list label,
    # unless that text is an option's; the caller, who knows the options, decides.
    label_before_text: bool = False


def skip_to_value(text: str, pos: int) -> int:
    """Skip what stands between a marker and its value: spaces, emphasis, LaTeX spaces."""
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch in _SKIP_AFTER_MARKER:
            pos += 1
        elif text.startswith(("\\ ", "\\,", "\\;", "\\:", "\\!"), pos):
            pos += 2
        elif text.startswith("\\quad", pos):
            pos += 5
        else:
            lead = _LEAD_WORD.match(text, pos)
            if lead is None:
                break
            pos = lead.end()
    return pos


def read_letters(
    text: str, pos: int, *, explicit_marker: bool, word_letters: frozenset[str] = ENGLISH_WORD_LETTERS
) -> LetterValue | None:
    """Read a letter, or a list of letters, starting exactly at `pos`.

    Returns None when what stands there is not a letter standing alone: the first letter of a
    word ("Because"), a pronoun or article opening a sentence ("I don't know", "a selection of"),
    or a symbol in a formula ("x = 5"). After an explicit marker only the letters in `word_letters`
    can be such words; without a marker (a region that is only a letter) any letter can.
    """
    first = _read_one(text, pos, explicit_marker=explicit_marker)
    if first is None:
        return None
    letter, end, wrapped = first
    before_word = not wrapped and not _prose_allows_letter(text, end)
    if before_word and (not explicit_marker or text[end - 1] in word_letters) and not _subject_a(text, end):
        return None
    if text[end - 1] == ")" and _starts_enumeration(text, end):
        return None
    label = wrapped and text[end - 1] == ")" and _lower_case_label(text, end) and _text_follows(text, end)
    letters = [letter]
    cursor = end
    while True:
        sep = _LIST_SEPARATOR.match(text, cursor)
        if sep is None or sep.end() == cursor:
            break
        more = _read_one(text, sep.end(), explicit_marker=explicit_marker)
        if more is None or not _ends_cleanly(text, more[1]):
            break
        if more[0] not in letters:
            letters.append(more[0])
        cursor = more[1]
        end = cursor
    single = len(letters) == 1
    return LetterValue(letters, pos, end, wrapped, before_word and single, label and single)


def _lower_case_label(text: str, end: int) -> bool:
    at = end - 1
    while at > 0 and not text[at].isalpha():
        at -= 1
    return text[at].islower()


def _text_follows(text: str, end: int) -> bool:
    """Running text after a label: a word on the same line that is neither a connector ("(b) because …") nor
    a verb ("(b) seems right"), which would make the label the subject, a letter."""
    pos = end
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    word_end = pos
    while word_end < len(text) and text[word_end].isalpha():
        word_end += 1
    word = text[pos:word_end].lower()
    return bool(word) and word not in _CONNECTORS and word not in _VERBS_AFTER_SUBJECT


def _read_one(text: str, pos: int, *, explicit_marker: bool) -> tuple[str, int, bool] | None:
    n = len(text)
    opened = 0
    while pos < n and text[pos] in _OPENER_STARTS:
        for opener in _OPENERS:
            if text.startswith(opener, pos):
                pos += len(opener)
                opened += 1
                while pos < n and text[pos] in _BLANK:  # display math spans lines: "\\[\n\\boxed{B}"
                    pos += 1
                break
        else:
            break
    if pos >= n:
        return None
    ch = text[pos]
    if "Ａ" <= ch <= "Ｚ":  # full-width letters, common in CJK output
        ch = chr(ord(ch) - ord("Ａ") + ord("A"))
    if not ("A" <= ch <= "Z" or (explicit_marker and "a" <= ch <= "z")):
        return None
    after = pos + 1
    if after < n:
        nxt = text[after]
        if nxt.isalnum():
            return None  # the first letter of a word
        if nxt in "'’-" and after + 1 < n and text[after + 1].isalnum():
            return None  # a contraction ("I'm") or a compound ("B-cell")
        if nxt in "_^":
            return None  # a symbol with a subscript or a power: the "(f" of "\\[ (f_1 \\ast f_2)(t) = … \\]"
    end = after
    closed = 0
    bracketed = False  # closed by ")" or "]": "(H)", "**[H]**"
    while end < n:
        at = end
        while at < n and text[at] in _BLANK and opened > closed:
            at += 1  # "( B )", "\\( B \\)", and a display closer on the next line
        if at >= n or text[at] not in _CLOSER_STARTS:
            break
        for closer in _CLOSERS:
            if text.startswith(closer, at):
                end = at + len(closer)
                closed += 1
                bracketed = bracketed or closer in (")", "]")
                break
        else:
            break
    rest = end
    while rest < n and text[rest] in _SPACE:
        rest += 1
    if (
        rest < n
        and text[rest] in _MATH_AFTER
        and not (bracketed and _SIGNED_NUMBER.match(text, rest))
        and not SPECIAL_TOKEN.match(text, rest)  # "Answer: A </s>": the answer's end, not a less-than
    ):
        return None  # "x = 5", "A + B"; but "(H) +3.03 kJ" is the letter and its signed value
    return ch.upper(), end, closed > 0


def _prose_allows_letter(text: str, end: int) -> bool:
    """A letter with no wrapper, followed on its line by a lower-case word, is prose unless that
    word is a connector: "The answer is A because ..." is a letter, "The answer is a selection of
    ..." and "Answer: I don't know" are not."""
    n = len(text)
    pos = end
    while pos < n and text[pos] in _SPACE:
        pos += 1
    if pos == end or pos >= n:
        return True
    word_end = pos
    while word_end < n and (text[word_end].isalpha() or text[word_end] in "'’"):
        word_end += 1
    word = text[pos:word_end]
    if not word:
        return True  # punctuation, digits, brackets: "B (1284)", "A — 12"
    if not word[0].islower():
        return True
    return word.lower() in _CONNECTORS or _LIST_SEPARATOR.match(text, end) is not None


def _subject_a(text: str, end: int) -> bool:
    """A capital A followed on its line by a verb ("A would be my guess"): the letter, not the article."""
    if text[end - 1] != "A":
        return False
    pos = end
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    word_end = pos
    while word_end < len(text) and (text[word_end].isalpha() or text[word_end] in "'’"):
        word_end += 1
    if word_end < len(text) and text[word_end] in "-‐":
        return False  # "A would-be solution"
    return text[pos:word_end].replace("’", "'") in _VERBS_AFTER_SUBJECT


# How far along a line the scorer looks. Bounded, so that a long output written as one line (or a
# thousand statements on it) costs linear time, not quadratic.
LINE_WINDOW = 400


def line_end(text: str, start: int, window: int = LINE_WINDOW) -> int:
    """The end of the line that `start` is on, looking at most `window` characters ahead."""
    limit = min(len(text), start + window)
    end = text.find("\n", start, limit)
    return limit if end == -1 else end


def _starts_enumeration(text: str, end: int) -> bool:
    """ "(i) the first part … (ii) the second": a label opening a list of sub-parts, not a letter.
    Told apart from "(B) 4" by the next label of the same list further on."""
    at = end - 1
    while at > 0 and not text[at].isalpha():
        at -= 1
    label = text[at]
    if label.isupper() and label != "I":
        return False  # sub-parts are labelled (a), b), (i); "(B) 1284 … (C)" is an answer and an aside
    if not text[end : line_end(text, end)].strip():
        return False  # nothing follows on the line: "Answer: (B)"
    if _LIST_SEPARATOR.match(text, end):
        return False  # "(B) or (C)": a list of letters, not of sub-parts
    following = {"i": "ii", "I": "II"}.get(label, chr(ord(label) + 1))
    return re.search(r"(?<![A-Za-z])\(?" + re.escape(following) + r"\)", text[end : end + 600]) is not None


def _ends_cleanly(text: str, pos: int) -> bool:
    """After a further letter in a list, only the end of the statement may follow."""
    n = len(text)
    while pos < n and text[pos] in _SPACE:
        pos += 1
    if pos >= n or text[pos] in "\r\n.;:!?)]}":
        return True
    return _LIST_SEPARATOR.match(text, pos) is not None

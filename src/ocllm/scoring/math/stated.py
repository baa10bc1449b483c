"""The value a math statement states (docs/scoring/math.md, rule M3): the text after a marker or inside a box, with
bold, end punctuation, delimiters, a box, a left side and its other wrappings removed, each removal named; and the
words around a value that change, bound or hedge it, which keep a statement or a last line from stating it."""

from __future__ import annotations

import re

from ocllm.scoring.math.braces import brace_pairs
from ocllm.scoring.math.decision import MathCandidate, MathKind
from ocllm.scoring.math.normalise import assignment_value, normalise, strip_delimiters
from ocllm.scoring.math.words import PHRASE_WORDS, VALUE_WORDS
from ocllm.scoring.regions import Field
from ocllm.scoring.special_tokens import TRAILING_SPECIAL_TOKENS

BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
# A line that denies or bounds its number states no value: "Not 5", "x > 5", "at most 5".
NOT_A_VALUE = re.compile(
    r"\bnot\b|n't\b|\bcannot\b|\bnever\b|\\neq?\b|≠|[<>≤≥]|\\[lg]eq?\b|\bexceed"
    r"|\bat[ \t]+(?:least|most)\b|\b(?:more|less|fewer)[ \t]+than\b",
    re.IGNORECASE,
)

# The longest box read, in characters: no answer is longer.
BOX_LIMIT = 4000


def matching_brace(text: str, open_at: int, pairs: dict[int, int] | None = None) -> int | None:
    """Where the brace opened at `open_at` closes, within BOX_LIMIT characters."""
    close = (pairs if pairs is not None else brace_pairs(text)).get(open_at)
    return close if close is not None and close - open_at <= BOX_LIMIT else None




def _lone_dollar(value: str) -> str:
    """A math delimiter left alone by a cut ("**Answer: $\\frac{3}{4}**"): the one unescaped $, at either end, when
    it is no dollar sign before a number."""
    dollars = [i for i, ch in enumerate(value) if ch == "$" and (i == 0 or value[i - 1] != "\\")]
    if len(dollars) != 1:
        return value
    if dollars[0] == 0 and not re.match(r"\$[ \t]*[-\d.]", value):
        return value[1:].strip()
    if dollars[0] == len(value) - 1 and dollars[0] > 0:
        return value[:-1].strip()
    return value


def strip_statement(value: str) -> tuple[str, list[str]]:
    """The answer a statement states (rule M3): without markdown bold, end punctuation, wrapping math delimiters
    or box, and a single-name assignment ("x = 5" states 5). Returns it and the reading notes applied."""
    notes: list[str] = []
    while True:
        before = value
        value = value.strip()
        untokened = TRAILING_SPECIAL_TOKENS.sub("", value)
        if untokened != value:  # "The final answer is: 26 <|eot_id|>": the model's end-of-turn token, printed
            value = untokened
            _note(notes, "special_token")
        if value.startswith(("**", "__")) and value.count(value[:2]) % 2 == 1:
            # "**Answer:** John lost **4 people**": the label's closing bold, left at the value's start, would pair
            # with the value's own and hide it.
            value = value[2:].lstrip()
            _note(notes, "label_bold")
        inner = _bold_value(value)
        if inner is not None:
            value = inner
            _note(notes, "bold_value")
        unlabelled = _NESTED_LABEL.sub(lambda m: m.group("inside") or "", value, count=1)
        if unlabelled != value:  # "Final Answer:" then "Answer: \\(\\frac{1}{2}\\)", "\\[ \\text{Answer: } 10 \\]"
            value = unlabelled
            _note(notes, "nested_label")
        number = _sentence_number(value)
        if number is not None:
            value = number
            _note(notes, "sentence_number")
        unmarked = re.sub(r"^#{4}[ \t]*(?=\S)", "", value)
        if unmarked != value:  # "### Final Answer:" then "#### 18": the GSM8K marker inside the value
            value = unmarked
            _note(notes, "hashes")
        angled = re.fullmatch(r"<[ \t]*([^<>\s][^<>]*?)[ \t]*>", value)
        if angled is not None:  # "#### <48>": the brackets of a format's "<answer>" kept around the value
            value = angled.group(1)
            _note(notes, "angle_brackets")
        unbolded = re.sub(r"^(?:\*\*|__|\*)+|(?:\*\*|__|\*)+$", "", value).strip()
        if unbolded != value:
            value = unbolded
            _note(notes, "bold")
        # "!" after a digit or a closing bracket is a factorial (5! = 120), not an exclamation.
        unpunctuated = re.sub(r"(?<!\\)(?:[.,;:]|(?<![\d})\]])!)+$", "", value).strip()
        if unpunctuated != value:
            value = unpunctuated
            _note(notes, "punctuation")
        undelimited = _lone_dollar(strip_delimiters(value))
        if undelimited != value:
            value = undelimited
            _note(notes, "delimiters")
        m = BOX.match(value)
        if m and matching_brace(value, m.end() - 1) == len(value) - 1:
            value = value[m.end() : -1]
            _note(notes, "box")
        assigned = assignment_value(value)
        if assigned is not None:
            value = assigned
            _note(notes, "assignment")
        if value == before:
            return value, notes


# An "Answer:" label at the start of a statement's value, plain, bold or in \text{} (with the value inside or after).
_NESTED_LABEL = re.compile(
    r"^(?:\*\*|__)?(?:final[ \t]+)?answer[ \t]*(?:\*\*|__)?[ \t]*[:：][ \t]*(?:\*\*|__)?[ \t]*(?=\S)"
    r"|^\\text\{[ \t]*(?:final[ \t]+)?answer[ \t]*[:：][ \t]*\}[ \t]*(?=\S)"
    r"|^\\text\{[ \t]*(?:final[ \t]+)?answer[ \t]*[:：][ \t]*(?P<inside>[^{}]+)\}$",
    re.IGNORECASE,
)
# A bold span, ** or __ (not inside a word: snake_case names are no bold).
BOLD_SPAN = re.compile(r"\*\*([^*\n]+?)\*\*|(?<![\w_])__([^_\n]+?)__(?![\w_])")


def _bold_value(value: str) -> str | None:
    """The bold value inside a statement's words ("Each bus carries **48 pupils** on both trips" states
    "48 pupils"): the bold spans that hold a number, all stating the same text, and no number outside them."""
    spans = [m for m in BOLD_SPAN.finditer(value) if re.search(r"\d", m.group(1) or m.group(2))]
    if not spans or (spans[0].start() == 0 and spans[-1].end() == len(value)):
        return None  # no bold number, or bold around all of it (the unbolding below takes that)
    outside = BOLD_SPAN.sub(" ", value)
    inners = {(m.group(1) or m.group(2)).strip() for m in spans}
    if re.search(r"\d", outside) or len(inners) != 1 or hedged_words(outside):
        return None  # "not **19**", "about **19**", "at least **19**": the words outside change the value
    return inners.pop()


# Words that make a value something else or one of several: the value words, denials and bounds, hedges.
HEDGES = re.compile(
    r"\b(?:either|or|if|unless|assuming|provided|otherwise|likely|probably|maybe|perhaps|possibly|approx"
    r"|approximately|about|roughly|around|nearly|almost|estimated?)\b|~|≈|\\approx|\\sim",
    re.IGNORECASE,
)


def hedged_words(text: str) -> bool:
    """Whether words around a value change it, deny or bound it, or hedge it ("about", "not", "at least", "or")."""
    return (
        HEDGES.search(text) is not None
        or NOT_A_VALUE.search(text) is not None
        or any(w.lower() in VALUE_WORDS and w.lower() not in PHRASE_WORDS for w in re.findall(r"[A-Za-z]+", text))
    )


# A value that is a sentence about one number: "She has 19 pencils left." (as a marker's value, or a JSON answer).
_SENTENCE_NUMBER = re.compile(r"(?<![\w.^_{\\])-?\$?\d[\d,]*(?:\.\d+)?(?![\d\w])")
_MATH_IN_SENTENCE = re.compile(r"[=<>+*/^×÷\\{}]|\s-\s")


# Words that, before a number, make it something else or bound it: "less than 40", "over 40", "minus 40", "half of
# 40", "twice 40", and "up to 40". Other words before a number ("She started with 40", "The total
# is 40", "It comes to 40") say what the number is, not what it is worth. After a number, VALUE_WORDS judge (M4).
_BEFORE_NUMBER_WORDS = frozenset({
    "negative", "minus", "plus", "below", "above", "under", "over", "less", "more", "fewer", "greater", "smaller",
    "larger", "than", "least", "most", "half", "twice", "double", "triple", "times", "not", "no", "or", "either",
    "if", "unless", "except", "per",
})  # fmt: skip


def _sentence_number(value: str) -> str | None:
    """The number a one-number sentence states, with the words after it (its unit phrase, which normalisation reads
    or keeps): "She has 19 pencils left" states "19 pencils left", "**The boots cost \\$104.**" "$104". None when
    the value is no such sentence: it opens with its number, holds more than one, holds math, or words before the
    number change, bound or hedge it."""
    value = value.replace("\\$", "$")  # an escaped dollar sign (markdown's) is a dollar sign, not math
    numbers = list(_SENTENCE_NUMBER.finditer(value))
    if len(numbers) != 1 or _MATH_IN_SENTENCE.search(value):
        return None
    before = value[: numbers[0].start()]
    if not re.search(r"[A-Za-z]{2}", before) or _changes_what_follows(before):
        return None
    return value[numbers[0].start() :]


def _changes_what_follows(words: str) -> bool:
    """Whether words before a number change, bound, deny or hedge it ("about", "not", "at least", "more than")."""
    return (
        HEDGES.search(words) is not None
        or NOT_A_VALUE.search(words) is not None
        or re.search(r"\bup[ \t]+to[ \t]*$", words, re.IGNORECASE) is not None
        or any(w.lower() in _BEFORE_NUMBER_WORDS for w in re.findall(r"[A-Za-z]+", words))
    )


def _note(notes: list[str], note: str) -> None:
    if note not in notes:
        notes.append(note)


def make_candidate(
    kind: MathKind, region: Field, field: Field, start: int, end: int, text: str, value: str
) -> MathCandidate:
    stated, notes = strip_statement(value)
    normalised, _ = normalise(stated)
    return MathCandidate(
        kind=kind,
        method=kind,
        region=region,
        field=field,
        start=start,
        end=end,
        text=text,
        value=stated,
        normalised=normalised,
        reading=notes,
    )




# An aside in brackets: "**72 litres** (about 19 gallons)" says more about the value, never another one.
ASIDES = re.compile(r"\([^()\n]*\)")

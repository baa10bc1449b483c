"""The result on the last line (docs/scoring/math.md, rule M2e): reasoning models write their final answer as prose,
where the line holds several numbers. The value after the last "=" of working whose sides agree (or of a one-name
assignment in math), else the one bold number, when the line neither asks, denies, bounds nor hedges."""

from __future__ import annotations

import re
from fractions import Fraction

from ocllm.scoring.math.arithmetic import evaluate, rounds_to
from ocllm.scoring.math.conclusion import concluded_value
from ocllm.scoring.math.decision import MathCandidate
from ocllm.scoring.math.normalise import normalise
from ocllm.scoring.math.stated import ASIDES, BOLD_SPAN, HEDGES, NOT_A_VALUE, make_candidate, strip_statement
from ocllm.scoring.regions import Field, Piece

# Math spans of a line: \( … \), \[ … \], $$ … $$, $ … $ (a $ before a digit and a space-free run is money:
# "$12 + $30" holds no math span).
_MATH_SPAN = re.compile(
    r"\\\((?P<a>.*?)\\\)|\\\[(?P<b>.*?)\\\]|\$\$(?P<c>.*?)\$\$|(?<![\\$])\$(?!\s*\d)(?P<d>[^$\n]+?)(?<!\\)\$", re.DOTALL
)
# The value after the last equals sign of prose working: a number, perhaps money, bold, a percent or a fraction.
_PROSE_RESULT = re.compile(
    r"[ \t]*(?:\*\*|__)?[ \t]*(?:\\?\$)?[ \t]*(?P<value>-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)|\\[dt]?frac\{\d+\}\{\d+\})"
    r"(?:[ \t]*(?:\\?%))?(?:\*\*|__)?"
)
# Another number after the result, outside brackets ("= 42 dollars, and she keeps 8"): the line states two values.
# An aside in brackets is no second value ("**72 litres** (about 19 gallons)").
_NUMBER_AFTER = re.compile(r"(?:[^\d(\n]|\([^()\n]*\))*\d")
_CHAIN_GOES_ON = re.compile(r"[ \t]*(?:[-+*/×÷^·]|\\(?:times|cdot|div))[ \t]*[\d(\\$]")
# The longest last line read: a result is stated in one sentence or a short paragraph, not a page.
_RESULT_LINE_LIMIT = 600
# Decoration after the answer: a markdown rule, an empty bold.
_DECORATION = re.compile(r"^[ \t]*(?:[-*_=]{3,}|\*\*\s*\*\*)[ \t]*$")


def result_line(
    pieces: list[Piece], region: Field, found: list[MathCandidate], question: str | None = None
) -> MathCandidate | None:
    """A `result_line` statement (rule M2e): on the region's last non-empty line of prose (or its closing display
    block), the value after the last equals sign of working whose sides agree, or of a one-name assignment, else
    the one bold value, else the value a concluding sentence gives (rule M2f); nothing when the line asks, denies
    or bounds (as M7), or is already a statement's."""
    line = _last_line(pieces)
    if line is None:
        return None
    piece, start, text = line
    asked = text.rfind("?")
    if asked != -1:  # "Does she keep any? Yes: 24 − 5 = 19 pencils.": the answer follows the question
        start, text = start + asked + 1, text[asked + 1 :]
    prose = ASIDES.sub(" ", _without_math(text))
    if len(text) > _RESULT_LINE_LIMIT or not text.strip() or NOT_A_VALUE.search(prose) or HEDGES.search(prose):
        return None  # asked, denied, bounded or hedged: "either **19** or 18", "if she works every day, **72**"
    at = piece.offset + start
    if any(c.field == piece.field and c.end > at and c.start < at + len(text) for c in found):
        return None  # the line holds a statement already ("The answer is 45 + 52 = 97."): that one decides
    picked = _chain_result(text) or _bold_result(text) or concluded_value(text, question)
    if picked is None:
        return None
    value_start, value_end, reading = picked
    candidate = make_candidate(
        "result_line", region, piece.field, at, at + value_end, text[:value_end], text[value_start:value_end]
    )
    candidate.reading.insert(0, reading)
    return candidate


def _last_line(pieces: list[Piece]) -> tuple[Piece, int, str] | None:
    """The last non-empty line of the region (decoration skipped), or the display block it closes."""
    for piece in reversed(pieces):
        stripped = piece.text.rstrip()
        while stripped:
            line_start = stripped.rfind("\n") + 1
            line = stripped[line_start:]
            if _DECORATION.match(line):
                stripped = stripped[:line_start].rstrip()
                continue
            closing = line.strip()
            if closing in ("\\]", "$$"):
                opener = "\\[" if closing == "\\]" else "$$"
                begin = stripped.rfind(opener, 0, line_start)
                if begin == -1:
                    return None
                line_start = stripped.rfind("\n", 0, begin) + 1
                return piece, line_start, stripped[line_start:]
            return piece, line_start, line
    return None


def _without_math(text: str) -> str:
    return _MATH_SPAN.sub(" ", text)


def _chain_result(text: str) -> tuple[int, int, str] | None:
    """The value at the end of the line's last equation: in math, what the assignment rule gives (its sides of
    numbers agreeing, or one name); in prose, the number after the last "=" when the working before it equals it."""
    last_equals = text.rfind("=")
    if last_equals == -1:
        return None
    spans = list(_MATH_SPAN.finditer(text))
    for m in spans:
        if m.start() < last_equals < m.end():
            if sum("=" in span.group(0) for span in spans) > 1 or _NUMBER_AFTER.match(text, m.end()):
                return None  # "$x = 2$ or $x = 3$", "… = 312\) tiles, 12 of them broken": which is the result?
            inner = next(n for n in "abcd" if m.group(n) is not None)
            _, reading = strip_statement(text[m.start(inner) : m.end(inner)])
            if "assignment" not in reading:
                return None  # an equation, or working whose sides disagree
            return m.start(inner), m.end(inner), "chain_result"
    result = _PROSE_RESULT.match(text, last_equals + 1)
    if result is None or _CHAIN_GOES_ON.match(text, result.end()):
        return None
    emphasised = "**" in result.group(0) or "__" in result.group(0)
    if not emphasised and _NUMBER_AFTER.match(text, result.end()):
        return None  # "= 42 dollars, and she keeps 8"; in bold the result says it is one: "= **$64** for the 16"
    previous = text.rfind("=", 0, last_equals)
    working = _working_suffix(text[previous + 1 : last_equals])
    exact = evaluate(result.group("value"))
    if working is None or exact is None or not rounds_to(working, result.group("value")):
        return None
    return result.start(), result.end(), "chain_result"


_WORKING_START = re.compile(r"(?<![\w.,])(?=[(\\$]|-?\d)")


def _working_suffix(side: str) -> Fraction | None:
    """The value of the arithmetic the side ends with, after its words: "Adding the three weeks: 45 + 52 + 61"
    is worth 158; "So 2x" and "the total" are no arithmetic."""
    for m in _WORKING_START.finditer(side):
        worth = evaluate(side[m.start() :])
        if worth is not None:
            return worth
    return None


def _bold_result(text: str) -> tuple[int, int, str] | None:
    """The line's bold value that holds a number, when there is one, or when all such state one value; a bold
    label ("**Step 3:**") is no value."""
    spans = []
    for m in BOLD_SPAN.finditer(text):
        inner = (m.group(1) or m.group(2) or "").strip()
        if re.search(r"\d", inner) and not inner.endswith((":", "：")):
            spans.append(m)
    if not spans:
        return None
    values = {normalise(strip_statement(m.group(0))[0])[0] for m in spans}
    if len(values) != 1 or re.search(r"\d", ASIDES.sub(" ", BOLD_SPAN.sub(" ", text))):
        return None  # "**5** boys and **7** girls", "Reading 2: **19**": which number is the answer is not said
    last = spans[-1]
    return last.start(), last.end(), "bold_result"

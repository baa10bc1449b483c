"""The normalisation chain of a math answer (docs/scoring.md, math rule M4): named steps in a fixed order, each
recorded when it changed the text. The stated answer and the gold go through the same chain."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# \\[4pt] in a matrix or an aligned block: a row break with extra vertical space. Its bracket is a length,
# not math: math-verify reads "1 \\[4pt] 2" as 1 and 4*p*t*2.
_ROW_SPACING = re.compile(r"\\\\\s*\[\s*-?\d*\.?\d+\s*(?:pt|em|ex|mm|cm|in|bp|mu|pc|sp)\s*\]")
# The minus signs of typography (U+2212, and its small and full-width forms): models print them for "-".
_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})
# The root sign, as models print it: "2√3", "√(x+1)", "√{2}". math-verify reads "2√3" as 2 (it drops the rest
# without a word), so the sign becomes \sqrt{} of the number, letter, command, braces or parentheses after it.
_ROOT_SIGN = re.compile(
    r"√\s*(?:\{(?P<braced>[^{}]*)\}|\((?P<bracketed>[^()]*)\)|(?P<atom>\d+(?:\.\d+)?|\\[a-zA-Z]+|[A-Za-z]))"
)
# A multiple-choice letter in a MATH gold: "\text{(C)}" unwrapped is "(C)", the letter C.
_CHOICE_LETTER = re.compile(r"^\s*\(([A-Z])\)\s*$")
_DISPLAY_STYLE = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle)\b\s*")
# \left( \right], \bigl( ...: sizing commands before a delimiter; \left. and \right. are invisible delimiters.
_LEFT_RIGHT = re.compile(r"\\(?:left|right|[bB]igg?[lr]?)\s*(\.|(?=[()\[\]|]|\\[{}|]|\\[lr]?[vV]ert|\\lang|\\rang))")
_DFRAC = re.compile(r"\\[dt]frac\b")
# Digit groups in LaTeX or typography: 9\,901, 9{,}901, 9 901 (thin or no-break spaces). Only before exactly
# three digits, so that "3\,x" keeps its space and 1\,2345 is no grouping.
_LATEX_GROUPING = re.compile(r"(?<=\d)(?:\{,\}|\\,|\\ |[\u2009\u202f\u00a0])(?=\d{3}(?!\d))")
_SPACING = re.compile(
    r"(?<!\\)\\(?:[,;:! >]|quad\b|qquad\b|enspace\b|thinspace\b|medspace\b|thickspace\b|hspace\{[^{}]*\})|~"
)
_CURRENCY = re.compile(
    r"\\\$|\$(?=\s*[-\d.])|[€£¥₹]|\\(?:euro|pounds|yen)\b(?:\{\})?"
    r"|(?<=[\d}])\s*(?:\\text\{\s*)?(?:dollars?|USD|euros?|EUR|pounds?\s+sterling)\b(?:\s*\})?"
    r"|^\s*(?:USD|EUR)\s*(?=\d)",
    re.IGNORECASE,
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b|(?<=[\d}])\s*\\?(?:text\{\s*)?degrees?\b(?:\s*\})?")
_PERCENT = re.compile(r"\\%|%|(?<=[\d}])\s*(?:\\text\{\s*)?percent\b(?:\s*\})?")
# A unit in \text{} (or \mbox, \mathrm) after the answer: "5\text{ cm}^2", "18 \text{apples}". Its words are
# checked by _is_unit: "5\text{ thousand}" is no unit.
_TEXT_UNIT = re.compile(
    r"(?<=[\d}.)\]])\s*\\(?:text|mbox|mathrm|textrm)\s*\{\s*(?P<words>[A-Za-z][A-Za-z .\-/]*)\}(?:\^\{?\d\}?)?\s*$"
)
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textrm|mbox|mathrm|mathbf)\s*\{([^{}]*)\}")
# A number followed by plain words ("18 apples", "5 hours per day"): the words are a unit, when they hold no
# digit and are no math word ("2 pi", "3 sqrt 2" keep theirs).
_NUMBER_THEN_WORDS = re.compile(
    r"^(-?\d[\d,]*(?:\.\d+)?|-?\d*\.\d+|\\frac\{\d+\}\{\d+\})\s+([A-Za-z]{2}[A-Za-z .\-/']*(?:\^\d)?)$"
)
_MATH_WORDS = frozenset({"pi", "sqrt", "i", "e", "log", "ln", "sin", "cos", "tan", "mod", "times", "cdot", "and", "or"})
# Words after a number that change its value or say it is not the value: never dropped as a unit. Scale words
# ("5 million", "5\text{k}"), operations ("5 squared"), fraction words ("5 tenths"), relations and bounds
# ("5 less than x", "5 at most"), signs ("5 below zero"), and the words that join a value to more math.
_VALUE_WORDS = frozenset(
    {
        "k", "K", "M", "B", "G", "T", "bn", "mn", "mln", "mil", "mill", "thousand", "thousands", "million", "millions",
        "billion", "billions", "trillion", "trillions", "quadrillion", "hundred", "hundreds", "dozen", "dozens",
        "score", "gross", "grand", "lakh", "lakhs", "crore", "crores", "thou", "squared", "cubed", "square",
        "cube", "factorial", "reciprocal", "reciprocals", "inverse", "root", "roots", "power", "powers", "th",
        "half", "halves", "third", "thirds", "fourth", "fourths", "quarter", "quarters", "fifth", "fifths",
        "sixth", "sixths", "seventh", "sevenths", "eighth", "eighths", "ninth", "ninths", "tenth", "tenths",
        "hundredth", "hundredths", "thousandth", "thousandths", "millionth", "millionths", "percent",
        "negative", "positive", "minus", "plus", "below", "above", "under", "over", "less", "more", "fewer",
        "greater", "smaller", "larger", "than", "at", "most", "least", "to", "of", "times", "divided", "by",
        "not", "or", "but", "and", "no", "nor", "approximately", "about", "roughly", "nearly", "almost", "around",
        "up", "exactly", "only", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        "ten", "twenty", "exponent", "mod", "modulo", "equals", "equal", "is", "if", "when",
        "where", "with", "without", "off", "ago", "earlier", "later", "before", "after", "short", "extra",
        "left", "remaining", "total", "each", "cent", "cents", "pence",
    }
)  # fmt: skip

_TRAILING_ZEROS = re.compile(r"(?<![\d.])(\d+)\.0+(?![\d])")
_PLAIN_GROUPING = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_MIXED_LATEX = re.compile(r"^(-?)(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}$")
_MIXED_PLAIN = re.compile(r"^(-?)(\d+)\s+(\d+)/(\d+)$")
# "x = 5", "f(100) = 199", "\lim_{x\to\infty} f(x) = 0": one equals sign, its left side no relation.
ASSIGNMENT = re.compile(r"^(?P<name>[^=<>]+?)\s*=\s*(?P<value>[^=]+)$")
# "x \in [1, 2)", "x \in \{1, 2\}": one name, and the set or interval it is in.
_MEMBERSHIP = re.compile(r"^\s*[A-Za-z]\s*\\in(?![a-zA-Z])\s*(?P<value>\S.*)$", re.DOTALL)
_RELATION_WORDS = re.compile(r"\\(?:le|ge|leq|geq|lt|gt|ne|neq|approx|equiv|sim|in)(?![a-zA-Z])")
_FRAC_SHORTHAND = (
    (re.compile(r"\\frac\s*(\d)\s*(\d)"), r"\\frac{\1}{\2}"),
    (re.compile(r"\\frac\s*(\d)\s*\{"), r"\\frac{\1}{"),
    (re.compile(r"\\frac\s*(\{[^{}]*\})\s*(\d)"), r"\\frac\1{\2}"),
    (re.compile(r"\\sqrt\s*(\d)"), r"\\sqrt{\1}"),
)
_DELIMITERS = (
    re.compile(r"^\$\$(.*)\$\$$", re.DOTALL),
    re.compile(r"^\$((?:[^$\\]|\\.)*)\$$", re.DOTALL),  # \$ inside is a dollar sign
    re.compile(r"^\\\((.*)\\\)$", re.DOTALL),
    re.compile(r"^\\\[(.*)\\\]$", re.DOTALL),
)
# Whitespace is dropped (math mode ignores it), except one space between a control word and a letter:
# "\pi r" is not "\pir".
_SPACES = re.compile(r"\s+")
_CONTROL_WORD_END = re.compile(r"\\[a-zA-Z]+$")


def _root_sign(match: re.Match[str]) -> str:
    inner = next(group for group in match.group("braced", "bracketed", "atom") if group is not None)
    return f"\\sqrt{{{inner}}}"


def strip_delimiters(text: str) -> str:
    """The text without the math delimiters that wrap all of it ($…$, $$…$$, \\(…\\), \\[…\\])."""
    while True:
        inner = text.strip()
        for pattern in _DELIMITERS:
            m = pattern.match(inner)
            if m:
                inner = m.group(1).strip()
                break
        if inner == text:
            return text
        text = inner


def _spaces(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    keep = end < len(text) and text[end].isalpha() and _CONTROL_WORD_END.search(text, 0, start) is not None
    return " " if keep else ""


def _is_unit(words: str, *, short_ok: bool) -> bool:
    """Whether the words after a number are plainly a unit or a counted noun ("apples", "hours per day", "cm"):
    none a value word nor a math word, and (outside \\text{}) none of one or two letters, which read as
    variables ("5 xy"). `short_ok`: in \\text{}, a short word is a unit symbol ("5\\text{ m}")."""
    parts = [w.strip(".'") for w in re.split(r"[\s\-/]+", words) if w.strip(".'")]
    if not parts:
        return False
    for i, word in enumerate(parts):
        if word == "per" and 0 < i < len(parts) - 1:
            continue  # it joins two units: "5 hours per day"
        if word in _VALUE_WORDS or word.lower() in _VALUE_WORDS or word.lower() in _MATH_WORDS:
            return False
        if len(word) <= 2 and not short_ok:
            return False
    return True


def _unit_words(text: str) -> str:
    m = _NUMBER_THEN_WORDS.match(text.strip())
    if not m or not _is_unit(m.group(2), short_ok=False):
        return text
    return m.group(1)


def _plain_grouping(text: str) -> str:
    stripped = text.strip()
    return stripped.replace(",", "") if _PLAIN_GROUPING.match(stripped) else text


def _mixed_number(text: str) -> str:
    stripped = text.strip()
    for pattern, latex in ((_MIXED_LATEX, True), (_MIXED_PLAIN, False)):
        m = pattern.match(stripped)
        if m:
            sign, whole, num, den = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
            if 0 < num < den:
                top = whole * den + num
                return f"{sign}\\frac{{{top}}}{{{den}}}" if latex else f"{sign}{top}/{den}"
    return text


_CONTROL_WORDS = re.compile(r"\\[a-zA-Z]+")


def assignment_value(text: str) -> str | None:
    """The value of "x = 5", "n = \\frac{3}{2}", "f(100) = 199": one equals sign, a left side that is no list nor
    relation, and a value naming no variable; and the set of "x \\in [1, 2)". "y = 2x + 3" is an equation and
    stays one (its name is part of the answer); "x = 5, y = 3" is a pair."""
    member = _MEMBERSHIP.match(text)
    if member is not None:
        return member.group("value").strip()
    m = ASSIGNMENT.match(text)
    if m is None or "," in text or _RELATION_WORDS.search(text) or not _names_one_thing(m.group("name")):
        return None
    value = m.group("value").strip()
    if not value or re.search(r"[A-Za-z]", _CONTROL_WORDS.sub("", value)):
        return None
    return value


_GREEK = (
    "alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|pi|rho|sigma|"
    "tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Phi|Psi|Omega"
)
# One symbol: a letter or a Greek letter, optionally subscripted (a_{37}, x_1) and primed (x', y^{\prime}).
_SYMBOL = rf"(?:[A-Za-z]|\\(?:{_GREEK})(?![a-zA-Z]))(?:_\{{[^{{}}]*\}}|_[A-Za-z0-9])?(?:'+|\^\{{?\\prime\}}?)?"
# A left side that names one thing: one symbol, or a function (or its inverse) applied to arguments, perhaps
# under a limit: "x", "a_{37}", "f(100)", "h^{-1}(x)", "\lim_{x\to\infty} f(x)".
_ONE_NAME = re.compile(
    rf"^\s*(?:\\lim_\{{[^{{}}]*\}}\s*)?{_SYMBOL}(?:\s*\^\s*\{{\s*-\s*1\s*\}}|\^-1)?(?:\s*\([^()]*\))?\s*$"
)


def _names_one_thing(side: str) -> bool:
    """A left side that names one thing ("x", "f(100)", "a_{37}", "\\lim_{x\\to\\infty} f(x)"): "2x = 5",
    "x^2 = 5", "x + 1 = 5", "|x| = 5" are equations, and their right side is no value of anything asked."""
    return _ONE_NAME.match(side) is not None


def _assignment(text: str) -> str:
    value = assignment_value(text)
    return text if value is None else value


def _frac_braces(text: str) -> str:
    for pattern, replacement in _FRAC_SHORTHAND:
        text = pattern.sub(replacement, text)
    return text


def _text_units(text: str) -> str:
    while True:
        m = _TEXT_UNIT.search(text)
        if m is None or not _is_unit(m.group("words"), short_ok=True):
            return text
        text = text[: m.start()]


def _trailing_punctuation(text: str) -> str:
    # "!" after a digit or a closing bracket is a factorial (5! = 120), kept.
    return re.sub(r"(?:[\s.,;:]|(?<![\d})\]])!)+$", "", text)


# The chain, in order. Each step is named as it is recorded in a decision's `normalisation`.
STEPS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("math_delimiters", strip_delimiters),
    ("unicode_minus", lambda s: s.translate(_MINUS_SIGNS)),
    ("sqrt_sign", lambda s: _ROOT_SIGN.sub(_root_sign, s)),
    ("row_spacing", lambda s: _ROW_SPACING.sub(r"\\\\", s)),
    ("displaystyle", lambda s: _DISPLAY_STYLE.sub("", s)),
    ("left_right", lambda s: _LEFT_RIGHT.sub("", s)),
    ("dfrac", lambda s: _DFRAC.sub(r"\\frac", s)),
    ("thousands_separator", lambda s: _LATEX_GROUPING.sub("", s)),
    ("spacing", lambda s: _SPACING.sub(" ", s)),
    ("currency", lambda s: _CURRENCY.sub("", s)),
    ("degrees", lambda s: _DEGREES.sub("", s)),
    ("percent", lambda s: _PERCENT.sub("", s)),
    ("text_units", _text_units),
    ("text_unwrap", lambda s: _TEXT_WRAPPER.sub(r"\1", s)),
    ("choice_letter", lambda s: _CHOICE_LETTER.sub(r"\1", s)),
    ("unit_words", _unit_words),
    ("trailing_punctuation", _trailing_punctuation),
    ("trailing_zeros", lambda s: _TRAILING_ZEROS.sub(r"\1", s)),
    ("thousands_separator", _plain_grouping),
    ("variable_assignment", _assignment),
    ("frac_braces", _frac_braces),
    ("mixed_number", _mixed_number),
    ("whitespace", lambda s: _SPACES.sub(_spaces, s).strip()),
)


_UNIT_STEPS = ("text_units", "unit_words")


@functools.lru_cache(maxsize=8192)
def dropped_unit(text: str) -> str | None:
    """The unit the chain dropped from the text ("cm" of `5\text{ cm}`, "meters" of `5 meters`), in one spelling
    (no \text{}, braces or spaces, lower case, no plural s), or None when it dropped none. The values are compared
    without their units; two units that differ make the comparison "different" (decide.py)."""
    removed = []
    for name, step in STEPS:
        after = step(text)
        if name in _UNIT_STEPS and after != text:
            removed.append(text.strip()[len(after.strip()) :])
        text = after
    if not removed:
        return None
    unit = _TEXT_WRAPPER.sub(r"\1", " ".join(removed))
    unit = re.sub(r"[\s{}]+", "", unit).lower()
    return unit[:-1] if len(unit) > 3 and unit.endswith("s") else unit


def normalise(text: str) -> tuple[str, list[str]]:
    """The answer through the chain, and the names of the steps that changed it, in order."""
    normalised, applied = _normalise(text)
    return normalised, list(applied)


# Values repeat (the same gold for every sample of a task, the same placeholders in every reasoning): the chain
# is a pure function of the text, so its results are kept.
@functools.lru_cache(maxsize=8192)
def _normalise(text: str) -> tuple[str, tuple[str, ...]]:
    applied: list[str] = []
    for name, step in STEPS:
        after = step(text)
        if after != text:
            if name not in applied:
                applied.append(name)
            text = after
    return text, tuple(applied)

"""The normalisation chain of a math answer (docs/scoring/math.md, rule M4): named steps in a fixed order, each
recorded when it changed the text. The stated answer and the gold go through the same chain."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ocllm.scoring.math.arithmetic import evaluate, rounds_to
from ocllm.scoring.math.braces import top_level_items
from ocllm.scoring.math.words import (
    DOZEN,
    MATH_WORDS,
    MEASURE_WORDS,
    PHRASE_WORDS,
    SHARE_WORDS,
    SHORT_UNITS,
    VALUE_WORDS,
)

# \\[4pt] in a matrix or an aligned block: a row break with extra vertical space. Its bracket is a length,
# not math: math-verify reads "1 \\[4pt] 2" as 1 and 4*p*t*2.
_ROW_SPACING = re.compile(r"\\\\\s*\[\s*-?\d*\.?\d+\s*(?:pt|em|ex|mm|cm|in|bp|mu|pc|sp)\s*\]")
# The minus signs of typography (U+2212, and its small and full-width forms): models print them for "-".
_MINUS_SIGNS = str.maketrans({"\u2212": "-", "\ufe63": "-", "\uff0d": "-"})
# An en dash before a number with nothing before it is a minus sign ("–5"); between numbers it is a range ("3–5").
_EN_DASH_MINUS = re.compile(r"(?<![\w)}\]])\u2013(?=\s*\d)")
# The root sign, as models print it: "2√3", "√(x+1)", "√{2}". math-verify reads "2√3" as 2 (it drops the rest
# without a word), so the sign becomes \sqrt{} of the number, letter, command, braces or parentheses after it.
_ROOT_SIGN = re.compile(
    r"√\s*(?:\{(?P<braced>[^{}]*)\}|\((?P<bracketed>[^()]*)\)|(?P<atom>\d+(?:\.\d+)?|\\[a-zA-Z]+|[A-Za-z]))"
)
# A multiple-choice letter in a MATH gold: "\text{(C)}" unwrapped is "(C)", the letter C.
_CHOICE_LETTER = re.compile(r"^\s*\(([A-Z])\)\s*$")
# Typography in the words around a value, as gpt-oss writes nearly every answer: non-breaking and narrow spaces,
# non-breaking hyphens, zero-width characters, curly quotes. Applied after digit groups are read (a narrow space
# between digits is a thousands separator there), so that "60 % of the students in hip‑hop" reads as words.
TYPOGRAPHY = str.maketrans(
    {"\u2010": "-", "\u2011": "-", "\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2007": " ", "\u2002": " ",
     "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2008": " ", "\u200a": " ", "\u2018": "'",
     "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u200b": None, "\u2060": None, "\ufeff": None, "\u00ad": None}
)  # fmt: skip
_DISPLAY_STYLE = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle)\b\s*")
# \left( \right], \bigl( ...: sizing commands before a delimiter; \left. and \right. are invisible delimiters.
_LEFT_RIGHT = re.compile(r"\\(?:left|right|[bB]igg?[lr]?)\s*(\.|(?=[()\[\]|]|\\[{}|]|\\[lr]?[vV]ert|\\lang|\\rang))")
_DFRAC = re.compile(r"\\[dt]frac\b")
# Digit groups in LaTeX or typography: 9\,901, 9{,}901, 9 901 (thin or no-break spaces). Only before exactly
# three digits, so that "3\,x" keeps its space and 1\,2345 is no grouping.
_LATEX_GROUPING = re.compile(r"(?<=\d)(?:\{,\}|\\,|\\ |[\u2009\u202f\u00a0])(?=\d{3}(?!\d))")
# MATH's own golds group thousands as "10,\!080" (a comma, then a negative thin space): the same grouping, of a
# number standing alone (in "(1,\!100)" the comma may be a tuple's).
_MATH_GROUPING = re.compile(r"(?<![\d(\[,.])\d{1,3}(?:,\\!\d{3})+(?!\d)")


def _latex_grouping(text: str) -> str:
    ungrouped = _MATH_GROUPING.sub(lambda m: m.group(0).replace(",\\!", ""), text)
    return _LATEX_GROUPING.sub("", ungrouped)
_SPACING = re.compile(
    r"(?<!\\)\\(?:[,;:! >]|quad\b|qquad\b|enspace\b|thinspace\b|medspace\b|thickspace\b|hspace\{[^{}]*\})"
    r"|(?<=\S)~"  # a tie between two things; "~19" at the start is "about 19" and stays
)
_CURRENCY = re.compile(
    r"\\\$|\$(?=\s*[-\d.])|[€£¥₹]|\\(?:euro|pounds|yen)\b(?:\{\})?"
    r"|(?<=[\d}])\s*(?:\\text\{\s*)?(?:dollars?|USD|euros?|EUR|pounds?\s+sterling)\b(?:\s*\})?"
    r"|^\s*(?:USD|EUR)\s*(?=\d)",
    re.IGNORECASE,
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b|(?<=[\d}])\s*\\?(?:text\{\s*)?degrees?\b(?:\s*\})?")
_PERCENT = re.compile(r"\\%|%|(?<=[\d}])\s*(?:\\text\{\s*)?per[ ]?cent\b(?:\s*\})?")
# Superscript digits as models print powers and units: "25 m²", "x³", "10²".
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
# Two numbers with only a space between them are two numbers ("12 15", "1 \quad 9"), never one: a list, unless the
# second is a group of exactly three digits ("1 000 000").
_DIGIT_GAP = re.compile(r"(?<=\d)\s+(?=\d)")
# A unit in \text{} (or \mbox, \mathrm) after the answer: "5\text{ cm}^2", "18 \text{apples}". Its words are
# checked by _is_unit: "5\text{ thousand}" is no unit.
_TEXT_UNIT = re.compile(
    r"(?<=[\d}.)\]])\s*\\(?:text|mbox|mathrm|textrm)\s*\{\s*(?P<words>[A-Za-z][A-Za-z .\-/]*)\}(?:\^\{?\d\}?)?\s*$"
)
_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textrm|mbox|mathrm|mathbf)\s*\{([^{}]*)\}")
# A number followed by plain words ("18 apples", "5 hours per day"): the words are a unit, when they hold no
# digit and are no math word ("2 pi", "3 sqrt 2" keep theirs).
_NUMBER_THEN_WORDS = re.compile(
    r"^(-?\d[\d,]*(?:\.\d+)?|-?\d*\.\d+|\\frac\{\d+\}\{\d+\})\s*(\(?)\s*([A-Za-z]{2}[A-Za-z .\-/']*?)"
    r"(?:\^\{?\d\}?)?\s*(\)?)$"
)
_TRAILING_ZEROS = re.compile(r"(?<![\d.])(\d+)\.0+(?![\d])")
_PLAIN_GROUPING = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_MIXED_LATEX = re.compile(r"^(-?)(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}$")
_MIXED_PLAIN = re.compile(r"^(-?)(\d+)\s+(\d+)/(\d+)$")
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


def _is_unit(words: str, *, short_ok: bool, dozens: bool = False) -> bool:
    """Whether the words after a number are a unit phrase that names what is counted ("apples", "hours per day",
    "cm", "bags of flour in the first month", "square metres", "dozens"), not a change of value (words.py):
    no value word nor math word, except the phrase words after the first word, "square"/"cubic" before a unit, and
    "dozen(s)" with nothing but "of …" after it; and (outside \\text{}) no first word of one or two letters, which
    reads as a variable ("5 xy"). `short_ok`: in \\text{}, a short word is a unit symbol ("5\\text{ m}")."""
    parts = [w.strip(".'") for w in re.split(r"[\s\-/]+", words) if w.strip(".'")]
    if not parts:
        return False
    for i, word in enumerate(parts):
        lower = word.lower()
        rest = parts[i + 1 :]
        if lower in SHARE_WORDS or (i > 0 and lower in PHRASE_WORDS) or lower == "of":
            continue  # "$255 each month", "5 bags of flour", "18 apples left", "60 % of the students"
        if lower in MEASURE_WORDS and rest and rest[0].lower() not in VALUE_WORDS | MATH_WORDS | PHRASE_WORDS:
            continue  # "60 square metres"
        if dozens and lower in DOZEN and (not rest or rest[0].lower() == "of"):
            continue  # "7 dozens", "3 dozens of eggs", where the question counts dozens
        if word in VALUE_WORDS or lower in VALUE_WORDS or lower in MATH_WORDS:
            return False
        if len(word) <= 2 and not short_ok and lower not in SHORT_UNITS:
            return False
    return True


def _unit_words(text: str, dozens: bool = False) -> str:
    m = _NUMBER_THEN_WORDS.match(text.strip())
    if not m or bool(m.group(2)) != bool(m.group(4)) or not _is_unit(m.group(3), short_ok=False, dozens=dozens):
        return text  # no unit, or a bracket that does not close around it ("19 (pencils)" is 19, "19 (pencils" is not)
    if not m.group(2) and m.end(1) == m.start(3):
        return text  # "5km": a unit is written apart from its number here (and "2x" is no unit)
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
# What names no variable inside a value: an environment's name (\begin{pmatrix}), an aside in \text{}.
_NOT_VARIABLES = re.compile(r"\\(?:begin|end)\{[A-Za-z*]+\}|\\(?:text|mbox|mathrm|textrm)\s*\{[^{}]*\}")
# An equals sign, not one of <=, >=, ==, !=.
_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")


def assignment_value(text: str) -> str | None:
    """The value an equation states as the answer (rule M3, "left sides"), or None when it states none:
    - one name and its value: "x = 5", "n = \\frac{3}{2}", "f(100) = 199", "\\mathbf{u} = \\begin{pmatrix}…", and
      the set of "x \\in [1, 2)"; one name and a list of values, "x = 2, 4, 6";
    - a tuple of names and a tuple of as many values, "(a,b,c) = (2,7,-4)";
    - working that ends in its value: a side of numbers only that equals the value ("10 * 10 = 100",
      "\\frac{3}{8} = 0.375"), also where it rounds to the places written ("100/3 = 33.33");
    - a chain of equals signs that ends in a value ("PQ\\cdot PR = mn = 312"), its sides of numbers agreeing.
    Never: an equation ("2x = 5", "x + 1 = 5", "y = 2x + 3", whose right side names a variable), working whose
    sides disagree ("10 * 10 = 110"), a pair "x = 5, y = 3", or a relation other than equality."""
    member = _MEMBERSHIP.match(text)
    if member is not None:
        return member.group("value").strip()
    if _RELATION_WORDS.search(text) or re.search(r"[<>≤≥≠≈]", text):
        return None
    sides = [side.strip() for side in _EQUALS.split(text)]
    if len(sides) < 2 or not all(sides):
        return None
    value, before = sides[-1], sides[:-1]
    if _names_variable(value) or any(top_level_items(side) > 1 for side in before):
        return None  # "x = y + 1"; "x = 5, y = 3" is a pair
    listed = top_level_items(value) > 1
    if listed and not (len(before) == 1 and _names_one_thing(before[0])):
        return None  # only "x = 2, 4, 6" lists the values of one name
    exact = None if listed else evaluate(value)
    for side in before:
        worth = evaluate(side)
        if worth is not None:
            if exact is None or not rounds_to(worth, value):
                return None  # working whose sides disagree states nothing
        elif len(before) == 1 and not (_names_one_thing(side) or _names_tuple(side, value)):
            return None  # an equation: "2x = 5", "x + 1 = 5"
        elif len(before) > 1 and re.search(r"\d", side):
            return None  # in a chain, a side of names ("mn") or of numbers; "x = 2 \text{ or } x = 3" is neither
    return value


def _names_variable(value: str) -> bool:
    return re.search(r"[A-Za-z]", _CONTROL_WORDS.sub("", _NOT_VARIABLES.sub("", value))) is not None


_GREEK = (
    "alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|pi|rho|sigma|"
    "tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Phi|Psi|Omega"
)
# One symbol: a letter or a Greek letter, optionally subscripted (a_{37}, x_1) and primed (x', y^{\prime}); a
# letter in bold or with an arrow, bar or hat (\mathbf{u}, \vec{v}, \overline{AB}); a segment of two capitals
# (AB); an angle (\angle ABC).
_SYMBOL = (
    rf"(?:[A-Za-z]|[A-Z]{{2}}|\\(?:{_GREEK})(?![a-zA-Z])"
    r"|\\(?:mathbf|vec|boldsymbol|bm|overline|overrightarrow|hat|bar|tilde)\s*\{[A-Za-z]{1,3}\}|\\angle\s*[A-Z]{1,3})"
    r"(?:_\{[^{}]*\}|_[A-Za-z0-9])?(?:'+|\^\{?\\prime\}?)?"
)
# A left side that names one thing: one symbol, or a function (or its inverse) applied to arguments, perhaps
# under a limit: "x", "a_{37}", "f(100)", "h^{-1}(x)", "\lim_{x\to\infty} f(x)".
_ONE_NAME = re.compile(
    rf"^\s*(?:\\lim_\{{[^{{}}]*\}}\s*)?{_SYMBOL}(?:\s*\^\s*\{{\s*-\s*1\s*\}}|\^-1)?(?:\s*\([^()]*\))?\s*$"
)
_NAMES = re.compile(rf"^\s*\(\s*{_SYMBOL}(?:\s*,\s*{_SYMBOL})+\s*\)\s*$")


def _names_tuple(side: str, value: str) -> bool:
    """"(a,b,c)" before "(2,7,-4)": a tuple of names, and a bracketed value of as many entries."""
    inner = value.strip()
    if _NAMES.match(side) is None or len(inner) < 2 or inner[0] not in "([" or inner[-1] not in ")]":
        return False
    return top_level_items(side.strip()[1:-1]) == top_level_items(inner[1:-1])


def _names_one_thing(side: str) -> bool:
    """A left side that names one thing ("x", "f(100)", "a_{37}", "\\lim_{x\\to\\infty} f(x)"): "2x = 5",
    "x^2 = 5", "x + 1 = 5", "|x| = 5" are equations, and their right side is no value of anything asked."""
    return _ONE_NAME.match(side) is not None


def _assignment(text: str) -> str:
    value = assignment_value(text)
    return text if value is None else value


def _digit_gaps(text: str) -> str:
    def gap(m: re.Match[str]) -> str:
        rest = text[m.end() :]
        grouped = re.match(r"\d{3}(?!\d)", rest) is not None and re.search(r"\d{1,3}$", text[: m.start()]) is not None
        return "" if grouped else ","

    return _DIGIT_GAP.sub(gap, text)


def _frac_braces(text: str) -> str:
    for pattern, replacement in _FRAC_SHORTHAND:
        text = pattern.sub(replacement, text)
    return text


def _text_units(text: str, dozens: bool = False) -> str:
    while True:
        m = _TEXT_UNIT.search(text)
        if m is None or not _is_unit(m.group("words"), short_ok=True, dozens=dozens):
            return text
        text = text[: m.start()]


def _trailing_punctuation(text: str) -> str:
    # "!" after a digit or a closing bracket is a factorial (5! = 120), kept.
    return re.sub(r"(?:[\s.,;:]|(?<![\d})\]])!)+$", "", text)


# The chain, in order. Each step is named as it is recorded in a decision's `normalisation`.
STEPS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("math_delimiters", strip_delimiters),
    ("unicode_minus", lambda s: _EN_DASH_MINUS.sub("-", s.translate(_MINUS_SIGNS))),
    ("sqrt_sign", lambda s: _ROOT_SIGN.sub(_root_sign, s)),
    ("superscripts", lambda s: _SUPERSCRIPTS.sub(lambda m: f"^{{{m.group(0).translate(_SUPERSCRIPT_DIGITS)}}}", s)),
    ("row_spacing", lambda s: _ROW_SPACING.sub(r"\\\\", s)),
    ("displaystyle", lambda s: _DISPLAY_STYLE.sub("", s)),
    ("left_right", lambda s: _LEFT_RIGHT.sub("", s)),
    ("dfrac", lambda s: _DFRAC.sub(r"\\frac", s)),
    ("thousands_separator", _latex_grouping),
    ("typography", lambda s: s.translate(TYPOGRAPHY)),
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
    ("digit_gaps", _digit_gaps),
    ("whitespace", lambda s: _SPACES.sub(_spaces, s).strip()),
)


_UNIT_STEPS = ("text_units", "unit_words")
# When the question counts dozens ("How many dozen eggs …?"), "7 dozens" states 7: the chain with dozen as a unit.
_DOZEN_STEPS = tuple(
    (name, {"text_units": lambda s: _text_units(s, True), "unit_words": lambda s: _unit_words(s, True)}.get(name, step))
    for name, step in STEPS
)
# Where a unit's name ends and the words about what it counts begin: "bags" of "bags of flour in the first month".
_UNIT_NAME_ENDS = (PHRASE_WORDS | SHARE_WORDS | {"for", "the", "with"}) - {"per"}


@functools.lru_cache(maxsize=8192)
def dropped_unit(text: str, dozens: bool = False) -> str | None:
    """The unit the chain dropped from the text ("cm" of `5\text{ cm}`, "meters" of `5 meters`, "bags" of `5 bags
    of flour`), in one spelling (no \text{}, braces or spaces, lower case, no plural s), or None when it dropped
    none. The values are compared without their units; two units that differ make the comparison "different"
    (decide.py)."""
    removed = []
    for name, step in _DOZEN_STEPS if dozens else STEPS:
        after = step(text)
        if name in _UNIT_STEPS and after != text:
            removed.append(text.strip()[len(after.strip()) :])
        text = after
    if not removed:
        return None
    words = _TEXT_WRAPPER.sub(r"\1", " ".join(removed)).split()
    cut = next((i for i, word in enumerate(words) if i > 0 and word.lower() in _UNIT_NAME_ENDS), len(words))
    unit = re.sub(r"[\s{}]+", "", "".join(words[:cut])).lower()
    return unit[:-1] if len(unit) > 3 and unit.endswith("s") else unit


def normalise(text: str, *, dozens: bool = False) -> tuple[str, list[str]]:
    """The answer through the chain, and the names of the steps that changed it, in order. `dozens`: the question
    counts dozens, so "dozen(s)" after a number is its unit."""
    normalised, applied = _normalise(text, dozens)
    return normalised, list(applied)


# Values repeat (the same gold for every sample of a task, the same placeholders in every reasoning): the chain
# is a pure function of the text, so its results are kept.
@functools.lru_cache(maxsize=8192)
def _normalise(text: str, dozens: bool = False) -> tuple[str, tuple[str, ...]]:
    applied: list[str] = []
    for name, step in _DOZEN_STEPS if dozens else STEPS:
        after = step(text)
        if after != text:
            if name not in applied:
                applied.append(name)
            text = after
    return text, tuple(applied)

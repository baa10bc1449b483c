"""Compare a stated value ("1284", "\\frac{3}{4}", "Paris") with the options' texts.

Used where a statement names a value instead of a letter, and to check that an option line's text
really is that option's text. Normalising is deliberately modest: wrappers and LaTeX spelling go,
case and surrounding punctuation go, numbers compare as numbers; units and words stay.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import NamedTuple

_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|operatorname|boxed|mbox)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_SPACES = re.compile(r"\\[,;:! ]|\\quad|\\qquad|~")
# A LaTeX dollar sign (\$0.66) goes as a plain "$" does: both sides of a comparison lose it alike.
_MATH_DELIMS = re.compile(r"\\\(|\\\)|\\\[|\\\]|\\?\$")
_DEGREE = re.compile(r"\^\s*\{?\\circ\}?|\\circ|\\degree")
# A number written without its leading zero (".66", "$.66", "-.5"): the zero is put back, so that the point
# is not taken for edge punctuation and ".66" and "0.66" are one number.
_BARE_POINT = re.compile(r"(?<![\w.])\.(?=\d)")
_EDGE_PUNCT = " \t\r\n.,;:!?*_\"'`()[]{}"
# A sign may stand apart from its number by one space after a plus ("+ 3.03 kJ"); "- 3" is also a list bullet.
NUMBER = re.compile(r"(?:[-−]|\+ ?)?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+(?:\.\d+)?)?|\.\d+)")


def normalize(text: str) -> str:
    """One spelling per value: LaTeX unwrapped, fractions as a/b, roots as √(x), exponents as ^n, case
    folded, edges trimmed."""
    s = text
    for _ in range(3):  # nested wrappers: \boxed{\text{...}}
        s = _WRAPPERS.sub(r"\1", s)
    s = _roots(s)  # before fractions: "\frac{\sqrt{3}}{2}"
    s = _FRAC.sub(r"\1/\2", s)
    s = _DEGREE.sub("°", s)
    s = _LATEX_SPACES.sub(" ", s)
    s = _MATH_DELIMS.sub("", s)
    s = s.replace("\\%", "%").replace("\\cdot", "·").replace("\\times", "×").replace("\\pi", "π")
    s = _PI_WORD.sub("π", s)
    s = _SUPERSCRIPTS.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPT_DIGITS), s)
    s = _BRACED_EXPONENT.sub(r"^\1", s)
    s = _PRODUCT.sub(r"\1", s)
    s = " ".join(s.split()).casefold()
    s = _BARE_POINT.sub("0.", s)
    return s.strip(_EDGE_PUNCT)


# Roots, pi and exponents in each of their spellings: "\sqrt{2}", "\sqrt2", "sqrt(2)", "√(2)", "√{2}" are all
# "√2" (a longer radicand keeps its brackets: "√(x+1)"); "\pi" and "pi" are "π"; "²", "^{2}" are "^2"; a number
# times a root or pi is written without its sign ("4*sqrt(2)", "4 \cdot \sqrt{2}", "4 √2" are "4√2"). Other
# products ("2 \times 10^3", "4*2") stay as they are.
_LATEX_ROOT = re.compile(r"\\sqrt\s*(?:\{([^{}]*)\}|([0-9a-zA-Z]))")
_OTHER_ROOT = re.compile(r"(?:\bsqrt\s*|√\s*)\(([^()]*)\)|√\s*\{([^{}]*)\}", re.IGNORECASE)
_SIMPLE_RADICAND = re.compile(r"\d+(?:\.\d+)?|[a-zA-Z]")
_PI_WORD = re.compile(r"(?<![a-zA-Z])pi(?![a-zA-Z])", re.IGNORECASE)
_PRODUCT = re.compile(r"([\d)])\s*[*·]?\s*(?=[√π])")
_SUPERSCRIPTS = re.compile(r"[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_BRACED_EXPONENT = re.compile(r"\^\s*\{\s*([-+]?\w+)\s*\}")


def _root(m: re.Match[str]) -> str:
    radicand = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
    return "√" + radicand if _SIMPLE_RADICAND.fullmatch(radicand) else f"√({radicand})"


def _roots(s: str) -> str:
    if "√" not in s and "sqrt" not in s.lower():
        return s
    for _ in range(3):  # nested roots: "\sqrt{\sqrt{2}}"
        s = _LATEX_ROOT.sub(_root, s)
    return _OTHER_ROOT.sub(_root, s)


def _as_number(s: str) -> tuple[Fraction, str] | None:
    """A leading number and the unit after it ("48 °c" -> (48, "°c")), or None."""
    m = NUMBER.match(s)
    if m is None:
        return None
    raw = m.group(0).replace(",", "").replace("−", "-").replace(" ", "")
    try:
        if "/" in raw:
            num, den = raw.split("/")
            value = Fraction(num) / Fraction(den)
        else:
            value = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        return None
    return value, s[m.end() :].replace(" ", "")


class ValueKey(NamedTuple):
    """A text as compared: its normal spelling, and its number and unit when it starts with one."""

    text: str
    number: tuple[Fraction, str] | None


@functools.lru_cache(maxsize=16384)
def value_key(text: str) -> ValueKey:
    # Cached: the same values come back again and again (option texts, "4", "FINAL: B. 4" across a suite).
    norm = normalize(text)
    return ValueKey(norm, _as_number(norm) if norm else None)


def same_key(a: ValueKey, b: ValueKey) -> bool:
    """Equal after normalising; numbers compare as numbers, with the same unit (or none)."""
    if not a.text or not b.text:
        return False
    return a.text == b.text or (a.number is not None and a.number == b.number)


def same_value(a: str, b: str) -> bool:
    return same_key(value_key(a), value_key(b))


def matching_options(value: str, option_keys: tuple[ValueKey, ...]) -> list[int]:
    """Indexes of the options whose text equals `value`. A bare number with no unit also matches the
    options that are that number with a unit ("492" for "492 J"), when no option equals it exactly."""
    key = value_key(value)
    if not key.text:
        return []
    exact = [i for i, option in enumerate(option_keys) if same_key(key, option)]
    if exact or key.number is None or key.number[1] or key.text != _number_text(key.text):
        return exact
    return [
        i for i, option in enumerate(option_keys) if option.number is not None and option.number[0] == key.number[0]
    ]


def _number_text(normal: str) -> str:
    m = NUMBER.match(normal)
    return m.group(0) if m else ""

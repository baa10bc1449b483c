"""Plain arithmetic on written numbers (docs/scoring/math.md, rule M3, "working"): the value of `10 * 10`,
`$12 + $30 + $8`, `\\frac{3}{8}` or `2\\;(\\text{all white})\\;+\\;900`, read exactly as Fractions, or None when
the text is anything else (a variable, a function, a power too large to be working).

A side of an equation that is only arithmetic is working, not something asked for: `10 * 10 = 100` states
100 when the sides agree, and nothing when they do not (`10 * 10 = 110`). This module only says what such a
side is worth; statements.py and normalise.py decide what to do with it.
"""

from __future__ import annotations

import re
from fractions import Fraction

from ocllm.scoring.math.words import VALUE_WORDS

# Written around numbers without changing them: \text{...} asides ("2\;(\text{all-white or all-black})"), money
# and percent signs, math delimiters and spacing, \left/\right, and the words of a unit phrase after a number
# ("2 bolts of blue fiber + 1 bolt"), none of them a value word (words.py).
_ASIDE = re.compile(r"\\(?:text|mathrm|mbox|textrm)\s*\{[^{}]*\}")
_UNIT_WORD = r"(?:[A-Za-z][A-Za-z'’]{2,}|cm|mm|km|kg|mg|ml|ft|hr|yd|mi|lb|oz)"
_UNIT_PHRASE = rf"{_UNIT_WORD}(?:/{_UNIT_WORD})?(?:\s+(?:{_UNIT_WORD}(?:/{_UNIT_WORD})?|of|in|on|a|an|per))*"
_NOISE = re.compile(
    r"\\(?:left|right)(?![a-zA-Z])|\\[,;:! ]|\\q?quad(?![a-zA-Z])|\\\$|[$€£%]|\\\(|\\\)|\\\[|\\\]|\\%"
    rf"|(?<=[\d)\s]){_UNIT_PHRASE}(?=\s*(?:[-+*/×÷·=)]|$))"
)
_WORD = re.compile(r"[A-Za-z]+")
_OPERATORS = {"\\times": "*", "\\cdot": "*", "×": "*", "·": "*", "⋅": "*", "\\div": "/", "÷": "/", "−": "-", "–": "-"}
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_TOKEN = re.compile(r"\s*(?:(\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)|([-+*/()]))")
# Longest text read, and the largest power raised: working is short, and 9^{9^{9}} is no working.
_LONGEST = 400
_LARGEST_EXPONENT = 64
_LARGEST_BITS = 20_000


def evaluate(text: str) -> Fraction | None:
    """The exact value of a side that is only numbers and + - * / × ÷ · ^ \\frac and brackets, or None."""
    if len(text) > _LONGEST or not re.search(r"\d", text):
        return None
    cleaned = text
    for name, symbol in _OPERATORS.items():
        cleaned = cleaned.replace(name, symbol)
    while True:
        replaced = _FRAC.sub(r"((\1)/(\2))", cleaned)
        if replaced == cleaned:
            break
        cleaned = replaced
    cleaned = _ASIDE.sub(" ", cleaned)
    if any(word.lower() in VALUE_WORDS for word in _WORD.findall(cleaned)):
        return None  # "2 million + 3", "5 times": words that change a number are no unit
    cleaned = _NOISE.sub(" ", cleaned)
    cleaned = re.sub(r"\(\s*\)", " ", cleaned)  # the brackets of an aside removed above
    cleaned = re.sub(r"\^\s*\{([^{}]*)\}", r"^(\1)", cleaned).replace("{", "(").replace("}", ")")
    tokens: list[str] = []
    at = 0
    cleaned = cleaned.strip()
    while at < len(cleaned):
        if cleaned[at] == "^":
            tokens.append("^")
            at += 1
            continue
        m = _TOKEN.match(cleaned, at)
        if m is None or m.end() == at:
            if cleaned[at].isspace():
                at += 1
                continue
            return None  # a letter, a command, anything that is not arithmetic
        tokens.append(m.group(1) or m.group(2))
        at = m.end()
    return _Parser(tokens).value()


class _Parser:
    """Recursive descent over + - (lowest), * / (implicit between a number and a bracket too), ^, unary sign."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def value(self) -> Fraction | None:
        try:
            result = self._sum()
        except (ArithmeticError, ValueError, _NotArithmetic):
            return None
        return result if self.at == len(self.tokens) else None

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise _NotArithmetic
        self.at += 1
        return token

    def _sum(self) -> Fraction:
        total = self._product()
        while self._peek() in ("+", "-"):
            total = total + self._product() if self._take() == "+" else total - self._product()
        return total

    def _product(self) -> Fraction:
        total = self._power()
        while self._peek() in ("*", "/", "("):
            op = self._take() if self._peek() != "(" else "*"
            right = self._power()
            total = total * right if op == "*" else total / right
        return total

    def _power(self) -> Fraction:
        base = self._unary()
        if self._peek() != "^":
            return base
        self._take()
        exponent = self._power()
        if exponent.denominator != 1 or abs(exponent) > _LARGEST_EXPONENT:
            raise _NotArithmetic
        if max(base.numerator.bit_length(), base.denominator.bit_length()) * abs(exponent) > _LARGEST_BITS:
            raise _NotArithmetic  # (10^64)^64)^64: each power small, the number not
        return base ** int(exponent)

    def _unary(self) -> Fraction:
        token = self._take()
        if token == "-":
            return -self._unary()
        if token == "+":
            return self._unary()
        if token == "(":
            inner = self._sum()
            if self._take() != ")":
                raise _NotArithmetic
            return inner
        if token[0].isdigit() or token[0] == ".":
            return Fraction(token.replace(",", ""))
        raise _NotArithmetic


class _NotArithmetic(Exception):
    pass


def rounds_to(exact: Fraction, written: str) -> bool:
    """Whether a number as written is `exact`, or `exact` rounded to the places written: `100/3 = 33.33` is
    working that rounds, `10 * 10 = 110` is not."""
    stated = evaluate(written)
    if stated is None:
        return False
    if stated == exact:
        return True
    decimals = re.search(r"\.(\d+)\s*$", re.sub(r"[^\d.]", "", written))
    if decimals is None:
        return False
    half_place = Fraction(1, 2 * 10 ** len(decimals.group(1)))
    return abs(exact - stated) <= half_place

"""The screen before the symbolic step (docs/scoring/math.md, rule M6, "the screen"): a normalised answer or gold
whose value cannot be evaluated in any bounded time or memory is not sent to math-verify at all.

sympy evaluates a number written as a power or a factorial exactly: `9^{9^{9^{9}}}` has about 10^369,693,100
digits, `123456!` 574,965, and `(x+1)^{20000}` expands to 20,001 terms. Such a check would only run into its
CPU-time limit (or the memory limit) after seconds of work, each time it is met; the screen says so at once, the
same way every time. It reads the text with a small tolerant parser (numbers, letters, commands, brackets, `^` and
`**`, `!`, the four operations, `\\frac`) and bounds, for every exact number it meets, the count of its digits
(for a fraction, of its larger term) from the bounds of its parts: a product or a sum of two numbers has at most
the digits of both, a power `a^b` at most |b| times those of `a`, a factorial `n!` at most log10(n!) for the
largest n the bound allows. What it does not understand (a function, a relation, a separator) it passes over;
letters, `e` and `\\pi` are no exact numbers.

A text is screened when one of these holds (the thresholds are generous: an answer of a competition or of
GSM8K is far below each):
- a number written out with more than MAX_LITERAL_DIGITS (10,000) digits;
- a power or factorial whose value would have more than MAX_DIGITS (10,000) digits (`2^{33220}`, `3250!`);
  `2^{10}`, `10!`, `3^{2^{3}}`, `2^{2005}`, `\\frac{1}{2004!}` are far below;
- a power of an expression with variables (or of `e`, `\\pi`) whose exponent may exceed MAX_SYMBOLIC_EXPONENT
  (10,000) in absolute value (`(x+1)^{20000}`, `e^{10^{10}}`).
A power is read right to left: `2^2^2^2^2` is 2^(2^(2^(2^2))), the larger reading. A text nested deeper than
MAX_DEPTH brackets and powers is not read past that depth (the CPU-time limit still holds there).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Literal, NamedTuple

MAX_LITERAL_DIGITS = 10_000
MAX_DIGITS = 10_000
MAX_SYMBOLIC_EXPONENT = 10_000
MAX_DEPTH = 100

ScreenKind = Literal["literal", "power", "power_tower", "factorial", "exponent"]


class Screened(NamedTuple):
    kind: ScreenKind
    detail: str  # a sentence: what fired, on which part of the text, and the threshold


def screen(text: str) -> Screened | None:
    """Why the text's value cannot be evaluated by the symbolic step, if it cannot; None for ordinary text."""
    if (long_run := _long_digit_run(text)) is not None:
        return long_run
    try:
        _Reader(text).read()
    except _Fired as fired:
        return fired.screened
    except (_TooDeep, RecursionError):
        return None  # nested too deep to read here: the CPU-time limit still holds
    return None


# A run of more decimal digits than a literal may hold, in any script (Unicode's Nd: "١٢٣", "१२३", "１２３").
_LONG_DIGIT_RUN = re.compile(rf"\d{{{MAX_LITERAL_DIGITS + 1},}}")


def _long_digit_run(text: str) -> Screened | None:
    """A literal too long, decided before the reader: a run of digits outside ASCII. The reader takes an ASCII run
    as one token and screens it by its significant digits; every other digit is a token of its own, walked one
    by one in Python (500,000 Arabic-Indic digits cost seconds). Found by one regex scan, in C."""
    for m in _LONG_DIGIT_RUN.finditer(text):
        run = m.group(0)
        if run.isascii():
            continue  # the reader's own case, one token: its verdict stays the reader's
        zeros = 0
        while zeros < len(run) and unicodedata.decimal(run[zeros]) == 0:
            zeros += 1  # leading zeros, in whatever script: no significant digits, as the reader counts
        significant = len(run) - zeros
        if significant > MAX_LITERAL_DIGITS:
            return Screened("literal", (
                f"it writes a number of {significant:,} digits (not all ASCII digits), more than "
                f"{MAX_LITERAL_DIGITS:,} (the screen's limit)"
            ))  # fmt: skip
    return None


# ---- the reader ----------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\d+(?:\.\d*)?|\.\d+|\\[a-zA-Z]+|\\.|\*\*|.", re.DOTALL | re.ASCII)
# The digits a number is written in: "²" and "①" are digits to str.isdigit, and no number the reader can count.
_DIGITS = frozenset("0123456789")
_OPEN = {"{": "}", "(": ")", "[": "]", "\\{": "\\}", "\\lbrace": "\\rbrace"}
_CLOSE = frozenset({"}", ")", "]", "\\}", "\\rbrace"})
_ADD = frozenset({"+", "-", "\\pm", "\\mp"})
_MULTIPLY = frozenset({"*", "/", "\\cdot", "\\times", "\\div"})
_FRACTIONS = frozenset({"\\frac", "\\dfrac", "\\tfrac", "\\cfrac"})
_IGNORED = frozenset({"\\left", "\\right", "\\displaystyle", "\\,", "\\;", "\\!", "\\:", "\\ "})
# Commands that are operators or relations, never a value: they separate what the reader bounds.
_SEPARATORS = frozenset(
    {
        "\\le", "\\ge", "\\leq", "\\geq", "\\lt", "\\gt", "\\ne", "\\neq", "\\in", "\\notin", "\\cup", "\\cap",
        "\\setminus", "\\to", "\\approx", "\\equiv", "\\sim", "\\subset", "\\subseteq", "\\wedge", "\\vee",
        "\\mid", "\\quad", "\\qquad", "\\\\", "\\implies", "\\iff", "\\rightarrow", "\\Rightarrow",
    }
)  # fmt: skip
_LOG10_2 = math.log10(2)


class _Fired(Exception):
    def __init__(self, screened: Screened) -> None:
        self.screened = screened


class _TooDeep(Exception):
    pass


class _Value(NamedTuple):
    """What the reader knows of a part of the text: `digits`, an upper bound of log10 of its exact value's larger
    term (None: no exact number, it has a variable or a function), where it stands, and whether it is a power."""

    digits: float | None
    start: int
    end: int
    power: bool = False


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        self.tokens = [t for t in self.tokens if not t[0].isspace() and t[0] not in _IGNORED]
        self.i = 0
        self.depth = 0

    # -- tokens

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, int, int]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def here(self) -> int:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text)

    def last_end(self) -> int:
        return self.tokens[self.i - 1][2] if self.i else 0

    # -- grammar

    def read(self) -> None:
        while self.peek() is not None:
            self.items(closer=None)
            if self.peek() is not None:
                self.take()  # a closer with no opener: passed over

    def items(self, closer: str | None) -> _Value:
        """Items up to `closer` (not taken), split by anything that is no part of an expression. One item is a
        value; several (a tuple, a set, an equation) are no one number."""
        start = self.here()
        values: list[_Value] = []
        while (token := self.peek()) is not None and token != closer and not (closer is None and token in _CLOSE):
            if self.starts_value(token):
                values.append(self.sum())
            else:
                self.take()  # a separator: a comma, a relation, a bar, an unknown sign
                values.append(_Value(None, start, start))
        if len(values) == 1:
            return values[0]
        return _Value(None, start, self.last_end())

    def starts_value(self, token: str) -> bool:
        if token in _ADD:
            return True
        return self.starts_atom(token)

    def starts_atom(self, token: str) -> bool:
        if token in _OPEN or token in _FRACTIONS:
            return True
        if token[0] in _DIGITS or (token[0] == "." and len(token) > 1):
            return True
        if token.isalpha():
            return True
        return token.startswith("\\") and token[1:].isalpha() and token not in _SEPARATORS and token not in _MULTIPLY

    def sum(self) -> _Value:
        start = self.here()
        terms: list[_Value] = []
        while True:
            while self.peek() in _ADD:
                self.take()
            if self.peek() is None or not self.starts_atom(self.peek() or ""):
                break  # a sign with nothing after it
            terms.append(self.product())
            if self.peek() not in _ADD:
                break
        if len(terms) == 1:
            return terms[0]._replace(start=start)
        # a/b + c/d = (ad + bc)/bd: at most the digits of both, and one more bit for each sum.
        digits: float | None = (len(terms) - 1) * _LOG10_2
        for term in terms:
            digits = _plus(digits, term.digits, 0.0)
        return _Value(digits if terms else None, start, self.last_end())

    def product(self) -> _Value:
        start = self.here()
        factor = self.power()
        digits = factor.digits
        count = 1
        while (token := self.peek()) is not None:
            if token in _MULTIPLY:
                self.take()
                while self.peek() in _ADD:  # 2 \cdot -3
                    self.take()
                if self.peek() is None or not self.starts_atom(self.peek() or ""):
                    break
            elif not self.starts_atom(token):
                break
            # an atom right after another: implicit multiplication (2x, 3\pi, \sin{...})
            nxt = self.power()
            digits = _plus(digits, nxt.digits, 0.0)
            count += 1
        return factor if count == 1 else _Value(digits, start, self.last_end())

    def power(self) -> _Value:
        start = self.here()
        base = self.postfix()
        if self.peek() not in ("^", "**"):
            return base
        self.take()
        self.enter()
        while self.peek() in _ADD:  # 2^{-3} written 2^-3
            self.take()
        exponent = self.power() if self.peek() is not None and self.starts_atom(self.peek() or "") else None
        self.depth -= 1
        end = self.last_end()
        if exponent is None or exponent.digits is None:
            return _Value(None, start, end, power=True)
        return _Value(self.bound_power(base, exponent, start, end), start, end, power=True)

    def bound_power(self, base: _Value, exponent: _Value, start: int, end: int) -> float | None:
        shown = _show(self.text[start:end])
        assert exponent.digits is not None
        if base.digits is None:
            if exponent.digits > math.log10(MAX_SYMBOLIC_EXPONENT):
                raise _Fired(Screened("exponent", (
                    f"{shown} is a power of an expression with variables (or e, π) whose exponent may exceed "
                    f"{MAX_SYMBOLIC_EXPONENT:,} (the screen's limit)"
                )))  # fmt: skip
            return None
        if base.digits <= 0:
            return 0.0  # 0 or 1 to any power: no digits to compute
        # digits(a^b) <= |b| * digits(a), |b| <= 10^digits(b): compared as logarithms, never overflowing.
        log_digits = exponent.digits + math.log10(base.digits)
        if log_digits >= math.log10(MAX_DIGITS):  # 10^{10000} has 10,001 digits
            kind: ScreenKind = "power_tower" if exponent.power else "power"
            what = "power tower" if exponent.power else "power"
            raise _Fired(Screened(kind, (
                f"the {what} {shown} would have {_about_digits(log_digits)} digits, more than "
                f"{MAX_DIGITS:,} (the screen's limit)"
            )))  # fmt: skip
        bound: float = 10.0**log_digits  # typeshed says Any (a negative base's power is complex); 10's is a float
        return bound

    def postfix(self) -> _Value:
        start = self.here()
        value = self.atom()
        while (token := self.peek()) in ("!", "'", "_"):
            self.take()
            if token == "_":  # a subscript names a variable: a_{37}, \log_2
                if self.peek() is not None and self.starts_atom(self.peek() or ""):
                    self.enter()
                    self.atom()
                    self.depth -= 1
                value = _Value(None, start, self.last_end())
            elif token == "!":
                value = self.bound_factorial(value, start)
            else:
                value = _Value(None, start, self.last_end())
        return value

    def bound_factorial(self, value: _Value, start: int) -> _Value:
        end = self.last_end()
        if value.digits is None:
            return _Value(None, start, end)
        # n <= 10^digits(n); log10(n!) = lgamma(n + 1) / ln 10, growing with n.
        n_log = value.digits
        log10_digits = 301.0 if n_log > 300 else math.log10(max(1.0, math.lgamma(10.0**n_log + 1) / math.log(10)))
        if log10_digits >= math.log10(MAX_DIGITS):
            raise _Fired(Screened("factorial", (
                f"the factorial {_show(self.text[start:end])} would have {_about_digits(log10_digits)} digits, more "
                f"than {MAX_DIGITS:,} (the screen's limit)"
            )))  # fmt: skip
        return _Value(10.0**log10_digits, start, end)

    def atom(self) -> _Value:
        token, start, end = self.take()
        if token in _OPEN:
            closer = _OPEN[token]
            self.enter()
            inner = self.items(closer)
            self.depth -= 1
            if self.peek() == closer:
                self.take()
            return _Value(inner.digits, start, self.last_end(), inner.power)
        if token in _FRACTIONS:
            parts = []
            for _ in range(2):
                if self.peek() is not None and self.starts_atom(self.peek() or ""):
                    self.enter()
                    parts.append(self.postfix())
                    self.depth -= 1
            digits = _plus(parts[0].digits, parts[1].digits, 0.0) if len(parts) == 2 else None
            return _Value(digits, start, self.last_end())
        if token[0] in _DIGITS or token[0] == ".":
            return _Value(self.bound_literal(token, start, end), start, end)
        return _Value(None, start, end)  # a letter, e, \pi, a function, a Greek letter: no exact number

    def bound_literal(self, token: str, start: int, end: int) -> float:
        whole, _, decimals = token.partition(".")
        significant = (whole + decimals).lstrip("0")
        if len(significant) > MAX_LITERAL_DIGITS:
            raise _Fired(Screened("literal", (
                f"it writes a number of {len(significant):,} digits, more than {MAX_LITERAL_DIGITS:,} "
                "(the screen's limit)"
            )))  # fmt: skip
        if not significant:
            return 0.0
        if len(significant) > 300:
            return float(len(whole.lstrip("0")) + len(decimals))  # a bound, within one digit
        # The larger term of the fraction it writes: 0.5 is 1/2, 2.25 is 9/4, 12 is 12/1.
        numerator, denominator = int(significant), 10 ** len(decimals)
        common = math.gcd(numerator, denominator)
        return math.log10(max(numerator // common, denominator // common))

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooDeep


def _plus(a: float | None, b: float | None, extra: float) -> float | None:
    return None if a is None or b is None else a + b + extra


def _about_digits(log10_digits: float) -> str:
    """The digits of a value whose log10 is at most 10^log10_digits, in words."""
    if log10_digits > 300:
        return "more than 10^300"
    if log10_digits < 6:
        return f"{math.floor(10.0**log10_digits) + 1:,}"
    return f"about 10^{math.floor(log10_digits)}"


def _show(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

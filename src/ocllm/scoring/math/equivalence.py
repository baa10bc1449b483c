"""Whether a normalised answer equals the normalised gold (docs/scoring/math.md, rule M5): comparators in a fixed
order, the first that can tell decides, and the result names it. A wrong answer is never "equal": where a step
cannot be sure, the outcome is "different" or "undecided"."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

from ocllm.scoring.math.braces import top_level_items
from ocllm.scoring.math.decision import Comparator, Comparison
from ocllm.scoring.math.screen import screen
from ocllm.scoring.math.symbolic import check

_INTEGER_OR_DECIMAL = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)$")
_SLASH = re.compile(r"^([-+]?\d+)/([-+]?\d+)$")
_LATEX_FRACTION = re.compile(r"^([-+]?)\\frac\{([-+]?\d+)\}\{([-+]?\d+)\}$")
_LONGEST_NUMBER = 4000
_PLUS_MINUS = re.compile(r"\\(?:pm|mp)(?![a-zA-Z])|±|∓")


class Verdict(NamedTuple):
    comparator: Comparator
    outcome: Comparison
    detail: str
    verifier: str | None = None


def exact_number(text: str) -> Fraction | None:
    """The exact rational a normalised answer writes, if it is one: 12, -3.5, 0.75, 3/4, \\frac{3}{4}, -\\frac{3}{4}."""
    if len(text) > _LONGEST_NUMBER:
        return None  # Python reads integers of at most 4,300 digits from text; the symbolic step has the rest
    if _INTEGER_OR_DECIMAL.match(text):
        return Fraction(text)
    m = _SLASH.match(text)
    if m and int(m.group(2)) != 0:
        return Fraction(int(m.group(1)), int(m.group(2)))
    m = _LATEX_FRACTION.match(text)
    if m and int(m.group(3)) != 0:
        value = Fraction(int(m.group(2)), int(m.group(3)))
        return -value if m.group(1) == "-" else value
    return None


def compare(answer: str, gold: str, tolerance: float | None = None) -> Verdict:
    """Compare a normalised answer with the normalised gold."""
    if answer == gold:
        return Verdict("string", "equal", f"the normalised strings are equal ({_short(answer)})")
    a, g = exact_number(answer), exact_number(gold)
    if a is not None and g is not None:
        if tolerance is not None:
            bound = abs(g) * Fraction(tolerance)
            within = abs(a - g) <= bound
            return Verdict(
                "tolerance",
                "equal" if within else "different",
                f"{_short(answer)} is {'within' if within else 'beyond'} the relative tolerance {tolerance:g} "
                f"of {_short(gold)} (difference {float(abs(a - g)):.6g}, allowed {float(bound):.6g})",
            )
        same = a == g
        return Verdict(
            "number",
            "equal" if same else "different",
            f"as exact numbers {_fraction(a)} {'=' if same else '≠'} {_fraction(g)}",
        )
    guard = _structure(answer, gold)
    if guard is not None:
        return Verdict("structure", "different", guard)
    for side, text in (("answer", answer), ("gold", gold)):
        # A value too large to evaluate is never sent: the check would only run into its limit, at length.
        screened = screen(text)
        if screened is not None:
            return Verdict("screen", "undecided", f"the {side} is not sent to the symbolic check: {screened.detail}")
    result = check(gold, answer, tolerance)
    return Verdict("symbolic", result.outcome, result.detail, result.verifier)


def _structure(answer: str, gold: str) -> str | None:
    """Shapes that differ for certain, decided before math-verify is asked (its known false positives)."""
    signs = bool(_PLUS_MINUS.search(answer)), bool(_PLUS_MINUS.search(gold))
    counts = top_level_items(answer), top_level_items(gold)
    # ±1 is the list -1, 1 and the set {-1, 1}: with ± on a side, item counts do not tell.
    if counts[0] != counts[1] and not any(signs):
        return f"the answer lists {counts[0]} item(s), the gold {counts[1]} (a list is never one number)"
    if signs[0] != signs[1] and "," not in (gold if signs[0] else answer):
        return f"only the {'answer' if signs[0] else 'gold'} has ±, the other one value (two values against one)"
    if _bracketed(answer) and _bracketed(gold):
        ends = (answer[0], answer[-1]), (gold[0], gold[-1])
        if ends[0] != ends[1]:
            return f"the brackets differ: {''.join(ends[0])} against {''.join(ends[1])} (open and closed ends differ)"
    return None


def _bracketed(text: str) -> bool:
    return len(text) >= 2 and text[0] in "([" and text[-1] in ")]" and "," in text


def _fraction(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""The words written after a number, sorted by what they do to it (docs/scoring/math.md, rule M4, "unit phrases").

A unit phrase names what is counted (`18 apples`, `5 bags of flour in the first month`, `60 square metres`,
`$255 each month`): the number is the value. A change of value makes the number something else (`5 million`,
`5 squared`, `5 tenths`, `5 less than x`, `5 or more`): the phrase is compared whole, never as the number.
"""

from __future__ import annotations

# Words of math that a plain-words unit never holds: "2 pi" and "3 sqrt 2" are expressions.
MATH_WORDS = frozenset({"pi", "sqrt", "i", "e", "log", "ln", "sin", "cos", "tan", "mod", "times", "cdot", "and", "or"})

# Words that change the value or say it is not the value: never part of a unit phrase. Scale words ("5 million",
# "5\text{k}"), operations ("5 squared"), fraction words ("5 tenths"), relations and bounds ("5 less than x",
# "5 at most"), signs ("5 below zero"), number words, alternatives and negations ("5 or 6", "5 but not"),
# approximations, and the words that join a value to more math ("5 times", "5 divided by").
VALUE_WORDS = frozenset(
    {
        "k", "K", "M", "B", "G", "T", "bn", "mn", "mln", "mil", "mill", "thousand", "thousands", "million", "millions",
        "billion", "billions", "trillion", "trillions", "quadrillion", "hundred", "hundreds", "dozen", "dozens",
        "score", "gross", "grand", "lakh", "lakhs", "crore", "crores", "thou", "squared", "cubed", "square",
        "cube", "factorial", "reciprocal", "reciprocals", "inverse", "root", "roots", "power", "powers", "th",
        "half", "halves", "third", "thirds", "fourth", "fourths", "quarter", "quarters", "fifth", "fifths",
        "sixth", "sixths", "seventh", "sevenths", "eighth", "eighths", "ninth", "ninths", "tenth", "tenths",
        "hundredth", "hundredths", "thousandth", "thousandths", "millionth", "millionths", "percent",
        "negative", "positive", "minus", "plus", "below", "above", "under", "over", "less", "more", "fewer",
        "greater", "smaller", "larger", "than", "at", "most", "least", "to", "times", "divided", "by",
        "not", "or", "but", "and", "no", "nor", "approximately", "about", "roughly", "nearly", "almost", "around",
        "up", "exactly", "only", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        "ten", "twenty", "exponent", "mod", "modulo", "equals", "equal", "is", "if", "when",
        "where", "with", "without", "off", "ago", "earlier", "later", "before", "after", "short", "extra",
        "left", "remaining", "total", "cent", "cents", "pence", "too", "additional", "younger", "older", "assuming",
        "provided", "unless", "otherwise", "pair", "pairs",
    }
)  # fmt: skip

# Inside a unit phrase, after its first word, these say more about what is counted, never what the number is
# worth: "5 bags of flour in the first month", "48 pupils on both trips", "18 apples left", "45 cookies in
# total", "3 km by bike". Words of one or two letters elsewhere read as variables ("5 xy"); these do not. Never
# first: "5 to", "5 by", "5 left" keep their other readings ("of" may be first: "60 % of the students"; what
# changes a value before "of" is a value word itself, "half of"), and the bounds ("at most", "or more") are still
# VALUE_WORDS wherever they stand.
PHRASE_WORDS = frozenset({"of", "in", "on", "at", "to", "by", "a", "an", "my", "per", "left", "remaining", "total"})

# "each" and "every" make a rate or a share ("$255 each month", "5 cookies each", "5 each"): the number is the
# value stated, wherever they stand.
SHARE_WORDS = frozenset({"each", "every"})

# "square" and "cubic" before a unit make an area or a volume ("60 square metres", "8 cubic feet"); alone
# ("5 square") or before a value word ("5 square roots") they stay an operation.
MEASURE_WORDS = frozenset({"square", "cubic", "cube", "sq"})

# A count of dozens ("7 dozen", "7 dozens", "3 dozens of eggs") is a unit when nothing but "of" follows: the
# number counts dozens. "5 dozen eggs" stays a phrase (it may count the eggs: 60).
DOZEN = frozenset({"dozen", "dozens"})

# Unit symbols of two letters, which outside \text{} would otherwise read as a product of variables ("5 xy"): "12 km",
# "28 ft", "60 sq ft". A one-letter symbol ("5 m") stays a variable outside \text{}.
SHORT_UNITS = frozenset({"km", "cm", "mm", "kg", "mg", "ml", "ft", "yd", "mi", "lb", "oz", "hr", "ha"})

"""The value a concluding sentence gives (docs/scoring/math.md, rule M2f): the last line's last sentence opens by
concluding ("Therefore, …", "So …", "In total, …") and holds more than one number, with no marker, box or bold to
say which is the answer. Two readings, each of the sentence alone or of the sentence and the question:

- `concluded_is`: the number it ends on, after "is", "are", "was", "equals", "=" (its unit words and end punctuation
  only after it): "Therefore, the difference between the square root of 64 and the cube root of 64 is 4.";
- `asked_count`: the one number followed by the thing the question counts ("How many red roses …?"): "Therefore,
  she picks 160 red roses by 5 pm." states 160; a question asking "how much" and one amount of money in the
  sentence: "So Kylar needs to pay $64 for the 16 glasses." states $64.

Anything else states nothing here: a subject holding a comma or a second clause, two numbers before the counted
thing, a number the question itself gives, a comparative question ("how many more"), a second amount of money.
"""

from __future__ import annotations

import re

# A sentence that concludes: the words working ends on.
_CONCLUDES = re.compile(
    r"(?:so|thus|therefore|hence|consequently|in[ \t]+total|in[ \t]+conclusion|in[ \t]+all|altogether|overall"
    r"|finally|that[ \t]+means|this[ \t]+means)\b[ \t]*,?[ \t]*",
    re.IGNORECASE,
)
# A number as prose writes it: money, thousands, decimals, a percent.
_NUMBER = re.compile(r"(?<![\w.^_{\\/])(?P<money>\\?\$[ \t]*)?-?\d[\d,]*(?:\.\d+)?(?![\d\w])(?:[ \t]*%)?")
# The verb a sentence states its value with, right before the number it ends on.
_STATES = re.compile(r"(?:\b(?:is|are|was|were|equals|be|makes|comes[ \t]+to|totals?)|=)[ \t]*$", re.IGNORECASE)
# What may follow the number a sentence ends on: a few words naming what it counts, then the sentence's end.
_UNIT_TAIL = re.compile(r"(?:[ \t]+[A-Za-z][A-Za-z'-]*){0,3}[ \t]*[.!]?[ \t*_]*$")
# "How many red roses does she pick?": the words the question counts, up to its verb.
_HOW_MANY = re.compile(r"\bhow[ \t]+many[ \t]+(?P<thing>[A-Za-z][A-Za-z -]{0,40}?)(?=[ \t]+(?:does|do|did|is|are|was|"
                       r"were|will|would|can|could|should|has|have|had|must|in|on|at|of|for|to)\b|[?,.])",
                       re.IGNORECASE)  # fmt: skip
_HOW_MUCH = re.compile(r"\bhow[ \t]+much\b", re.IGNORECASE)
_COMPARATIVES = frozenset({"more", "fewer", "less", "extra", "additional"})


def _digits(number: str) -> str:
    return re.sub(r"[^\d.]", "", number).rstrip(".")


_SENTENCE_END = re.compile(r"(?<=[a-z0-9%)\]])[.!][ \t]+(?=[A-Z])")


def concluded_value(line: str, question: str | None) -> tuple[int, int, str] | None:
    """Where in the line the value of its concluding last sentence stands, and the reading that found it."""
    start = 0
    for m in _SENTENCE_END.finditer(line):
        start = m.end()
    opening = _CONCLUDES.match(line, start)
    if opening is None:
        return None
    numbers = list(_NUMBER.finditer(line, opening.end()))
    if len(numbers) < 2:
        return None  # one number: the weak salvage (rule M7) reads it already, and none is nothing to conclude
    last = numbers[-1]
    stating = _STATES.search(line, opening.end(), last.start())
    # One clause: its subject runs from the conclusion to the verb with no comma or semicolon, so the number it ends on
    # is what the sentence concludes ("So the number of cats is 8, while the number of dogs is 5" concludes neither).
    one_clause = stating is not None and not re.search(r"[,;]", line[opening.end() : stating.start()])
    if one_clause and _UNIT_TAIL.fullmatch(line, last.end()):
        return last.start(), last.end(), "concluded_is"
    return _asked(line, numbers, question)


def _asked(line: str, numbers: list[re.Match[str]], question: str | None) -> tuple[int, int, str] | None:
    if not question:
        return None
    # A number the question gives is what the working starts from ("after selling 12 cupcakes, she has 18 left"):
    # never read as the answer here, where the sentence alone does not say which number it concludes with.
    given = {_digits(n.group(0)) for n in _NUMBER.finditer(question)}
    numbers = [n for n in numbers if _digits(n.group(0)) not in given]
    counted = _HOW_MANY.search(question)
    if counted is not None:
        if counted.group("thing").split()[0].lower() in _COMPARATIVES:
            return None  # "How many more apples than oranges": a difference, which no noun after a number names
        head = counted.group("thing").split()[-1].lower()
        stem = head[:-1] if head.endswith("s") and len(head) > 3 else head
        following = [
            n for n in numbers if re.match(r"[ \t]+(?:[A-Za-z-]+[ \t]+){0,2}" + re.escape(stem), line[n.end() :], re.I)
        ]
        if len(following) == 1:
            return following[0].start(), following[0].end(), "asked_count"
        return None
    if _HOW_MUCH.search(question):
        money = [n for n in numbers if n.group("money")]
        if len(money) == 1:
            return money[0].start(), money[0].end(), "asked_count"
    return None

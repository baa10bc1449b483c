"""The text of a simulated answer to a math task: working, then a final statement in one of the forms real
reasoning models write (`\\boxed{26}`, `**Answer:** $\\boxed{...}$`, `#### 26`, "The answer is 26.",
`Final answer: 26`), right or wrong as the simulator's draw says.

A right answer states the gold, as written in the suite or written another way that means the same
(`26.00`, `\\$26`, `1{,}234`, `26\\text{ cookies}`, `0.75` for `\\frac{3}{4}`, `\\dfrac{3}{4}`, ...); a wrong
answer is a near miss (off by one, the sign flipped, another fraction, the pair swapped, an interval end
open instead of closed), never a value equal to the gold. Every random choice comes from the `random.Random`
handed in, so the same draws give the same text.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from fractions import Fraction

from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest

# What a gold answer is, as far as the simulator needs to know to write it another way or miss it.
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FRACTION = re.compile(r"(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}")
_SLASHED = re.compile(r"(-?\d+)/(\d+)")
_ROOT = re.compile(r"(\d*)\\sqrt\{(\d+)\}")
# Two ends between brackets: an ordered pair "(1,2)" or an interval "[-2, 3)", "(-\infty, 4]".
_BRACKETED = re.compile(r"([\[(])\s*([^,\[\]()]+?)\s*,\s*([^,\[\]()]+?)\s*([\])])")
_INFINITY = re.compile(r"[+-]?\\infty")
# "How many cookies ..." names the unit a word problem counts in.
_COUNTED = re.compile(r"\bhow many (?:more |fewer |total |different )?([a-z]+)", re.IGNORECASE)
# A unit is written with the answer only when the question asks for an amount in it: "35% take the bus. How
# many students ..." counts students, and 420\% would be no writing of the gold 420.
_MONEY = re.compile(r"\bin dollars\b|\bhow many dollars\b|\bhow much (?:money|change)\b|\bhow much does .+ cost", re.I)
_PERCENT = re.compile(r"\bwhat percent(?:age)?\b|\bas a percent(?:age)?\b|\bin percent\b", re.IGNORECASE)
_DEGREES = re.compile(r"\bin degrees\b|\bhow many degrees\b", re.IGNORECASE)
_BOXED_FORMS = ("boxed", "bold_boxed")


@dataclass(frozen=True)
class Gold:
    """A math task's gold answer: its text, and what kind of value it is.

    kind is "number" (an integer or a decimal: `value` holds it exactly), "fraction" (`value`), "root"
    (`coefficient` times the square root of `radicand`), "pair" (an ordered pair: `ends`), "interval" (`ends`
    and `brackets`), or "other" (an expression the simulator does not take apart)."""

    text: str
    kind: str
    value: Fraction | None = None
    coefficient: int = 1
    radicand: int = 0
    ends: tuple[str, str] = ("", "")
    brackets: tuple[str, str] = ("", "")


def read_gold(text: str) -> Gold:
    """What kind of value the gold answer `text` is."""
    text = text.strip()
    if _NUMBER.fullmatch(text):
        return Gold(text, "number", value=Fraction(text))
    if match := _FRACTION.fullmatch(text):
        sign, top, bottom = match.groups()
        if int(bottom) != 0 and int(top) != 0:
            return Gold(text, "fraction", value=Fraction(int(top), int(bottom)) * (-1 if sign else 1))
    if (match := _SLASHED.fullmatch(text)) and int(match.group(2)) != 0 and int(match.group(1)) != 0:
        return Gold(text, "fraction", value=Fraction(int(match.group(1)), int(match.group(2))))
    if (match := _ROOT.fullmatch(text)) and int(match.group(2)) > 1:
        return Gold(text, "root", coefficient=int(match.group(1) or 1), radicand=int(match.group(2)))
    if match := _BRACKETED.fullmatch(text):
        opening, first, second, closing = match.groups()
        kind = "pair" if (opening, closing) == ("(", ")") and not _INFINITY.search(text) else "interval"
        return Gold(text, kind, ends=(first, second), brackets=(opening, closing))
    return Gold(text, "other")


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook (`TaskType.simulated_answer`): an answer to a math task whose gold is known. Without a gold
    neither right nor wrong is known, so the simulator's plain sentence answers, as it does a prompt it does not
    know (None, before any draw)."""
    task = request.task
    if not isinstance(task, MathTask) or not (task.answer or "").strip():
        return None  # no gold known, a prompt it does not know, or another room's task (its own room answers it)
    content, thinking = math_answer(request.rng, task, correct=request.correct, reasoning=request.reasoning)
    return SimulatedAnswer(content, thinking)


def math_answer(rng: random.Random, task: MathTask, *, correct: bool, reasoning: bool) -> tuple[str, str | None]:
    """The content and reasoning (None in non-reasoning mode) of an answer to a math task whose gold is known:
    right when `correct`."""
    gold = read_gold(task.answer or "")
    if correct:
        # About half the right answers write the gold another way, as models do.
        rewritings = written_another_way(gold, task.question)
        stated = rng.choice(rewritings) if rewritings and rng.random() < 0.5 else gold.text
    else:
        stated = rng.choice(near_misses(gold))
    forms = ["boxed", "bold_boxed", "the_answer_is", "final_answer"]
    weights = [5, 2, 1, 1]
    if _NUMBER.fullmatch(stated.replace(",", "")):  # GSM8K's "#### N" holds a bare number
        forms.append("gsm8k")
        weights.append(2)
    form = rng.choices(forms, weights)[0]
    statement = final_statement(rng, form, stated)
    steps = _working(rng, task.question)
    # A boxed sub-result in the working: the last box of the answer still decides, and in a reasoning lane
    # the working is in the reasoning field, which the visible answer outranks.
    if (reasoning or form in _BOXED_FORMS) and rng.random() < 0.3:
        sub_result = f"That settles the first part: $\\boxed{{{_intermediate(rng, task.question)}}}$."
        steps.insert(len(steps) - 1, sub_result)
    if reasoning:
        thinking = list(steps)
        if rng.random() < 1 / 3:
            # The prompt's instruction quoted back, with nothing in the box: no statement of an answer.
            thinking.insert(1, "The final answer has to go inside \\boxed{} at the end.")
        thinking.append(rng.choice([f"So the answer should be {_inline(stated)}.", f"I get {_inline(stated)}."]))
        # The visible answer is the short write-up reasoning models give after thinking: a step and the result.
        summary = rng.choice(["Working through the problem step by step:", "Here is the solution."])
        return f"{summary} {steps[1]}\n\n{statement}", " ".join(thinking)
    return " ".join(steps) + "\n\n" + statement, None


def final_statement(rng: random.Random, form: str, stated: str) -> str:
    """The closing statement of the answer `stated` in `form`."""
    if form == "boxed":
        return rng.choice(
            [f"Therefore the answer is $\\boxed{{{stated}}}$.", f"$$\\boxed{{{stated}}}$$", f"\\boxed{{{stated}}}"]
        )
    if form == "bold_boxed":
        return f"**Answer:** $\\boxed{{{stated}}}$"
    if form == "gsm8k":
        return f"#### {stated}"
    if form == "the_answer_is":
        return f"The answer is {_inline(stated)}."
    return f"Final answer: {_inline(stated)}"


def _inline(stated: str) -> str:
    # A bare number reads as plain text; anything with LaTeX in it goes between dollar signs, as models write it.
    return stated if _NUMBER.fullmatch(stated.replace(",", "")) else f"${stated}$"


def written_another_way(gold: Gold, question: str) -> list[str]:
    """Other writings of the gold that mean the same value (empty when the simulator knows none)."""
    if gold.kind == "number":
        return _number_writings(gold, question)
    if gold.kind == "fraction":
        return _fraction_writings(gold)
    if gold.kind == "root":
        if gold.coefficient > 1:  # 2\sqrt{3} as \sqrt{12}, or with a space
            return [f"\\sqrt{{{gold.coefficient**2 * gold.radicand}}}", f"{gold.coefficient} \\sqrt{{{gold.radicand}}}"]
        return [f"\\displaystyle \\sqrt{{{gold.radicand}}}", f"{gold.radicand}^{{1/2}}"]
    if gold.kind in ("pair", "interval"):
        opening, closing = gold.brackets
        first, second = gold.ends
        return [f"\\left{opening} {first}, {second} \\right{closing}", f"{opening}{first},\\ {second}{closing}"]
    return [f"\\displaystyle {gold.text}"]


def _number_writings(gold: Gold, question: str) -> list[str]:
    assert gold.value is not None
    plain = gold.text
    writings = []
    if gold.value.denominator == 1:
        whole = int(gold.value)
        writings.append(f"{whole}.00")
        if abs(whole) >= 1000:
            writings += [_grouped(whole, "{,}"), _grouped(whole, ","), _grouped(whole, "\\,")]
    else:
        writings.append(f"{plain}0")  # a trailing zero: 2.50 for 2.5
        writings.append(_latex_fraction(gold.value))
    if _MONEY.search(question):
        writings.append(f"\\${plain}")
    if _PERCENT.search(question):
        writings.append(f"{plain}\\%")
    if _DEGREES.search(question):
        writings.append(f"{plain}^\\circ")
    if match := _COUNTED.search(question):
        writings.append(f"{plain}\\text{{ {match.group(1).lower()}}}")
    return writings


def _fraction_writings(gold: Gold) -> list[str]:
    value = gold.value
    assert value is not None
    sign = "-" if value < 0 else ""
    top, bottom = abs(value.numerator), value.denominator
    writings = [
        f"{sign}\\dfrac{{{top}}}{{{bottom}}}",
        f"{sign}\\tfrac{{{top}}}{{{bottom}}}",
        f"{sign}{top}/{bottom}",
        f"{sign}\\frac{{{2 * top}}}{{{2 * bottom}}}",  # not in lowest terms, the same rational
    ]
    if _terminates(value):
        writings.append(_decimal(value))
    if top > bottom and bottom > 1 and not sign:
        writings.append(f"{top // bottom}\\frac{{{top % bottom}}}{{{bottom}}}")  # a mixed number: 2\frac{1}{2}
    return [w for w in writings if w != gold.text]


def near_misses(gold: Gold) -> list[str]:
    """Wrong answers a model plausibly gives: each differs in value from the gold."""
    if gold.kind == "number":
        assert gold.value is not None
        misses = [_plain_number(gold.value + 1), _plain_number(gold.value - 1)]
        if gold.value != 0:
            misses.append(_plain_number(-gold.value))
        return misses
    if gold.kind == "fraction":
        assert gold.value is not None
        value = gold.value
        misses = [_latex_fraction(-value), _latex_fraction(Fraction(value.numerator, value.denominator + 1))]
        if abs(value) != 1:
            misses.append(_latex_fraction(1 / value))  # the fraction upside down
        return misses
    if gold.kind == "root":
        coefficient = "" if gold.coefficient == 1 else str(gold.coefficient)
        return [
            f"-{coefficient}\\sqrt{{{gold.radicand}}}",
            f"{gold.coefficient + 1}\\sqrt{{{gold.radicand}}}",
            f"{coefficient}\\sqrt{{{gold.radicand + 1}}}",
        ]
    if gold.kind == "pair":
        first, second = gold.ends
        misses = [f"({second}, {first})"] if first != second else []
        return [*misses, f"({_shifted(first)}, {second})", f"({first}, {_shifted(second)})"]
    if gold.kind == "interval":
        (opening, closing), (first, second) = gold.brackets, gold.ends
        misses = []
        if not _INFINITY.fullmatch(first):
            misses.append(f"{'(' if opening == '[' else '['}{first}, {second}{closing}")  # the other kind of end
        if not _INFINITY.fullmatch(second):
            misses.append(f"{opening}{first}, {second}{')' if closing == ']' else ']'}")
        shifted = f"{opening}{_shifted(first)}, {_shifted(second)}{closing}"
        misses += [shifted] if shifted.replace(" ", "") != gold.text.replace(" ", "") else []  # not (-\infty, \infty)
        return misses or [f"{gold.text} \\setminus \\{{0\\}}"]
    return [f"{gold.text} + 1"]


def _shifted(end: str) -> str:
    # An end one more than it is; an end that is no plain number (\infty, \frac{1}{2}) gets "+ 1" written.
    if _NUMBER.fullmatch(end):
        return _plain_number(Fraction(end) + 1)
    return end if _INFINITY.fullmatch(end) else f"{end} + 1"


def _plain_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return _decimal(value) if _terminates(value) else _latex_fraction(value)


def _latex_fraction(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _terminates(value: Fraction) -> bool:
    bottom = value.denominator
    for prime in (2, 5):
        while bottom % prime == 0:
            bottom //= prime
    return bottom == 1


def _decimal(value: Fraction) -> str:
    """The exact decimal of a terminating fraction: 0.75 for 3/4."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    scaled = abs(value.numerator * 10**places // value.denominator)
    digits = str(scaled).rjust(places + 1, "0")
    whole, point = digits[: len(digits) - places], digits[len(digits) - places :]
    return ("-" if value < 0 else "") + whole + (f".{point}" if places else "")


def _grouped(whole: int, separator: str) -> str:
    return ("-" if whole < 0 else "") + f"{abs(whole):,}".replace(",", separator)


def _question_numbers(question: str) -> list[int]:
    # Whole numbers only: the 50 of "$1.50" is no quantity of the problem.
    return [int(n) for n in re.findall(r"\d+(?:\.\d+)?", question) if "." not in n][:6]


def _intermediate(rng: random.Random, question: str) -> str:
    numbers = _question_numbers(question)
    if len(numbers) >= 2:
        first, second = rng.sample(numbers, 2)
        return str(first * second if rng.random() < 0.5 else first + second)
    return str(rng.randint(2, 12) ** 2)


def _working(rng: random.Random, question: str) -> list[str]:
    """Sentences of working with intermediate numbers (true arithmetic on the question's numbers)."""
    numbers = _question_numbers(question)
    steps = [rng.choice(["Let me work this out step by step.", "First, collect what the problem gives us."])]
    if len(numbers) >= 2:
        first, second = rng.sample(numbers, 2)
        steps.append(
            rng.choice(
                [
                    f"Combining the quantities, ${first} + {second} = {first + second}$.",
                    f"Multiplying, ${first} \\times {second} = {first * second}$.",
                    f"The difference is ${max(first, second)} - {min(first, second)} = {abs(first - second)}$.",
                ]
            )
        )
    else:
        trial = rng.randint(2, 9)
        steps.append(f"Trying a small case first, with $n = {trial}$, the expression gives ${trial * trial}$.")
    steps.append(
        rng.choice(
            [
                "Putting the pieces together and simplifying gives the result.",
                "Checking the result against the conditions of the problem, it holds.",
                "Simplifying the remaining expression finishes the calculation.",
            ]
        )
    )
    return steps

"""The math scorer on hand-written answers: every rule of docs/scoring/math.md (M1-M8), every
normalisation step and comparator, and the wrong answers a lenient checker credits. Answers are written in the
shapes real models produce (gpt-oss, Qwen3, DeepSeek-R1, GSM8K few-shot); every expected value is by hand."""

from __future__ import annotations

import multiprocessing
import re
import threading
from concurrent.futures import ProcessPoolExecutor

import msgspec
import pytest
from helpers import CPU_HEAVY
from hypothesis import given, settings
from hypothesis import strategies as st

from ocllm.models import Policy, Sample
from ocllm.scoring.math.decide import decide_math
from ocllm.scoring.math.decision import MathDecision
from ocllm.scoring.math.equivalence import compare
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.normalise import normalise
from ocllm.scoring.math.statements import MARKERS, marker_matches
from ocllm.scoring.math.symbolic import check


def decide(
    content: str | None,
    gold: str,
    *,
    reasoning: str | None = None,
    finish_reason: str = "stop",
    policy: Policy | None = None,
    tolerance: float | None = None,
    prompt: str | None = None,
) -> MathDecision:
    task = MathTask(id="m1", question="q", answer=gold, tolerance=tolerance, prompt=prompt)
    sample = Sample(task_id="m1", content=content, reasoning=reasoning, finish_reason=finish_reason)
    decision = decide_math(task, sample, policy or Policy())
    for c in decision.candidates:  # every span points into the raw field it names
        raw = content if c.field == "content" else reasoning
        assert raw is not None and raw[c.start : c.end] == c.text
    return decision


# ---- M1: regions ---------------------------------------------------------------------------------------------


def test_a_think_block_is_reasoning_and_the_visible_answer_decides() -> None:
    d = decide("<think>so maybe \\boxed{3}</think>The answer is $\\boxed{4}$.", "4")
    assert (d.correct, d.extracted_final_answer, d.extraction_source) == (True, "4", "content")
    assert d.reasoning_statements == 1
    assert [c.region for c in d.candidates] == ["content", "reasoning"]


def test_the_reasoning_never_overrides_the_visible_answer() -> None:
    d = decide("\\boxed{5}", "4", reasoning="Let me see... the answer is \\boxed{4}.")
    assert (d.correct, d.extracted_final_answer, d.comparison) == (False, "5", "different")


def test_a_prefilled_think_closes_before_the_answer() -> None:
    content = "Okay, 2+2 is \\boxed{5}. Hm.\n</think>\n\nThe final answer is $\\boxed{4}$."
    d = decide(content, "4", policy=Policy(think_prefilled=True))
    assert (d.correct, d.extracted_final_answer, d.reasoning_statements) == (True, "4", 1)


def test_reasoning_only_answer_without_fallback_is_not_credited() -> None:
    d = decide("", "18", reasoning="She sells 16 - 3 - 4 = 9 eggs... so \\boxed{18}")
    assert (d.correct, d.extracted_final_answer) == (False, None)
    assert (d.rule, d.ambiguity) == ("answer_only_in_reasoning", "answer_only_in_reasoning")
    assert d.extraction_source == "none"
    assert d.comparison == "not_compared"


def test_reasoning_only_answer_with_fallback_is_read_from_the_reasoning() -> None:
    d = decide("", "18", reasoning="9 * 2 = 18 dollars, so \\boxed{18}", policy=Policy(allow_reasoning_fallback=True))
    assert (d.correct, d.extracted_final_answer, d.extraction_source) == (True, "18", "reasoning")
    assert (d.rule, d.ambiguity, d.extraction_method) == ("reasoning_fallback", "none", "boxed")


# ---- M2: statement kinds and their strength ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "stated", "method"),
    [
        ("FINAL: 3\n\nSo the result is \\boxed{4}.", "4", "boxed"),  # a box outranks FINAL:
        ("#### 5\nFinal answer: 6", "6", "final"),  # Final answer outranks ####
        ("The answer is 7.\n#### 8", "8", "hashes"),  # #### outranks The answer is
        ("The answer is 9.\n**Answer:** 10", "9", "answer_is"),  # The answer is outranks a label
        ("**Answer:** 10", "10", "answer_label"),
        ("Answer: 11", "11", "answer_label"),
        ("FINAL: 12", "12", "final"),
        ("\\fbox{13}", "13", "boxed"),
        ("so the total is \\boxed 14", "14", "boxed"),
    ],
)
def test_the_strongest_kind_decides(content: str, stated: str, method: str) -> None:
    d = decide(content, stated)
    assert (d.extracted_final_answer, d.extraction_method, d.ambiguity, d.correct) == (stated, method, "none", True)


def test_a_box_is_brace_matched_and_nested() -> None:
    d = decide("Hence $\\boxed{\\frac{1}{\\sqrt{2}}}$.", "\\frac{\\sqrt{2}}{2}")
    assert d.extracted_final_answer == "\\frac{1}{\\sqrt{2}}"
    assert (d.comparator, d.comparison, d.correct) == ("symbolic", "equal", True)
    d = decide("\\boxed{\\boxed{12}}", "12")
    assert (d.extracted_final_answer, len(d.candidates), d.candidates[0].reading) == ("12", 1, ["box"])


def test_a_box_never_closed_states_nothing() -> None:
    d = decide("so the answer is \\boxed{\\frac{1}{2", "\\frac{1}{2}", finish_reason="length")
    assert (d.extracted_final_answer, d.rule, d.truncated, d.correct) == (None, "no_statement", True, False)


def test_a_markdown_heading_of_four_hashes_is_no_gsm8k_answer() -> None:
    d = decide("#### Step 2: add them\n3 + 9 = 12\n\nThe answer is 12.", "12")
    assert (d.extracted_final_answer, d.extraction_method) == ("12", "answer_is")


def test_qwen3_final_answer_heading_with_a_display_box() -> None:
    content = "Adding the parts gives 3/4.\n\n### Final Answer\n\n$$\n\\boxed{\\dfrac{3}{4}}\n$$"
    d = decide(content, "\\frac34")
    assert (d.extracted_final_answer, d.normalised_answer) == ("\\dfrac{3}{4}", "\\frac{3}{4}")
    assert d.normalisation == ["dfrac"]
    assert (d.gold_normalised, d.gold_normalisation) == ("\\frac{3}{4}", ["frac_braces"])
    assert (d.comparator, d.correct) == ("string", True)
    assert "box_after_marker" in d.candidates[0].reading


def test_deepseek_r1_shape_with_a_fraction_for_a_decimal_gold() -> None:
    content = "<think>\nHmm, 3 out of 4... \\boxed{0.7}? no.\n</think>\n\nThe final answer is $\\boxed{\\frac{3}{4}}$."
    d = decide(content, "0.75")
    assert d.extracted_final_answer == "\\frac{3}{4}"
    assert (d.comparator, d.comparison, d.correct) == ("number", "equal", True)
    assert d.comparison_detail == "as exact numbers 3/4 = 3/4"


def test_gpt_oss_bold_answer_with_a_dollar_sign() -> None:
    d = decide("Total cost: 2 × $13 = $26.\n\n**Answer: $26**", "26")
    assert (d.extracted_final_answer, d.normalised_answer, d.normalisation) == ("$26", "26", ["currency"])
    assert (d.extraction_method, d.correct) == ("answer_label", True)


def test_gpt_oss_bold_label_before_a_box() -> None:
    d = decide("**Answer:** $\\boxed{26}$", "26")
    assert (d.extracted_final_answer, d.extraction_method, d.correct) == ("26", "boxed", True)
    assert d.candidates[0].reading == ["box_after_marker"]


def test_a_lone_math_delimiter_and_an_escaped_dollar() -> None:
    d = decide("**Answer: $\\frac{3}{4}**", "0.75")  # the closing $ lost in the bold
    assert (d.extracted_final_answer, d.correct) == ("\\frac{3}{4}", True)
    assert d.candidates[0].reading == ["bold", "delimiters"]
    d = decide("The answer is $\\$12$.", "12")  # \\$ inside the math is a dollar sign, not its end
    assert (d.extracted_final_answer, d.normalised_answer, d.correct) == ("\\$12", "12", True)


def test_gsm8k_hashes_with_a_thousands_separator() -> None:
    d = decide("Janet earns 1,234 dollars in all.\n#### 1,234", "1234")
    assert (d.extracted_final_answer, d.normalised_answer) == ("1,234", "1234")
    assert d.normalisation == ["thousands_separator"]
    assert (d.extraction_method, d.correct) == ("hashes", True)


def test_the_answer_is_with_cents_and_a_reason() -> None:
    d = decide("The answer is $26.00 because both cost $13.", "26")
    assert (d.extracted_final_answer, d.normalisation, d.correct) == ("$26.00", ["currency", "trailing_zeros"], True)


def test_gsm8k_few_shot_a_label_on_the_last_line() -> None:
    # The shape of GSM8K's published model solutions (openai/grade-school-math): the last line is "A: N".
    d = decide("Natalia sold 48/2 = 24 clips in May.\nShe sold 48+24 = 72 clips.\nA: 72", "72")
    assert (d.extraction_method, d.extracted_final_answer, d.correct) == ("answer_label", "72", True)
    assert d.ambiguity == "none"  # a statement, not the weak salvage


def test_an_a_label_elsewhere_is_no_answer() -> None:
    # "A: 12" among options, or not on the last line, states nothing: there it is an option or a speaker.
    d = decide("The options were\nA: 12\nB: 18\nI pick the second.", "18")
    assert (d.extraction_method, d.correct) == ("none", False)


def test_the_answer_with_an_aside_in_parentheses() -> None:
    # Zero-shot chain of thought's answer extraction (Kojima et al.): "the answer (arabic numerals) is 40."
    d = decide("Therefore, the answer (arabic numerals) is 40.\nThat settles it.", "40")
    assert (d.extraction_method, d.extracted_final_answer, d.correct) == ("answer_is", "40", True)


def test_boxed_assignment_states_its_value() -> None:
    d = decide("Solving gives $\\boxed{x = 5}$.", "5")
    assert (d.extracted_final_answer, d.candidates[0].reading, d.correct) == ("5", ["assignment"], True)


def test_boxes_listed_with_commas_state_one_list() -> None:
    d = decide("The primes are $\\boxed{2}$, $\\boxed{3}$ and $\\boxed{5}$.", "2, 3, 5")
    assert (d.extracted_final_answer, d.ambiguity, d.correct) == ("2, 3, 5", "none", True)
    assert "box_list" in d.candidates[0].reading


@pytest.mark.parametrize(
    ("content", "gold", "stated"),
    [
        # Minerva-style few-shot output: "Final Answer: The final answer is $\boxed{...}$", a limit stated whole.
        (
            "so both terms vanish.\n\nFinal Answer: The final answer is $\\boxed{\\lim_{x\\to\\infty} f(x) = 0}$",
            "0",
            "0",
        ),
        # A pair written with \left( \right) and spaces, against a gold written with other spaces.
        (
            "The final answer is $\\boxed{\\left(\\frac{-2-5\\sqrt{3}}{2}, \\frac{5-2\\sqrt{3}}{2}\\right)}$.",
            "\\left( \\frac{-2 - 5 \\sqrt{3}}{2}, \\frac{5 - 2 \\sqrt{3}}{2} \\right)",
            "\\left(\\frac{-2-5\\sqrt{3}}{2}, \\frac{5-2\\sqrt{3}}{2}\\right)",
        ),
        # A tool-using model's answer followed by its code.
        (
            "So, the final answer is $\\boxed{193}$.\n\nThe python code used is:\n```python\nprint(193)\n```",
            "193",
            "193",
        ),
        # A function named on the left: its value is the answer.
        ("Therefore $\\boxed{f(100) = 199}$.", "199", "199"),
        # An inverse function boxed with its name: an equation, compared with the gold expression.
        ("$\\boxed{h^{-1}(x) = \\frac{x + 2}{7}}$", "\\frac{x+2}{7}", "h^{-1}(x) = \\frac{x + 2}{7}"),
    ],
)
def test_shapes_from_published_model_outputs(content: str, gold: str, stated: str) -> None:
    d = decide(content, gold)
    assert (d.extracted_final_answer, d.correct) == (stated, True)


# ---- M3: the deciding statement and conflicts ----------------------------------------------------------------


def test_conflicting_boxes_under_policy_last() -> None:
    d = decide("First \\boxed{3}.\n\nRechecking: \\boxed{4}.", "4")
    assert (d.extracted_final_answer, d.correct) == ("4", True)
    assert (d.rule, d.ambiguity) == ("conflict_last", "conflicting_final_answers")


def test_conflicting_boxes_under_policy_strict_credit_nothing() -> None:
    d = decide("First \\boxed{3}.\n\nRechecking: \\boxed{4}.", "4", policy=Policy(conflict_policy="strict"))
    assert (d.extracted_final_answer, d.correct, d.comparison) == (None, False, "not_compared")
    assert (d.rule, d.ambiguity) == ("conflict_strict", "conflicting_final_answers")


def test_the_same_value_written_twice_is_no_conflict() -> None:
    d = decide("So \\boxed{0.5}. In lowest terms that is \\boxed{\\frac{1}{2}}.", "1/2")
    assert (d.rule, d.ambiguity, d.correct) == ("final_statement", "none", True)


def test_a_weaker_kind_never_conflicts_with_a_stronger_one() -> None:
    d = decide("The answer is 7.\n\n\\boxed{8}", "8")
    assert (d.ambiguity, d.correct) == ("none", True)


# ---- format examples and statements taken back --------------------------------------------------------------


def test_a_format_example_never_decides() -> None:
    d = decide("I will write the result in the form \\boxed{42}. The count is \\boxed{7}.", "42")
    assert (d.extracted_final_answer, d.correct) == ("7", False)
    assert d.candidates[0].example and d.candidates[0].reading == ["format_example"]
    d = decide("(e.g. \\boxed{42})", "42")
    assert (d.extracted_final_answer, d.rule, d.correct) == (None, "no_statement", False)


def test_the_prompts_placeholder_echoed_never_decides() -> None:
    d = decide("Sure! I'll put my final answer within \\boxed{}.\n\nThe sum is 9, so \\boxed{9}", "9")
    assert (d.extracted_final_answer, d.correct) == ("9", True)
    assert d.candidates[0].reading == ["placeholder"]
    d = decide("Final answer: \\boxed{answer}", "5")
    assert (d.extracted_final_answer, d.correct) == (None, False)


def test_a_statement_echoing_the_prompt_never_decides() -> None:
    prompt = "Give the answer like FINAL: 7 on its own line."
    d = decide("Give the answer like FINAL: 7 on its own line. Working...", "7", prompt=prompt)
    assert (d.extracted_final_answer, d.correct) == (None, False)
    assert d.candidates[0].reading == ["prompt_echo"]


def test_a_statement_taken_back_never_decides() -> None:
    d = decide("So \\boxed{12}. Wait, that's not right: I double counted.", "12")
    assert (d.extracted_final_answer, d.correct) == (None, False)
    assert d.candidates[0].withdrawn and d.candidates[0].reading == ["withdrawn"]
    d = decide("That gives \\boxed{12}, but that is wrong.\n\nRedoing it: \\boxed{13}", "13")
    assert (d.extracted_final_answer, d.ambiguity, d.correct) == ("13", "none", True)


# ---- M7: the last-number salvage -----------------------------------------------------------------------------


def test_the_last_number_salvage_is_a_named_weak_rule() -> None:
    d = decide("She had 20 and gave away 2.\nSo she has 18 apples left.", "18")
    assert (d.extracted_final_answer, d.rule, d.ambiguity, d.extraction_method) == (
        "18", "last_number_salvage", "weak_salvage", "last_number",
    )  # fmt: skip
    assert d.correct is True


def test_the_salvage_never_applies_to_truncated_output() -> None:
    d = decide("She had 20 and gave away 2.\nSo she has 18", "18", finish_reason="length")
    assert (d.extracted_final_answer, d.rule, d.truncated, d.correct) == (None, "no_statement", True, False)


def test_the_salvage_needs_a_single_number_on_the_last_line() -> None:
    d = decide("Adding up:\n3 and 15 make 18", "18")
    assert (d.extracted_final_answer, d.rule) == (None, "no_statement")
    # Working that ends in its value is a result line (M2e), not the salvage; working that does not add up is none.
    d = decide("Adding up:\n3 + 15 = 18", "18")
    assert (d.extracted_final_answer, d.extraction_method, d.correct) == ("18", "result_line", True)
    d = decide("Adding up:\n3 + 15 = 19", "19")
    assert (d.extracted_final_answer, d.rule) == (None, "no_statement")


# ---- M4: normalisation, step by step ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalised", "steps"),
    [
        ("$\\frac{1}{2}$", "\\frac{1}{2}", ["math_delimiters"]),
        (
            "\\begin{pmatrix} 1 \\\\[4pt] 2 \\end{pmatrix}",
            "\\begin{pmatrix}1\\\\2\\end{pmatrix}",
            ["row_spacing", "whitespace"],
        ),
        ("\\displaystyle\\frac{1}{2}", "\\frac{1}{2}", ["displaystyle"]),
        ("\\left( 1, 2 \\right)", "(1,2)", ["left_right", "whitespace"]),
        ("\\dfrac{3}{4}", "\\frac{3}{4}", ["dfrac"]),
        ("\\tfrac{3}{4}", "\\frac{3}{4}", ["dfrac"]),
        ("9\\,901", "9901", ["thousands_separator"]),
        ("1{,}000", "1000", ["thousands_separator"]),
        ("1\u2009000", "1000", ["thousands_separator"]),
        ("1\u202f000", "1000", ["thousands_separator"]),
        ("1,234,567", "1234567", ["thousands_separator"]),
        ("3\\!\\cdot\\!4", "3\\cdot4", ["spacing", "whitespace"]),
        ("x\\quad y", "xy", ["spacing", "whitespace"]),
        ("\\$26", "26", ["currency"]),
        ("€12", "12", ["currency"]),
        ("12 dollars", "12", ["currency"]),
        ("90^\\circ", "90", ["degrees"]),
        ("90^{\\circ}", "90", ["degrees"]),
        ("90°", "90", ["degrees"]),
        ("50\\%", "50", ["percent"]),
        ("50%", "50", ["percent"]),
        ("5\\text{ cm}^2", "5", ["text_units"]),
        ("\\text{Monday}", "Monday", ["text_unwrap"]),
        ("18 apples", "18", ["unit_words"]),
        ("26.00", "26", ["trailing_zeros"]),
        ("26.", "26", ["trailing_punctuation"]),
        ("x = 5", "5", ["variable_assignment"]),
        ("x \\in [1, 2)", "[1,2)", ["variable_assignment", "whitespace"]),
        ("\u22125", "-5", ["unicode_minus"]),
        ("\\text{(C)}", "C", ["text_unwrap", "choice_letter"]),
        ("n = 2\\pi", "2\\pi", ["variable_assignment"]),
        ("\\frac12", "\\frac{1}{2}", ["frac_braces"]),
        ("2\\frac{1}{2}", "\\frac{5}{2}", ["mixed_number"]),
        ("-3 1/4", "-13/4", ["mixed_number"]),
        ("\\$1,234.00", "1234", ["currency", "trailing_zeros", "thousands_separator"]),
    ],
)
def test_each_normalisation_step(text: str, normalised: str, steps: list[str]) -> None:
    assert normalise(text) == (normalised, steps)


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("3, 5, 7", "3,5,7"),  # a list, never 357
        ("2 pi", "2pi"),  # a math word is no unit
        ("\\pi r^2", "\\pi r^2"),  # a control word keeps its space before a letter
        ("3\\,x", "3x"),  # a thin space before a letter is no digit grouping
        ("1,23", "1,23"),  # two digits after a comma: no grouping
        ("(1,234)", "(1,234)"),  # a bracketed pair keeps its comma
        ("y = 2x + 3", "y=2x+3"),  # an equation keeps its name: the name is part of the answer
        ("x = 5, y = 3", "x=5,y=3"),
    ],
)
def test_what_normalisation_leaves_alone(text: str, normalised: str) -> None:
    assert normalise(text)[0] == normalised


def test_the_gold_goes_through_the_same_chain() -> None:
    d = decide("The answer is $\\boxed{1000}$.", "\\$1{,}000")
    assert (d.expected_answer, d.gold_normalised) == ("\\$1{,}000", "1000")
    assert d.gold_normalisation == ["thousands_separator", "currency"]
    assert d.correct is True


def test_math_verify_misreadings_are_normalised_first() -> None:
    # math-verify reads 9\,901 as 910, and \\[4pt] as a product 4*p*t.
    assert decide("$\\boxed{9\\,901}$", "9901").correct is True
    d = decide("$\\boxed{\\begin{pmatrix} 1 \\\\[4pt] 2 \\end{pmatrix}}$", "\\begin{pmatrix}1\\\\2\\end{pmatrix}")
    assert (d.comparator, d.correct) == ("string", True)


# ---- M5: comparators in order --------------------------------------------------------------------------------


def test_string_comparator() -> None:
    v = compare("Monday", "Monday")
    assert (v.comparator, v.outcome) == ("string", "equal")


@pytest.mark.parametrize(
    ("answer", "gold", "outcome"),
    [
        ("0.75", "\\frac{3}{4}", "equal"),
        ("3/4", "0.75", "equal"),
        ("-\\frac{3}{4}", "-0.75", "equal"),
        ("0.333", "\\frac{1}{3}", "different"),
        ("0.333333", "\\frac{1}{3}", "different"),  # math-verify rounds to 6 places and calls this equal
        ("1000001", "1000000", "different"),
        ("2.50", "2.5", "equal"),
    ],
)
def test_number_comparator_is_exact(answer: str, gold: str, outcome: str) -> None:
    v = compare(answer, gold)
    assert (v.comparator, v.outcome) == ("number", outcome)


def test_tolerance_comparator_is_relative() -> None:
    v = compare("9.81", "9.8", tolerance=0.01)
    assert (v.comparator, v.outcome) == ("tolerance", "equal")
    v = compare("9.9", "9.8", tolerance=0.001)
    assert (v.comparator, v.outcome) == ("tolerance", "different")
    d = decide("g is about $\\boxed{9.81}$ m/s^2", "9.8", tolerance=0.01)
    assert (d.comparator, d.correct) == ("tolerance", True)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("357", "3,5,7"),  # lm-eval's Minerva normaliser joins "3, 5, 7" into 357
        ("3,5", "3,5,7"),
        ("2021", "\\pm2021"),  # math-verify issue: ±2021 = 2021
        ("[1,2]", "[1,2)"),  # a closed end is not an open one
        ("(1,2)", "[1,2]"),
    ],
)
def test_structure_guard_decides_different_before_math_verify(answer: str, gold: str) -> None:
    v = compare(answer, gold)
    assert (v.comparator, v.outcome, v.verifier) == ("structure", "different", None)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("\\frac{1}{2006!}", "\\frac{1}{2004!}"),  # math-verify: equal (tiny values)
        ("\\frac{1}{2^{98}}", "\\frac{1}{2^{99}}"),  # math-verify: equal
        ("\\frac{1}{3\\cdot2^{2006}}", "\\frac{2^{2005}+1}{3\\cdot2^{2006}}"),  # math-verify: equal
        ("1+\\frac{1}{e}", "1-\\frac{1}{e}"),
        ("(2,1)", "(1,2)"),  # an ordered pair keeps its order
        ("0.866025", "\\frac{\\sqrt{3}}{2}"),  # a decimal is the number it writes, not √3/2
        ("x", "|x|"),
        ("\\begin{pmatrix}1&2\\\\3&5\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}"),
    ],
)
def test_symbolic_comparator_never_credits_a_wrong_answer(answer: str, gold: str) -> None:
    v = compare(answer, gold)
    assert v.comparator == "symbolic"
    assert v.outcome == "different"
    assert v.verifier is not None and re.fullmatch(r"math-verify \d+\.\d+\.\d+", v.verifier)


def test_a_partial_reading_by_math_verify_is_never_equal() -> None:
    # math-verify reads only "1 - \frac{1}{" of 1 - 1/\mathrm{e} and so finds 1 = 1.
    v = compare("1+\\frac{1}{\\mathrm{e}}", "1-\\frac{1}{\\mathrm{e}}")
    assert (v.comparator, v.outcome) == ("symbolic", "undecided")
    assert v.verifier is not None
    # In a decision, text_unwrap makes \mathrm{e} a plain e first: math-verify then reads all of it.
    d = decide("$\\boxed{1+\\frac{1}{\\mathrm{e}}}$", "1-\\frac{1}{\\mathrm{e}}")
    assert (d.normalised_answer, d.normalisation) == ("1+\\frac{1}{e}", ["text_unwrap"])
    assert (d.correct, d.comparison, d.rule) == (False, "different", "final_statement")


def test_an_undecided_comparison_is_never_credited() -> None:
    # \operatorname{e} is not unwrapped: math-verify reads "1+\frac{1}{" of it, and says equal.
    d = decide("$\\boxed{1+\\frac{1}{\\operatorname{e}}}$", "1-\\frac{1}{\\operatorname{e}}")
    assert (d.correct, d.comparison) == (False, "undecided")
    assert (d.rule, d.ambiguity) == ("equivalence_undecided", "equivalence_undecided")
    assert "\\operatorname" in d.comparison_detail


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("(x+1)^2", "x^2+2x+1"),
        ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}"),
        ("\\{3,2,1\\}", "\\{1,2,3\\}"),
        ("7,5,3", "3,5,7"),
        ("\\pm1", "\\{-1,1\\}"),  # ± is two values: the structure guard lets it through
        ("-1,1", "\\pm1"),
        ("y=3+2x", "y=2x+3"),
        ("y=2x+3", "2x+3"),
        ("x+y=1", "y=1-x"),
        ("\\frac{1}{2}\\pi", "\\frac{\\pi}{2}"),
        ("1-e^{-1}", "1-\\frac{1}{e}"),
        ("\\begin{bmatrix}1\\\\2\\end{bmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}"),
    ],
)
def test_symbolic_comparator_credits_the_same_answer_written_otherwise(answer: str, gold: str) -> None:
    v = compare(normalise(answer)[0], normalise(gold)[0])
    assert (v.comparator, v.outcome) == ("symbolic", "equal")


def test_symbolic_tolerance_for_an_irrational_gold() -> None:
    assert compare("0.866025", "\\frac{\\sqrt{3}}{2}", tolerance=1e-5).outcome == "equal"


# ---- M6: the symbolic worker and its limit -------------------------------------------------------------------

# Not screened (its exponent is below the screen's 10,000), and far past the CPU-time limit: sympy expands it.
_COSTLY = "\\boxed{(x+1)^{3000}}"


@pytest.mark.slow  # a symbolic child run to its limit and killed
@CPU_HEAVY
def test_a_symbolic_check_that_never_ends_is_killed_and_the_next_one_runs() -> None:
    d = decide(_COSTLY, "2")
    assert (d.comparator, d.comparison, d.correct) == ("symbolic", "killed", False)
    assert (d.rule, d.ambiguity) == ("symbolic_check_killed", "symbolic_check_killed")
    assert d.comparison_detail == "the symbolic check reached its CPU-time limit of 5 s and was killed"
    assert "killed" in d.reason
    after = decide("$\\boxed{(x+1)^2}$", "x^2+2x+1")
    assert (after.comparison, after.correct) == ("equal", True)


def test_a_power_tower_is_screened_and_never_sent_to_the_symbolic_check() -> None:
    d = decide("\\boxed{9^{9^{9^{9}}}}", "1")
    assert (d.comparator, d.comparison, d.correct) == ("screen", "undecided", False)
    assert (d.rule, d.ambiguity) == ("equivalence_undecided", "equivalence_undecided")
    assert d.comparison_detail.startswith("the answer is not sent to the symbolic check: the power tower ")


def test_the_symbolic_check_runs_from_a_thread() -> None:
    results: list[str] = []
    thread = threading.Thread(target=lambda: results.append(check("\\sqrt{2}/2", "\\frac{1}{\\sqrt{2}}").outcome))
    thread.start()
    thread.join()
    assert results == ["equal"]


def test_threads_share_the_worker_one_check_at_a_time() -> None:
    pairs = [("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", "equal"), ("(1,2)", "(2,1)", "different")] * 4
    results: dict[int, str] = {}

    def run(i: int, gold: str, answer: str) -> None:
        results[i] = check(gold, answer).outcome

    threads = [threading.Thread(target=run, args=(i, g, a)) for i, (g, a, _) in enumerate(pairs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[i] for i in range(len(pairs))] == [want for _, _, want in pairs]


def _decide_in_worker(content: str, gold: str) -> tuple[str, bool | None]:
    d = decide(content, gold)
    return d.comparison, d.correct


@pytest.mark.slow  # process pools started
@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_the_symbolic_check_runs_in_a_process_pool_worker(method: str) -> None:
    # A child of this process exists before a fork (a pair no test asked before, so the cache cannot answer it):
    # the forked worker must not use it. The worker's own checks are pairs this process never asked either: a
    # forked worker inherits this process's cache, and would otherwise answer from it.
    check("x", f"x+{len(method)}")
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method)) as pool:
        assert pool.submit(_decide_in_worker, "$\\boxed{(y+1)^2}$", "y^2+2y+1").result() == ("equal", True)
        assert pool.submit(_decide_in_worker, "\\boxed{(x+1)^{3002}}", "2").result() == ("killed", False)


# ---- the decision record -------------------------------------------------------------------------------------


def test_a_failed_request_is_not_scored() -> None:
    task = MathTask(id="m1", answer="4")
    d = decide_math(task, Sample(task_id="m1", error="HTTP 503", error_kind="http_status"), Policy())
    assert (d.correct, d.rule, d.error, d.comparison) == (None, "request_error", "HTTP 503", "not_compared")


def test_an_empty_gold_is_no_gold() -> None:
    d = decide("\\boxed{5}", "")
    assert (d.correct, d.comparison, d.comparison_detail) == (False, "not_compared", "the task has no gold answer")


def test_a_number_too_long_to_read_as_an_integer_is_left_to_the_symbolic_step() -> None:
    v = compare("1" * 4500, "2")
    assert (v.comparator, v.outcome) == ("symbolic", "different")


def test_the_decision_round_trips_through_json() -> None:
    d = decide("**Answer:** $\\boxed{26}$", "26")
    again = msgspec.json.decode(msgspec.json.encode(d), type=MathDecision)
    assert again == d
    assert (again.verifier, again.comparator, again.decided_by) == (None, "string", 0)


def test_the_reason_is_one_line_naming_the_comparator() -> None:
    d = decide("The final answer is $\\boxed{\\frac{3}{4}}$", "0.75")
    assert "\n" not in d.reason
    assert d.reason.startswith('visible content: the last \\boxed{} statement "\\boxed{\\frac{3}{4}}"')
    assert "equal to the gold '0.75' (number: as exact numbers 3/4 = 3/4)" in d.reason


# ---- generated answers: a different number is never credited, the same one always is ----------------------

_FORMS = (
    "\\boxed{{{n:,}}}",  # 1,234
    "**Answer: ${n}.00**",
    "The answer is $\\boxed{{{n}}}$.",
    "#### {n:,}",
    "\\boxed{{\\frac{{{twice}}}{{2}}}}",
    "\\boxed{{x = {n}}}",
    "\\boxed{{{n}\\text{{ cm}}}}",
)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**7), 10**7), st.integers(-(10**7), 10**7), st.sampled_from(_FORMS))
def test_a_number_is_credited_exactly_when_it_is_the_gold(stated: int, gold: int, form: str) -> None:
    content = form.format(n=stated, twice=2 * stated)
    d = decide(content, str(gold))
    assert d.correct is (stated == gold), (content, gold, d.reason)
    assert d.comparator in ("string", "number")


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**7), 10**7), st.sampled_from(_FORMS))
def test_the_gold_number_in_any_form_is_credited(gold: int, form: str) -> None:
    content = form.format(n=gold, twice=2 * gold)
    d = decide(content, str(gold))
    assert d.correct is True, (content, d.reason)


def _check_in_daemon() -> str:
    return check("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}").outcome


def test_a_daemonic_worker_runs_the_symbolic_check_too() -> None:
    # multiprocessing.Pool's workers are daemonic and may have no multiprocessing children; the guarded child is a
    # plain subprocess, so the check runs there as anywhere.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_check_in_daemon) == "equal"


_MARKER_PIECES = (
    "final", "Final", "FINAL", "answer", "Answer", "ANSWER", " is", ":", "**", "__", "####", "###", " ", "\t", "\n",
    "the ", "The ", "correct ", "right ", "5", "x", "$", "-", ">", "\\", ".", "ing", "s",
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_MARKER_PIECES), max_size=40))
def test_the_fast_marker_scan_finds_what_the_full_pattern_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    full = [(m.lastgroup, m.start(), m.end()) for m in MARKERS.finditer(text)]
    assert [(m.kind, m.start, m.end) for m in marker_matches(text)] == full, text


# ---- review of issue 20: wrong answers a lenient reading credited ----------------------------------------------


def test_a_statement_running_to_where_the_output_was_cut_never_decides() -> None:
    d = decide("Adding them up, the answer is 5", "5", finish_reason="length")  # perhaps a cut 512
    assert (d.correct, d.rule) == (False, "no_statement") and "cut_off" in d.candidates[0].reading
    # Followed by more text, the statement was finished: it decides.
    assert decide("The answer is 5.\nChecking the sum again", "5", finish_reason="length").correct is True
    # A closed box is whole, cut or not.
    assert decide("So \\boxed{5}", "5", finish_reason="length").correct is True


def test_a_factorial_is_not_end_punctuation() -> None:
    d = decide("\\boxed{5!}", "5")
    assert d.extracted_final_answer == "5!" and d.correct is False


@pytest.mark.parametrize("content", ["\\boxed{5} is the wrong answer. Redo it.", "\\boxed{5}. Actually, it's 6."])
def test_more_ways_of_taking_a_statement_back(content: str) -> None:
    d = decide(content, "5")
    assert d.correct is False and d.candidates[0].withdrawn


def test_actually_correct_is_no_taking_back() -> None:
    assert decide("\\boxed{5}. Actually, it's correct.", "5").correct is True


@pytest.mark.parametrize("line", ["Not 5", "It isn't 5", "x > 5", "x \\ne 5", "the answer must exceed 5", "at most 5"])
def test_the_salvage_takes_no_number_a_line_denies_or_bounds(line: str) -> None:
    d = decide(f"Working it out.\n{line}", "5")
    assert (d.correct, d.rule) == (False, "no_statement")


# ---- review findings F1-F3 (issue 20): wrong answers that were credited -------------------------------------

@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{5 million}", "5"),
        ("\\boxed{5 \\text{ thousand}}", "5"),
        ("Final answer: \\$5 billion", "5"),
        ("\\boxed{5 hundred}", "5"),
        ("\\boxed{2 dozen}", "2"),
        ("\\boxed{5 squared}", "5"),
        ("\\boxed{5\\text{ cubed}}", "5"),
        ("\\boxed{5 factorial}", "5"),
        ("\\boxed{10 to the power of three}", "10"),
        ("\\boxed{5 tenths}", "5"),
        ("\\boxed{5 halves}", "5"),
        ("\\boxed{5 reciprocal}", "5"),
        ("\\boxed{5 negative}", "5"),
        ("\\boxed{5 below zero}", "5"),
        ("\\boxed{5 less than x}", "5"),
        ("\\boxed{5 more}", "5"),
        ("\\boxed{5 xy}", "5"),
        ("Final answer: 5 at most", "5"),
        ("Final answer: $5\\text{k}$", "5"),
        ("\\boxed{5 mln}", "5"),
        # Units that differ on the two sides: the comparison sees the normalised texts only, with both units
        # dropped, so these are still credited (reported, not fixed: it needs the units kept past normalisation).
        ("\\boxed{5\\text{ cm}}", "5\\text{ m}"),  # two units that differ: structure, "the units differ"
        ("\\boxed{5 centimeters}", "5 meters"),
    ],
)
def test_f1_a_word_that_changes_the_value_is_never_dropped_as_a_unit(content: str, gold: str) -> None:
    assert decide(content, gold).correct is False


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("She has $\\boxed{18 \\text{ apples}}$ left.", "18"),
        ("#### 18 apples", "18"),
        ("The answer is \\$26.00.", "26"),
        ("\\boxed{150\\text{ miles}}", "150"),
        ("\\boxed{5\\text{ cm}}", "5\\text{ cm}"),
        ("\\boxed{5 hours per day}", "5"),
    ],
)
def test_f1_a_plain_unit_or_counted_noun_is_still_dropped(content: str, gold: str) -> None:
    assert decide(content, gold).correct is True


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{2x = 5}", "5"),
        ("\\boxed{x^2 = 5}", "5"),
        ("\\boxed{\\frac{1}{x} = 5}", "5"),
        ("\\boxed{1/x = 5}", "5"),
        ("\\boxed{2^x = 5}", "5"),
        ("\\boxed{|x| = 5}", "5"),
        ("\\boxed{x! = 5}", "5"),
        ("\\boxed{\\sqrt{x}=5}", "5"),
        ("\\boxed{x\\cdot y = 5}", "5"),
        ("\\boxed{x + 1 = 5}", "5"),
        ("\\boxed{-x = 5}", "5"),
        ("\\boxed{a+b=5}", "5"),
        ("\\boxed{x - 5 = 0}", "0"),
        ("\\boxed{x+1=5}", "x=5"),
        # The answer's name is dropped where its statement is read (statements.py) and the gold's in normalisation:
        # the comparison sees 5 and 5. Reported, not fixed (outside this change's files).
        pytest.param("\\boxed{y=5}", "x=5", marks=pytest.mark.xfail(strict=True, reason="known false credit")),
    ],
)
def test_f2_an_equation_is_never_credited_by_its_right_side(content: str, gold: str) -> None:
    assert decide(content, gold).correct is False


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{x = 5}", "5"),
        ("\\boxed{a_{37} = 5}", "5"),
        ("\\boxed{\\alpha = 5}", "5"),
        ("\\boxed{x' = 5}", "5"),
        ("\\boxed{f(100) = 199}", "199"),
        ("\\boxed{x = 5}", "x=5"),
        ("\\boxed{5}", "x=5"),
    ],
)
def test_f2_a_left_side_naming_one_thing_still_states_its_value(content: str, gold: str) -> None:
    assert decide(content, gold).correct is True


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{2√3}", "2"),
        ("\\boxed{3√2/2}", "3"),
        ("Final answer: 5√2", "5"),
        ("\\boxed{5+}", "5"),
        ("\\boxed{5-}", "5"),
        ("\\boxed{6^}", "6"),
        ("\\boxed{6/}", "6"),
        ("\\boxed{6=}", "6"),
        ("\\boxed{6)}", "6"),
        ("\\boxed{5\\times}", "5"),
        ("\\boxed{6 \\div}", "6"),
        ("\\boxed{6 \\dots 9}", "6"),
        ("\\boxed{5^{}}", "5"),
        ("\\boxed{5\\sqrt{}}", "5"),
    ],
)
def test_f3_what_math_verify_drops_is_never_credited(content: str, gold: str) -> None:
    assert decide(content, gold).correct is False


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{2√3}", "2\\sqrt{3}"),
        ("\\boxed{3√2/2}", "\\frac{3\\sqrt{2}}{2}"),
        ("\\boxed{√(2)}", "\\sqrt{2}"),
    ],
)
def test_f3_a_root_sign_reads_as_a_square_root(content: str, gold: str) -> None:
    d = decide(content, gold)
    assert d.correct is True
    assert "sqrt_sign" in d.normalisation

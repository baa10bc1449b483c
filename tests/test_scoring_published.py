"""Scorer 1.7 (issue 19, items 19-24): the shapes the scorer lost on when published MMLU-Pro outputs were
rescored. Each rule is pinned by the issue's own example, by variants written here that the rule must also
cover, and by near-misses that must keep their reading. Every text here was written for these tests."""

from __future__ import annotations

import pytest
from conftest import mcq

# Ten energies, H the positive one the examples name; B, D and F their negative or doubled kin.
ENERGIES = ["+1.5 kJ", "-3.03 kJ", "0 kJ", "+6.06 kJ", "1.01 kJ", "-1.01 kJ", "3.30 kJ", "+3.03 kJ", "-6.06 kJ", "2 kJ"]
VOLTS = ["+0.5 V", "-0.5 V", "0 V", "1 V"]
RATES = ["12 J/mol", "-24 J/mol", "+12 J/mol", "-12 J/mol"]
TEN = ["12", "24", "36", "48", "60", "72", "84", "96", "108", "120"]


# --- 19. A letter in brackets followed by a signed value ---------------------------------------------------


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("The answer is (H) +3.03 kJ.", ENERGIES, "H"),
        ("The answer is (H) +3.03$\\text{kJ}$", ENERGIES, "H"),
        ("The answer is (H) + 3.03 kJ", ENERGIES, "H"),
        ("Answer: (B) -0.5 V", VOLTS, "B"),
        ("Answer: (B) −0.5 V", VOLTS, "B"),
        ("The correct answer is [D] -12 J/mol.", RATES, "D"),
        ("FINAL: (C) +12 J/mol", RATES, "C"),
        ("Answer: (A) +.5 V", VOLTS, "A"),
        ("So the answer is **(H)** +3.03 kJ.", ENERGIES, "H"),
    ],
)
def test_a_signed_value_after_a_bracketed_letter_restates_it(content: str, options: list[str], letter: str) -> None:
    d = mcq(content, options=options, answer=letter)
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


@pytest.mark.parametrize(
    ("content", "options"),
    [
        ("The answer is (H) -3.03 kJ.", ENERGIES),  # option B's text, not H's
        ("The answer is (H) +6.06 kJ.", ENERGIES),  # option D's
        ("Answer: (A) -0.5 V", VOLTS),
    ],
)
def test_a_signed_value_of_another_option_still_contradicts_the_letter(content: str, options: list[str]) -> None:
    d = mcq(content, options=options, answer="H")
    assert (d.extracted_final_answer, d.rule) == (None, "letter_value_mismatch"), d.reason


@pytest.mark.parametrize(
    "content",
    [
        "The answer is (A) + (B) in total.",
        "The answer is \\(x\\) + 5, which I cannot match.",
        "The answer is A + 3.",
        "The answer is (a) + 3 = 7.",  # a sign and a number, then the formula goes on
        "So the answer is (B) + 2, giving 5.",
    ],
)
def test_a_sign_before_a_symbol_is_still_a_formula(content: str) -> None:
    d = mcq(content, answer="A")
    assert (d.extracted_final_answer, d.ambiguity) == (None, "no_extractable_answer"), d.reason


# --- 20. Numbers compare as numbers: a leading zero, or none -----------------------------------------------

DOLLARS = ["$.33", "$.66", "$1.00", "$.99"]
SHIFTED = ["$.66", "$6.60", "$66", "$0.06"]


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("The answer is (B) $0.66.", DOLLARS, "B"),
        ("FINAL: $0.66", DOLLARS, "B"),
        ("FINAL: $.66", ["$0.33", "$0.66", "$1.00", "$0.99"], "B"),
        ("Answer: .5", ["0.25", "0.50", "0.75", "1.00"], "B"),
        ("The answer is (C) 0.75 m", [".25 m", ".5 m", ".75 m", "1 m"], "C"),
        ("Final answer: -0.25", ["-.75", "-.5", "-.25", "0"], "C"),
        ("The final answer is $\\boxed{\\$0.66}$", DOLLARS, "B"),
        ("The answer is (B) \\$0.66.", DOLLARS, "B"),
        ("FINAL: $0.66", SHIFTED, "A"),
        ("FINAL: 66", SHIFTED, "C"),  # 66 is not .66
        ("FINAL: $6.6", SHIFTED, "B"),
    ],
)
def test_a_leading_zero_does_not_change_a_number(content: str, options: list[str], letter: str) -> None:
    d = mcq(content, options=options, answer=letter)
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


def test_a_number_without_its_leading_zero_is_not_another_number() -> None:
    d = mcq("The answer is (A) $66.", options=SHIFTED, answer="A")
    assert d.rule == "letter_value_mismatch", d.reason  # $66 is option C's text, not A's $.66


# --- 21. A letter, then the same answer as a value ---------------------------------------------------------

VOLUMES = ["25 cm^3", "250 cm^3", "2.5 cm^3", "2500 cm^3"]


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("The answer is (B). The answer is 250 cm³.", VOLUMES, "B"),
        ("The answer is (B). The answer is 250 cm^{3}.", VOLUMES, "B"),
        ("Answer: (C)\n\nAnswer: 9.8 m/s²", ["1 m/s^2", "4.9 m/s^2", "9.8 m/s^2", "19.6 m/s^2"], "C"),
        ("The answer is (A). The answer is 4 m^2.", ["4 m²", "8 m²", "16 m²", "2 m²"], "A"),
        ("The answer is (D). The answer is 12\\,\\text{kJ}.", ["3 kJ", "6 kJ", "9 kJ", "12 kJ"], "D"),
        ("The answer is (B).\n\nThe answer is $250\\ \\mathrm{cm}^3$.", VOLUMES, "B"),
        # A value that is no option's text, but may be B written another way (R8c's caution): B stands.
        ("The answer is (B). The answer is 0.25 L.", VOLUMES, "B"),
        ("The answer is (B). The answer is 251 cm^3.", VOLUMES, "B"),
    ],
)
def test_a_value_restating_the_letter_agrees_with_it(content: str, options: list[str], letter: str) -> None:
    d = mcq(content, options=options, answer=letter)
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("The answer is (B). The answer is 533 cm^3.", "533 cm^3"),
        ("The answer is (B).\n\nRechecking, the answer is 533.", "533"),  # the option's unit, left out
    ],
)
def test_a_value_contradicting_the_letter_before_it_is_no_single_answer(content: str, said: str) -> None:
    d = mcq(content, options=VOLUMES, answer="B")
    assert (d.extracted_final_answer, d.ambiguity, d.rule) == (None, "ambiguous_final_answer", "letter_value_mismatch")
    assert repr(said) in d.reason


def test_a_value_of_another_option_is_still_a_conflict() -> None:
    d = mcq("The answer is (B). The answer is 2500 cm³.", options=VOLUMES, answer="D")
    assert (d.extracted_final_answer, d.ambiguity) == ("D", "conflicting_final_answers"), d.reason
    strict = mcq("The answer is (B). The answer is 2500 cm³.", options=VOLUMES, answer="D", conflict_policy="strict")
    assert strict.extracted_final_answer is None


def test_a_stronger_final_value_still_names_no_option() -> None:
    """R8b's own example: the strongest kind decides, and FINAL: 555 is no option (the letter is weaker)."""
    d = mcq("So, the answer is D.\n\nThe answer is FINAL: 555.", options=["100", "200", "492", "540"], answer="D")
    assert (d.extracted_final_answer, d.rule) == (None, "value_not_an_option"), d.reason


def test_a_value_alone_that_is_no_option_still_names_none() -> None:
    d = mcq("The answer is 533 cm^3.", options=VOLUMES, answer="B")
    assert (d.extracted_final_answer, d.rule) == (None, "value_not_an_option"), d.reason


# --- 22. A lower-case list label followed by running text ---------------------------------------------------


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("Final Answer:\n(i) The number is: 42. The answer is F.", "F"),
        ("Final Answer:\n(i) The number is: 42\n\nThe answer is F.", "F"),
        ("**Final Answer:**\n(a) The ratio is 3:1, so the answer is (C).", "C"),
        ("FINAL: (i) first we compute the mass, then the answer is (B).", "B"),
        ("Answer: a) The first step fails.\n\nThe answer is D.", "D"),
    ],
)
def test_a_lower_case_label_before_text_is_no_letter(content: str, letter: str) -> None:
    d = mcq(content, options=TEN, answer=letter)
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("Final answer: (i)", TEN, "I"),
        ("The answer is (i).", TEN, "I"),
        ("Final Answer:\n(i)\n", TEN, "I"),
        ("Answer: (c) 36", TEN, "C"),
        ("Answer: (c) Canberra", ["Sydney", "Melbourne", "Canberra", "Perth"], "C"),
        ("Answer: (b) because the radius doubles", TEN, "B"),
        ("Answer: (b) seems right", TEN, "B"),
        ("Final Answer:\n(I) The number is: 108.", TEN, "I"),  # upper case: an option letter, as before
        ("Answer: (i) and (iii) only", ["(i) only", "(ii) only", "(i) and (iii) only", "(ii) and (iii) only"], "C"),
    ],
)
def test_a_letter_standing_alone_or_restated_still_reads(content: str, options: list[str], letter: str) -> None:
    d = mcq(content, options=options, answer=letter)
    assert d.extracted_final_answer == letter, d.reason


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("Final Answer:\n(i) The number is: 42. Then the answer would be (F).", "F"),  # below a hedge too
        ("Final Answer:\n(i) The number is: 42.\n\n\\boxed{F}", "F"),
    ],
)
def test_a_label_ranks_below_every_other_letter(content: str, letter: str) -> None:
    d = mcq(content, options=TEN, answer=letter, conflict_policy="strict")
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("The answer is (c) the mitochondria.", ["Ribosome", "Golgi apparatus", "Mitochondrion", "Lysosome"], "C"),
        ("Final Answer:\n(i) The number is: 108", TEN, "I"),
    ],
)
def test_a_label_alone_is_still_read_as_a_hedge(content: str, options: list[str], letter: str) -> None:
    """Nothing else names a letter: the label (perhaps a paraphrase of its option) decides, hedged."""
    d = mcq(content, options=options, answer=letter)
    assert (d.extracted_final_answer, d.hedged) == (letter, True), d.reason
    assert "list_label" in d.candidates[d.decided_by or 0].reading


@pytest.mark.parametrize(
    "content",
    [
        "The answer is likely B.\nFinal Answer: (c) the mitochondria",  # a hedge before it, no letter after
        "Option B is the closest, but\nFinal Answer: (c) The powerhouse of the cell",
        "Final Answer: (c) The cell wall.\nThe answer is 999.",  # a value of no option after it is no letter
    ],
)
def test_a_label_with_no_letter_after_it_keeps_its_markers_strength(content: str) -> None:
    """Only a letter stated after the label shows it opened a list; without one, a hedge or a weaker statement
    before or after it does not outrank its `Final Answer:`."""
    options = ["Ribosome", "Golgi apparatus", "the mitochondria", "Lysosome"]
    d = mcq(content, options=options, answer="C")
    assert d.extracted_final_answer == "C", d.reason


def test_a_lower_case_label_restating_another_option_still_contradicts() -> None:
    d = mcq("Answer: (c) Sydney", options=["Sydney", "Melbourne", "Canberra", "Perth"], answer="C")
    assert d.rule == "letter_value_mismatch", d.reason


# --- 23. Values compare after LaTeX normalisation: roots, pi, implicit products ----------------------------

ROOTS = ["sqrt(2)", "2*sqrt(2)", "4*sqrt(2)", "8"]
LATEX_ROOTS = ["\\sqrt{2}", "2\\sqrt{2}", "4\\sqrt{2}", "\\sqrt{32}"]


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("\\boxed{4\\sqrt{2}}\n\n(C)", ROOTS, "C"),
        ("The difference is $\\boxed{2\\sqrt{2}}$.", ROOTS, "B"),
        ("The answer is $4\\sqrt{2}$.", ROOTS, "C"),
        ("Final answer: 4√2", ROOTS, "C"),
        ("Final answer: 4 √(2)", ROOTS, "C"),
        ("\\boxed{\\sqrt{2}}", ROOTS, "A"),
        ("FINAL: 4*sqrt(2)", LATEX_ROOTS, "C"),
        ("FINAL: 4 \\cdot \\sqrt{2}", LATEX_ROOTS, "C"),
        ("FINAL: sqrt(32)", LATEX_ROOTS, "D"),
        ("\\boxed{3\\pi}", ["pi", "2*pi", "3*pi", "4*pi"], "C"),
        ("\\boxed{\\frac{\\sqrt{3}}{2}}", ["1/2", "sqrt(3)/2", "sqrt(2)/2", "1"], "B"),
    ],
)
def test_latex_values_match_plain_options(content: str, options: list[str], letter: str) -> None:
    d = mcq(content, options=options, answer=letter)
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


@pytest.mark.parametrize(
    ("content", "options"),
    [
        ("\\boxed{4\\sqrt{3}}", ROOTS),  # another root
        ("\\boxed{42}", ["4*2", "sqrt(2)", "4*sqrt(2)", "8"]),  # 42 is no product 4*2
        ("FINAL: 2 \\times 10^3", ["2", "10", "2*10", "20"]),
    ],
)
def test_latex_normalisation_invents_no_equality(content: str, options: list[str]) -> None:
    d = mcq(content, options=options, answer="C")
    assert d.extracted_final_answer is None, d.reason


# --- 24. A capital A followed by a verb is the letter A ------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "hedged"),
    [
        ("FINAL: A would be my guess", True),
        ("Answer: A seems right", True),
        ("Answer: A looks correct", True),
        ("FINAL: A should be right.", False),
        ("The answer is A might be a stretch, but it fits.", False),
        ("Answer: A fits the data best", False),
        ("The correct answer is A matches the computed 492 J", False),
        ("Answer: A only", False),
        ("Final answer: A appears correct", True),
    ],
)
def test_a_capital_a_before_a_verb_is_the_letter(content: str, hedged: bool) -> None:
    d = mcq(content, answer="A")
    assert (d.extracted_final_answer, d.hedged) == ("A", hedged), d.reason


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("Answer: A would-be solution is ruled out; the answer is (C).", "C"),
        ("A seems to be wrong, so the answer is B", "B"),
        ("Answer: A mass of 5 kg hangs from it. The answer is (D).", "D"),
        ("The answer is a would-be paradox; the correct option is C.", "C"),
    ],
)
def test_an_article_before_a_noun_phrase_stays_prose(content: str, letter: str) -> None:
    d = mcq(content, answer=letter)
    assert (d.extracted_final_answer, d.ambiguity) == (letter, "none"), d.reason


@pytest.mark.parametrize("content", ["Answer: I would say so.", "Answer: I seem to recall it.", "Answer: a seems odd"])
def test_the_pronoun_before_a_verb_stays_prose(content: str) -> None:
    """The rule is for the article: the pronoun I is always followed by a verb, and a lower-case a is an
    article far more often than a letter after a verb."""
    d = mcq(content, answer="A", n_options=10)
    assert d.extracted_final_answer is None, d.reason


# --- Issue 28, items 6-7: shapes of published MMLU-Pro outputs (gpt-4o, MiniMax) ---------------------------------

EXEMPLAR_PROMPT = (
    'The following are multiple choice questions (with answers). Finish with "the answer is (X)".\n\n'
    "Question: Which gas is inert?\nOptions: A. oxygen B. argon\nAnswer: Let's think step by step. "
    "Argon is a noble gas. The answer is (B).\n\n"
    "Question: How many sides has a decagon?\nOptions: A. 8 J. 10\nAnswer: Let's think step by step. "
    "Deca means ten. The answer is (J).\n\n"
    "Question: What is 7 * 12?\nOptions: " + " ".join(f"{c}. {v}" for c, v in zip("ABCDEFGHIJ", TEN, strict=True))
    + "\nAnswer: Let's think step by step."
)


def test_a_formula_after_a_marker_names_no_letter() -> None:
    content = "The final answer is:\n\\[ (f_1 \\ast f_2)(t) = \\int_0^t f_1(s) f_2(t-s)\\,ds \\]\nThe answer is (A)."
    d = mcq(content, options=TEN, answer="A")
    assert (d.extracted_final_answer, d.ambiguity) == ("A", "none"), d.reason
    assert mcq("Final answer: \\(x_1 + x_2\\)", options=TEN, answer="A").extracted_final_answer is None


def test_restated_exemplar_answers_are_examples_and_the_own_answer_decides() -> None:
    content = (
        "Argon is a noble gas. The answer is (B).\n\nQuestion: How many sides has a decagon?\n"
        "Deca means ten. The answer is (J).\n\nNow our question: 7 * 12 = 84, which corresponds to option G."
    )
    d = mcq(content, options=TEN, answer="G", prompt=EXEMPLAR_PROMPT)
    assert (d.extracted_final_answer, d.ambiguity, d.hedged) == ("G", "none", False), d.reason
    assert ["exemplar_answer" in c.reading for c in d.candidates][:2] == [True, True]


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("The answer is (B). Then the answer is (J).", "J"),  # the last statement is always the model's own
        ("7 * 12 = 84. The answer is (G).", "G"),
        ("The answer is (G). 84 matches option G.", "G"),
    ],
)
def test_exemplar_letters_do_not_hide_the_models_own_answer(content: str, letter: str) -> None:
    assert mcq(content, options=TEN, answer=letter, prompt=EXEMPLAR_PROMPT).extracted_final_answer == letter

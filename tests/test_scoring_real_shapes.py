"""The rules for real model output (docs/scoring/mcq.md, "Reading real output"), each with cases where it
must fire and cases where it must not. Every text here was written by the project's authors."""

from __future__ import annotations

import pytest
from conftest import mcq

TEN = ["12", "24", "36", "48", "60", "72", "84", "96", "108", "120"]


# Rule 1: LaTeX around the letter or the marker.
@pytest.mark.parametrize(
    "content",
    [
        "So the net force is 3000 N.\n\nThe answer is \\(G\\).",
        "\\[ The\\ answer\\ is\\ (G) \\]",
        "$$\\text{Answer: } G$$",
        "Final answer: $\\mathrm{G}$",
        "The correct answer is \\textbf{G}.",
        "The answer is \\(\\text{G. 84}\\)",
        "Therefore:\n\\[\n\\text{The answer is } \\boxed{G}\n\\]",
    ],
)
def test_latex_reads_the_letter(content: str) -> None:
    d = mcq(content, answer="G", options=TEN)
    assert (d.extracted_final_answer, d.ambiguity) == ("G", "none")


@pytest.mark.parametrize(
    "content",
    [
        "Let \\(A\\) be the event of rolling a six and \\(B\\) the event of an even roll.",
        "By Bayes, \\[ P(A \\mid B) = \\frac{P(B \\mid A) P(A)}{P(B)} \\]",
        "The answer is \\(x = 5\\), which I cannot map to an option.",
        "So the answer is $A + B$ in total.",
    ],
)
def test_latex_letter_in_an_equation_is_not_a_statement(content: str) -> None:
    d = mcq(content, answer="A")
    assert d.extracted_final_answer is None and d.ambiguity == "no_extractable_answer"


def test_latex_text_with_option_text() -> None:
    d = mcq("The answer is \\text{J. 120}", answer="J", options=TEN)
    assert d.extracted_final_answer == "J" and "latex" in d.candidates[0].reading


# Rule 2: a box after a marker is a statement of the marker's kind.
@pytest.mark.parametrize(
    "content",
    [
        "A first guess: the answer is (H).\n\nRechecking the units...\n\n**Final Answer:** \\boxed{F}",
        "The answer is (H) at first sight.\n\nFinal Answer:\n\\[\n\\boxed{F}\n\\]",
        "I said the answer is (H), but that was wrong.\n\n**Final Answer**\n\n\\boxed{F}",
        "The answer is (H).\n\nFinal answer: $\\boxed{\\text{F}}$",
    ],
)
def test_box_after_marker_outranks_earlier_answer(content: str) -> None:
    d = mcq(content, answer="F", options=TEN)
    assert (d.extracted_final_answer, d.extraction_method, d.ambiguity) == ("F", "final_answer_letter", "none")
    assert "box_after_marker" in next(c for c in d.candidates if c.letter == "F").reading


def test_plain_box_does_not_outrank_an_answer_statement() -> None:
    d = mcq("The answer is (H).\n\nSome algebra gives \\boxed{F}", answer="H", options=TEN)
    assert (d.extracted_final_answer, d.extraction_method) == ("H", "answer_letter")


# Rule 3: more phrasings; hedged forms only where nothing firmer exists.
@pytest.mark.parametrize(
    "content",
    [
        "Answer is C",
        "The correct answer is option C.",
        "Correct option: C",
        "After weighing each choice, the best answer is (C).",
        "The answer is: (C)",
        "**The correct answer is C.**",
        "Therefore, option C is correct.",
        "The correct answer choice is C.",
        "Final choice: C",
    ],
)
def test_phrasings(content: str) -> None:
    assert mcq(content, answer="C").extracted_final_answer == "C"


@pytest.mark.parametrize(
    "content",
    ["Hmm, the answer would be (A).", "Given the data, the answer is likely A.", "The most likely answer is A."],
)
def test_hedged_alone_counts_and_is_marked(content: str) -> None:
    d = mcq(content, answer="A")
    assert (d.extracted_final_answer, d.hedged) == ("A", True)


def test_hedged_yields_to_a_firm_statement_without_conflict() -> None:
    d = mcq("At first the answer would be (A). After checking, the answer is (C).", answer="C")
    assert (d.extracted_final_answer, d.ambiguity, d.hedged) == ("C", "none", False)
    d = mcq("The answer is (C). Some might say the answer is probably A.", answer="C")
    assert (d.extracted_final_answer, d.ambiguity) == ("C", "none")


@pytest.mark.parametrize(
    "content", ["Option A is incorrect because it ignores friction.", "Option A is correctly stated."]
)
def test_option_claim_counter_examples(content: str) -> None:
    assert mcq(content, answer="A").extracted_final_answer is None


# Rule 4: option lines.
CITIES = ["Sydney", "Canberra", "Melbourne", "Perth"]


@pytest.mark.parametrize(
    "content",
    [
        "B. Canberra\n\nCanberra was chosen as a compromise between Sydney and Melbourne.",
        "B) Canberra",
        "Sydney is the largest city, but the capital is different.\n\n**B. Canberra**",
        "**B) Canberra** - the purpose-built capital.",
    ],
)
def test_option_line_with_matching_text(content: str) -> None:
    d = mcq(content, answer="B", options=CITIES)
    assert (d.extracted_final_answer, d.extraction_method) == ("B", "option_line")


@pytest.mark.parametrize(
    "content",
    [
        "B. Sydney\n\nThat is my pick.",  # the text is option A's, not B's
        "A. Sydney\nB. Canberra\nC. Melbourne\nD. Perth",  # an echo of the option list
        "A. Sydney - too big.\n\nB. Canberra - the capital.\n\nC. Melbourne - former seat.",  # an analysis
    ],
)
def test_option_line_counter_examples(content: str) -> None:
    assert mcq(content, answer="B", options=CITIES).extracted_final_answer is None


def test_option_line_quoted_in_reasoning_is_not_visible() -> None:
    d = mcq("<think>B. Canberra looks right</think>\n\nI am not sure.", answer="B", options=CITIES)
    assert (d.extracted_final_answer, d.ambiguity) == (None, "no_extractable_answer")


def test_marker_followed_by_several_option_lines_is_ambiguous() -> None:
    content = "Answer:\nB. 24\nC. 36\nI. 108"
    d = mcq(content, answer="B", options=TEN)
    assert (d.extracted_final_answer, d.ambiguity) == (None, "ambiguous_final_answer")
    assert d.candidates[0].letters == ["B", "C", "I"] and "several_option_lines" in d.candidates[0].reading


def test_marker_with_one_option_line_below_is_that_letter() -> None:
    d = mcq("Answer:\nB. Canberra\n\nIt was purpose-built.", answer="B", options=CITIES)
    assert d.extracted_final_answer == "B"


# Rule 5: placeholders echoed from the prompt.
PROMPT_X = 'Question...\n\nThink step by step and finish with "The answer is (X)" where X is the letter.'


@pytest.mark.parametrize(
    "content",
    [
        'I cannot give "The answer is (X)" with confidence here.',
        "The answer is (X) where X is the letter of the largest value.",
        'Following the instruction "FINAL: X", I would need a letter, but none fits.',
    ],
)
def test_placeholder_echo_is_not_a_statement(content: str) -> None:
    d = mcq(content, answer="B", options=TEN, prompt=PROMPT_X)
    assert (d.extracted_final_answer, d.ambiguity) == (None, "no_extractable_answer")
    assert d.candidates and all(c.placeholder for c in d.candidates)


def test_placeholder_echo_then_real_answer() -> None:
    d = mcq("I must write The answer is (X). So: the answer is (D).", answer="D", options=TEN, prompt=PROMPT_X)
    assert (d.extracted_final_answer, d.ambiguity) == ("D", "none")


def test_prompt_placeholder_letter_other_than_x() -> None:
    prompt = "End your reply with 'FINAL: Z' where Z is your letter."
    assert mcq("FINAL: Z", answer="B", prompt=prompt).ambiguity == "no_extractable_answer"
    assert mcq("FINAL: Z", answer="B").ambiguity == "out_of_range"  # without the prompt it is a real statement


def test_placeholder_letter_that_is_an_option_is_an_answer() -> None:
    options = [f"o{i}" for i in range(24)]  # A..X: X is a real option
    assert mcq("The answer is (X)", answer="X", options=options, prompt=PROMPT_X).correct is True


# Rule 6: words that look like letters.
@pytest.mark.parametrize(
    "content",
    [
        "Answer: I don't know which of these is right.",
        "The answer is (I cannot determine this from the options given).",
        "The correct answer is a selection of the first two options.",
        "Answer: I'm not certain.",
        "The answer is: (i) the reaction is exothermic, and (ii) entropy rises.",
        "The answer has two parts. Answer: a) the rate doubles; b) the yield stays.",
    ],
)
def test_pronoun_article_and_labels_are_not_letters(content: str) -> None:
    d = mcq(content, answer="I", options=TEN)
    assert d.extracted_final_answer is None, d.reason


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("The answer is A because the others double-count.", "A"),
        ("Answer: I", "I"),
        ("Answer: I.", "I"),
        ("The answer is (I) 108.", "I"),
        ("answer: a", "A"),
        ("The answer is I because 9 x 12 = 108.", "I"),
    ],
)
def test_real_letters_that_look_like_words(content: str, letter: str) -> None:
    assert mcq(content, answer=letter, options=TEN).extracted_final_answer == letter


# Rule 7: truncation.
def test_length_cut_is_marked_truncated() -> None:
    d = mcq("Let me compute: 20% of 426 is 85.2, which is", answer="C", finish_reason="length")
    assert d.truncated is True and d.ambiguity == "no_extractable_answer"


def test_letters_changing_until_the_cut_conflict() -> None:
    d = mcq("The answer is (A). Wait. The answer is (C). Hmm, no, the answer is (B", answer="C", finish_reason="length")
    assert d.truncated is True and d.ambiguity == "conflicting_final_answers"


@pytest.mark.parametrize(
    "content",
    [
        "Okay, the user asks for 20% of 426. That gives 85.2, so FINAL: C. But let me double",
        "Hmm. Option C is correct, so The answer is (C). Let me verify",
    ],
)
def test_think_prefilled_without_closer_is_all_reasoning(content: str) -> None:
    d = mcq(content, answer="C", finish_reason="length", think_prefilled=True)
    assert (d.ambiguity, d.truncated) == ("answer_only_in_reasoning", True)
    assert mcq(content, answer="C", finish_reason="length").extracted_final_answer == "C"  # the setting matters


def test_think_prefilled_with_closer() -> None:
    d = mcq("It is 85.2, option C.\n</think>\n\nFINAL: C", answer="C", think_prefilled=True)
    assert (d.extracted_final_answer, d.reasoning_statements) == ("C", 0)


# Rule 8: values instead of letters.
FRACTIONS = ["1/2", "3/4", "2/3", "5/6"]


@pytest.mark.parametrize(
    ("content", "options", "letter"),
    [
        ("So the probability is \\boxed{\\frac{3}{4}}", FRACTIONS, "B"),
        ("The answer is \\(\\frac{3}{4}\\).", FRACTIONS, "B"),
        ("The answer is 0.75", FRACTIONS, "B"),
        ("FINAL: 1284", ["1256", "1284", "1102", "1328"], "B"),
        ("FINAL: 1,284", ["1256", "1284", "1102", "1328"], "B"),
        ("Answer: Paris, the capital of France.", ["Lyon", "Paris", "Nice", "Lille"], "B"),
        ("\\boxed{48^\\circ C}", ["12°C", "48°C", "36°C", "60°C"], "B"),
    ],
)
def test_value_matching_one_option(content: str, options: list[str], letter: str) -> None:
    d = mcq(content, answer=letter, options=options)
    assert (d.extracted_final_answer, d.extraction_method) == (letter, "option_text")


def test_value_matching_two_options_is_ambiguous() -> None:
    d = mcq("The answer is \\boxed{0.5}", answer="A", options=["1/2", "0.50", "2", "3"])
    assert (d.extracted_final_answer, d.ambiguity) == (None, "ambiguous_final_answer")


@pytest.mark.parametrize(
    ("content", "options"),
    [
        ("\\boxed{42}", ["40", "41", "43", "44"]),  # no option has that value
        ("The answer is 48 K", ["12°C", "48°C", "36°C", "60°C"]),  # units are kept
        ("Answer: Paris is lovely in spring", ["Paris, France", "Lyon", "Nice", "Lille"]),
    ],
)
def test_value_counter_examples(content: str, options: list[str]) -> None:
    assert mcq(content, answer="A", options=options).extracted_final_answer is None


# Shapes found when the scorer was measured on real public outputs (every text here is our own).
@pytest.mark.parametrize(
    ("content", "letter", "hedged"),
    [
        ("No option matches exactly. The closest option is (G).", "G", True),
        ("Our estimate is 1.9 m, so option B is the closest.", "B", True),
        ("Our estimate is 2.6, which corresponds to option C.", "C", False),
        ("Weighing the four statements, the correct statement is:\nC. o2", "C", False),
        ("The most accurate option is (C).", "C", False),
        ("The other three ignore drag.\n\n(C) is the correct answer.", "C", False),
        ("Everything else fails. C is the answer.", "C", False),
        ("The correct answer is therefore option C", "C", False),
        ('Answer: "C"', "C", False),
        ("Answer: `C`", "C", False),
        ("答案是 C", "C", False),
    ],
)
def test_more_conclusions(content: str, letter: str, hedged: bool) -> None:
    d = mcq(content, answer=letter, options=TEN)
    assert (d.extracted_final_answer, d.hedged) == (letter, hedged), d.reason


def test_a_firm_answer_beats_closest_and_corresponds() -> None:
    d = mcq("The closest option is (C), which corresponds to option C.\nOn reflection the answer is (D).", answer="D")
    assert (d.extracted_final_answer, d.ambiguity) == ("D", "none")


@pytest.mark.parametrize(
    "content",
    [
        "Vitamin C is the answer to scurvy, historically.",
        "The closest match was hard to find.",
        "Nothing here corresponds to option formatting.",
    ],
)
def test_conclusion_counter_examples(content: str) -> None:
    assert mcq(content, answer="C").extracted_final_answer is None


def test_one_letter_per_sub_part_is_not_one_answer() -> None:
    d = mcq("The answer is (G) $438.00, (B) $459.60, (B) $424.90.", answer="G", options=TEN)
    assert (d.extracted_final_answer, d.ambiguity) == (None, "ambiguous_final_answer")
    assert mcq("The answer is (B), not (C).", answer="B").extracted_final_answer == "B"


@pytest.mark.parametrize(
    "content",
    [
        "\\boxed{\\textbf{(C)}\\ 36}",
        "\\boxed{(C) 36}",
        "\\boxed{C) 36}",
        "$\\boxed{\\text{(C) } 36}$",
        "\\boxed{Option C}",
        "**Option C**",
    ],
)
def test_boxes_and_bare_answers_with_labels(content: str) -> None:
    assert mcq(content, answer="C", options=TEN).extracted_final_answer == "C"


ROMAN = ["I only", "II only", "I and II only", "I, II and III"]


@pytest.mark.parametrize(
    "content", ["Answer: I and II only", "So the answer is I and II only, which covers both claims."]
)
def test_roman_numeral_option_texts(content: str) -> None:
    d = mcq(content, answer="C", options=ROMAN)
    assert (d.extracted_final_answer, d.extraction_method) == ("C", "option_text")


def test_roman_letter_i_is_still_a_letter_when_no_option_text_matches() -> None:
    assert mcq("Answer: I", answer="I", options=TEN).extracted_final_answer == "I"


@pytest.mark.parametrize(
    "content",
    [
        "The closest option is (C) 36, but it is not the correct answer.",
        "The closest options are:\n\nD. 48\n\nHowever, our value differs, so we can't choose option D.",
    ],
)
def test_a_statement_taken_back_is_not_an_answer(content: str) -> None:
    d = mcq(content, answer="C", options=TEN)
    assert d.extracted_final_answer is None
    assert any(c.withdrawn and "withdrawn" in c.reading for c in d.candidates)


def test_taking_back_one_letter_leaves_the_others() -> None:
    d = mcq("It is not A; we cannot choose option A. The answer is (B).", answer="B")
    assert d.extracted_final_answer == "B"


@pytest.mark.parametrize(
    "content",
    ["The answer is (B) 1284. Option (C) is wrong because it double-counts.", "Answer: (B) 1284, not (C)"],
)
def test_an_aside_naming_the_next_letter_is_not_an_enumeration(content: str) -> None:
    assert mcq(content, answer="B").extracted_final_answer == "B"


@pytest.mark.parametrize("content", ["Option C is correct.", "OPTION C IS CORRECT", "So option c is correct."])
def test_option_claims_in_any_case(content: str) -> None:
    assert mcq(content, answer="C").extracted_final_answer == "C"


# Found in review: statements that are hypothetical, in code, or asides, and answers that must survive.
CAPITALS = ["Paris", "London", "Berlin", "Madrid"]


@pytest.mark.parametrize(
    "content",
    [
        "A common mistake is to say the answer is A.\n\n\\boxed{C}",
        "A common mistake is to say the answer is A.\n\n**C. Berlin**",
        "At first glance the answer is A. However, after checking, C is the correct answer.",
        "If the answer is A, the capital would be Paris. It is not.\n\n\\boxed{C}",
        "```python\nprint('FINAL: A')\n```\nThe answer is C",
        "FINAL: C, but it's not an easy question.",
        "The answer is C, but it is not obvious at first.",
        "FINAL: C\n\nWe cannot choose C without first ruling out A, which we did.",
        "The answer is (C), and (D) is off.",
        "Answer: 'C'",
        "Answer: Ｃ",
        "<think>Berlin.</think>FINAL: C</think>",
    ],
)
def test_review_cases_read_c(content: str) -> None:
    d = mcq(content, answer="C", options=CAPITALS)
    assert d.extracted_final_answer == "C", d.reason


def test_hypothetical_and_code_statements_are_hedged_not_dropped() -> None:
    d = mcq("If the answer is A, the capital is in Europe.", answer="A", options=CAPITALS)
    assert (d.extracted_final_answer, d.hedged) == ("A", True)
    d = mcq("```python\nprint('Answer: B')\n```", answer="B", options=CAPITALS)
    assert (d.extracted_final_answer, d.hedged) == ("B", True)
    assert "in_code_block" in d.candidates[0].reading
    d = mcq("```\nFINAL: B\n```", answer="B", options=CAPITALS)  # a plain fence only frames the answer
    assert (d.extracted_final_answer, d.hedged) == ("B", False)


@pytest.mark.parametrize(
    "content", ["the answer seems to be C", "Final answer is probably C", "The final answer is likely C"]
)
def test_more_hedges(content: str) -> None:
    d = mcq(content, answer="C", options=CAPITALS)
    assert (d.extracted_final_answer, d.hedged) == ("C", True)


def test_an_aside_with_a_verb_is_not_a_sub_part() -> None:
    d = mcq("The correct answer is (A) Paris, (B) is London", answer="A", options=CAPITALS)
    assert (d.extracted_final_answer, d.ambiguity) == ("A", "none")


# Found on a second, held-out set of real outputs (every text here is our own).
@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("Por lo tanto, la respuesta es (H).", "H"),
        ("La respuesta correcta es D", "D"),
        ("Antwort:\n\nAntwort: C", "C"),
        ("Die richtige Antwort ist B.", "B"),
        ("Donc la bonne réponse est (C).", "C"),
        ("Portanto, a resposta correta é C.", "C"),
        ("Quindi la risposta è (D).", "D"),
    ],
)
def test_answer_phrases_in_other_languages(content: str, letter: str) -> None:
    assert mcq(content, answer=letter, options=TEN).extracted_final_answer == letter


def test_false_statement_is_a_hedged_answer() -> None:
    d = mcq("Checking each one, the FALSE statement is **D**.", answer="D")
    assert (d.extracted_final_answer, d.hedged) == ("D", True)
    d = mcq("The false statement is A, so the claim holds. The answer is (C).", answer="C")
    assert d.extracted_final_answer == "C"


def test_statements_about_an_invented_question_are_ignored() -> None:
    content = (
        "Adding the two gives 84, so the answer is (G).\n\nQuestion: Which gas is inert?\n"
        "Options: A. neon B. oxygen\nAnswer: Let's think step by step. The answer is (A)."
    )
    d = mcq(content, answer="G", options=TEN)
    assert (d.extracted_final_answer, d.ambiguity) == ("G", "none")
    assert "after_invented_question" in d.candidates[-1].reading


def test_a_question_before_the_answer_is_not_an_invention() -> None:
    d = mcq("Question: what is asked?\nWe compute 84.\nThe answer is (G).", answer="G", options=TEN)
    assert d.extracted_final_answer == "G"


@pytest.mark.parametrize("content", ["D. B (boron is a group 13 acceptor)", "D. B", "D. B: boron"])
def test_option_line_with_a_one_character_option(content: str) -> None:
    d = mcq(content, answer="D", options=["Li", "Na", "K", "B"])
    assert (d.extracted_final_answer, d.extraction_method) == ("D", "option_line")


def test_one_character_option_text_must_stand_apart() -> None:
    assert mcq("D. Bromine is heavier", answer="D", options=["Li", "Na", "K", "B"]).extracted_final_answer is None


# The second review's probes: a firm correction after an abandoned letter must win.
@pytest.mark.parametrize(
    "content",
    [
        "Answer: B\n\nWait, Sydney is not the capital, so the answer is C.",
        "The answer is (B).\n\nHmm, that's not right; Sydney is the largest city, not the capital, "
        "so the correct answer is (C).",
        "The answer is B. Actually no, if we look at it again, the answer is C.",
        "Answer: (B)\nOn reflection, as Sydney is not the seat of government, the final answer is (C).",
        "Answer: B\n\nHold on. Even if Sydney is bigger, the answer is C.",
        "A. Paris is in France, so it is out.\n"
        "Among the Australian cities, since Sydney is not the capital, the answer is C.",
        "\\boxed{B}? No: since Sydney is not the capital, the answer is \\boxed{C}.",
        "I first thought the answer is (B), the largest city. Checking again, Canberra is the capital."
        "\n\n```\nFINAL: C\n```",
        "At first glance, (B) is the correct answer. However, the capital is Canberra, so the answer is (C).",
        "Answer: B? No. The true answer is C.",
        "The wrong answer is B; Canberra is the capital, so the answer is C.",
        "The answer is (C), but it is not one of the largest cities.",
        "Answer: C. Some may say you can't choose C, since Sydney is better known, but Canberra is the capital.",
        "The answer is (C) Canberra, (B) Sydney being the largest city.",
        'I will end with "The answer is (X)".\n\nQuestion: What is the capital of Australia?\n\nThe answer is (C).',
        "Option B is correct? Let's check.\n\nQ1: Is Sydney the capital? No.\nQ2: Is Canberra? Yes."
        "\n\nThe answer is C.",
        "Suppose the answer is A. Then Paris would be in Australia.\nQ.E.D.\n\nFINAL: C",
        "La respuesta correcta es la C.",
        "A resposta correta é a alternativa C.",
        "Die richtige Antwort lautet C.",
        "Respuesta: la C",
    ],
)
def test_second_review_probes_read_c(content: str) -> None:
    d = mcq(content, answer="C", options=["Paris", "Sydney", "Canberra", "Melbourne"])
    assert d.extracted_final_answer == "C", d.reason


@pytest.mark.parametrize(
    "content",
    [
        "Canberra is the capital; the other options are cities that are not the capital:\n\nB. Sydney",
        "The capital is Canberra. The most common wrong pick is\nB. Sydney",
    ],
)
def test_an_analysis_ending_on_a_distractor_names_no_answer(content: str) -> None:
    assert mcq(content, answer="C", options=["Paris", "Sydney", "Canberra", "Melbourne"]).extracted_final_answer != "B"

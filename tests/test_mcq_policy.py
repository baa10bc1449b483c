"""Rules 2-7 of the MCQ final-answer policy, one group of tests per rule."""

import pytest
from conftest import mcq


# Rule 2: kinds of statement, and what counts as the letter.
@pytest.mark.parametrize(
    ("content", "method"),
    [
        ("FINAL: D", "final_colon_letter"),
        ("final: d", "final_colon_letter"),
        ("**FINAL:** D", "final_colon_letter"),
        ("Final answer: D", "final_answer_letter"),
        ("The final answer is D.", "final_answer_letter"),
        ("FINAL ANSWER: (D)", "final_answer_letter"),
        ("Answer: D", "answer_letter"),
        ("The answer is D.", "answer_letter"),
        ("The correct answer is [D]", "answer_letter"),
        ("answer: d", "answer_letter"),
        ("So we get \\boxed{D}", "boxed_letter"),
        ("\\boxed{\\text{D}}", "boxed_letter"),
        ("\\boxed{(D)}", "boxed_letter"),
        ("D", "bare_letter"),
        ("(D)", "bare_letter"),
        ("**D**", "bare_letter"),
        ("  D.\n", "bare_letter"),
    ],
)
def test_statement_kinds(content: str, method: str) -> None:
    d = mcq(content, answer="D")
    assert (d.extracted_final_answer, d.extraction_method, d.correct) == ("D", method, True)


@pytest.mark.parametrize(
    "content",
    [
        "Answer: (B)",
        "Answer: [B]",
        "Answer: **B**",
        "Answer: $B$",
        "Answer: \\text{B}",
        "Answer: B. 4",
        "The answer is B) 4",
        "Answer: b",
        "The answer is B because 2 + 2 = 4.",
    ],
)
def test_wrapped_or_followed_by_option_text(content: str) -> None:
    d = mcq(content, answer="B")
    assert d.extracted_final_answer == "B"


@pytest.mark.parametrize(
    "content",
    [
        "Answer: Because the sum is even.",
        "The answer is Definitely unclear",
        "FINAL: Done",
        "Answer: Both are wrong",
        "The answer is a prime number.",
        "Answer: I don't know.",
        "d",
        "b.",
    ],
)
def test_letter_must_stand_alone(content: str) -> None:
    d = mcq(content, answer="D", n_options=4)
    assert d.extracted_final_answer is None
    assert d.ambiguity == "no_extractable_answer"


def test_bare_letter_needs_the_whole_visible_region() -> None:
    assert mcq("I pick D", answer="D").extracted_final_answer is None
    assert mcq("<think>long thought</think>\n\n**D**\n", answer="D").extraction_method == "bare_letter"


# Rule 3: strongest kind present, last statement within it; weaker kinds never conflict.
def test_stronger_kind_wins_over_later_weaker_kind() -> None:
    d = mcq("FINAL: D\n\nThe answer is A, or so I said in a draft. \\boxed{C}", answer="D")
    assert (d.extracted_final_answer, d.ambiguity, d.extraction_method) == ("D", "none", "final_colon_letter")


def test_final_answer_beats_answer() -> None:
    d = mcq("The answer is A.\n\nFinal answer: C", answer="C")
    assert (d.extracted_final_answer, d.ambiguity) == ("C", "none")


def test_last_statement_of_the_kind_decides_and_repeats_do_not_conflict() -> None:
    d = mcq("Answer: D\n\nDouble-checking... Answer: D", answer="D")
    assert (d.extracted_final_answer, d.ambiguity, d.rule) == ("D", "none", "final_statement")


def test_conflict_within_weaker_kind_when_no_stronger_kind() -> None:
    d = mcq("The answer is A.\nHmm, no. The answer is D.", answer="D")
    assert (d.extracted_final_answer, d.ambiguity, d.correct) == ("D", "conflicting_final_answers", True)
    d = mcq("The answer is A.\nHmm, no. The answer is D.", answer="D", conflict_policy="strict")
    assert (d.extracted_final_answer, d.correct) == (None, False)


# Rule 4: several letters, out of range.
@pytest.mark.parametrize(
    "content",
    [
        "FINAL: B or C",
        "FINAL: B, C",
        "FINAL: B/C",
        "FINAL: B and C",
        "Answer: (B) or (C).",
        "The answer is B, C, or D.",
    ],
)
def test_several_letters_are_ambiguous(content: str) -> None:
    d = mcq(content, answer="B")
    assert (d.extracted_final_answer, d.ambiguity, d.correct) == (None, "ambiguous_final_answer", False)
    assert d.candidates[0].letter is None and len(d.candidates[0].letters) >= 2


def test_a_later_word_is_not_a_second_letter() -> None:
    assert mcq("Answer: B and I think that settles it.", answer="B").extracted_final_answer == "B"
    assert mcq("Answer: B, as 2 + 2 = 4", answer="B").extracted_final_answer == "B"


@pytest.mark.parametrize(("content", "n"), [("FINAL: E", 4), ("Answer: K", 10), ("\\boxed{Z}", 10)])
def test_out_of_range(content: str, n: int) -> None:
    d = mcq(content, answer="B", n_options=n)
    assert (d.extracted_final_answer, d.ambiguity, d.correct) == (None, "out_of_range", False)


def test_letter_j_in_range_with_ten_options() -> None:
    assert mcq("FINAL: J", answer="J", n_options=10).correct is True


# Rule 5: nothing visible.
@pytest.mark.parametrize("content", [None, "", "   \n"])
def test_no_extractable_answer(content: str | None) -> None:
    d = mcq(content, "I computed 4 but I will not say it.", answer="B")
    assert (d.ambiguity, d.extraction_source, d.extraction_method, d.correct) == (
        "no_extractable_answer",
        "none",
        "none",
        False,
    )


def test_answer_only_in_reasoning_without_fallback() -> None:
    d = mcq("", "Working it out gives 4, option B.\n\nFINAL: B", answer="B")
    assert (d.ambiguity, d.extracted_final_answer, d.correct) == ("answer_only_in_reasoning", None, False)


def test_reasoning_fallback_takes_last_statement_of_strongest_kind() -> None:
    reasoning = "The answer is A? No.\nFINAL: C\nLet me recheck... FINAL: B"
    d = mcq(None, reasoning, answer="B", allow_reasoning_fallback=True)
    assert (d.extracted_final_answer, d.extraction_source, d.correct) == ("B", "reasoning", True)
    assert d.ambiguity == "conflicting_final_answers"
    d = mcq(None, "Thinking... FINAL: B", answer="B", allow_reasoning_fallback=True)
    assert (d.ambiguity, d.rule, d.extraction_source) == ("none", "reasoning_fallback", "reasoning")


def test_fallback_on_truncated_output_with_nothing_anywhere() -> None:
    d = mcq(
        None, "Computing 20% of 426 gives 85 and", answer="C", finish_reason="length", allow_reasoning_fallback=True
    )
    assert (d.ambiguity, d.correct, d.truncated) == ("no_extractable_answer", False, True)


# Rule 6: the reasoning region never changes a visible decision and never raises an ambiguity.
def test_reasoning_never_changes_visible_decision() -> None:
    for policy in ({}, {"allow_reasoning_fallback": True}, {"conflict_policy": "strict"}):
        d = mcq("The answer is C.", "FINAL: A. FINAL: B or D. \\boxed{E}", answer="C", **policy)
        assert (d.extracted_final_answer, d.ambiguity, d.correct) == ("C", "none", True)
        assert d.reasoning_statements == 3


# Rule 7: the names recorded.
def test_recorded_names() -> None:
    d = mcq("FINAL: D", answer="D")
    assert d.extraction_source == "content"
    assert d.candidates[0].method == "final_colon_letter"
    assert d.candidates[0].region == "content"
    assert (d.candidates[0].start, d.candidates[0].end) == (0, 8)

"""Scorer 1.10.0 (issue 40, item 3): the answer shapes real published outputs showed the scorer misreading, each rule
pinned by examples of its class written here, and by near-misses that must keep their reading. Every text here was
written for these tests; the real records each rule moved are listed in tests/data/answers/intended_changes.jsonl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import mcq

from ocllm.models import Policy, Sample
from ocllm.scoring import decide
from ocllm.scoring.math.decision import MathDecision
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.mcq.fields import McqTask


def math(content: str, gold: str, question: str = "How much is it?") -> MathDecision:
    decision = decide(MathTask(id="t", question=question, answer=gold), Sample(task_id="t", content=content))
    assert isinstance(decision, MathDecision)
    return decision


# --- a sentence in bold, a label's bold, a label inside the value ------------------------------------------------


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("Two pairs at $33 and a belt at $38.\n\n**The boots cost \\$104.**", "104"),
        ("Working backwards from the end.\n\n**She started with 40 marbles.**", "40"),
        ("He saves the rest.\n\n**He ends up saving \\$1,250 this year.**", "1250"),
        ("**Answer:** John lost **4 people**.", "4"),
        ("**Final Answer:** The farmer keeps **12 cows** in the barn.", "12"),
        ("### Final Answer:\nAnswer: \\(\\frac{3}{4}\\)", "3/4"),
        ("**Final Answer:**\n\\[\n\\text{Answer: } 10\n\\]", "10"),
        ("Final answer:\n\\[ \\text{Answer: 7} \\]", "7"),
    ],
)
def test_the_value_in_a_sentence_or_after_a_nested_label_is_read(content: str, gold: str) -> None:
    d = math(content, gold)
    assert d.correct is True, d.reason


@pytest.mark.parametrize(
    "content",
    [
        "**She needs more than 40 marbles.**",  # a bound, not a value
        "**Half of the 40 marbles are red.**",
        "**About 40 marbles are left.**",
        "**She can take up to 40 marbles.**",
    ],
)
def test_words_before_a_number_that_change_it_still_keep_it_from_being_the_answer(content: str) -> None:
    assert math(content, "40").correct is not True


# --- what holds the answer: a JSON reply's field, a heading ----------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "Step 4: x = 19.50 / 0.75 = 26.\n\nThe final answer is: \n"
        '```json\n{"reasoning": "0.75x = 19.50", "answer": "26"}\n```',
        'The final answer is:\n{\n    "reasoning": "0.75x = 19.50",\n    "answer": "26"\n}',
        '```json\n{"reasoning": "… thus the final answer is:\\n", "answer": "26"}\n```',
        # The corrected block decides: the field ranks with "Final answer:", above an earlier "The answer is".
        'So the answer is "$42".\n```json\n{"answer": "42"}\n```\nThat is wrong; recomputing: 19.50 / 0.75 = 26.\n'
        '```json\n{"reasoning": "19.50 / 0.75", "answer": "26"}\n```',
    ],
)
def test_a_json_replys_answer_field_decides_over_a_marker_that_only_opens_it(content: str) -> None:
    d = math(content, "26")
    assert d.correct is True, d.reason


def test_a_box_still_outranks_a_json_answer_field() -> None:
    d = math('{"reasoning": "r", "answer": "25"}\n\nOn reflection the total is $\\boxed{26}$.', "26")
    assert (d.correct, d.extracted_final_answer) == (True, "26")


@pytest.mark.parametrize(
    ("content", "correct"),
    [
        ("## Step 6: Write the final answer\nThe 6 students are chosen 5 at a time in 6 ways.\n\nAnswer: 6", True),
        ("## Step 3: Final Answer\n6", True),
        ("### The Final Answer\n\n6", True),
        ("Now I will state the final answer\n7\n\nAnswer: 6", True),  # a sentence that names it is no heading
    ],
)
def test_a_final_answer_heading_is_a_heading_only_when_it_is_one(content: str, correct: bool) -> None:
    assert math(content, "6").correct is correct


# --- numbers the way MATH's golds write them ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "gold"), [("10080", "10,\\!080"), ("\\$32,348", "\\$32,\\!348"), ("1000000", "1,\\!000,\\!000")]
)
def test_maths_thousands_grouping_is_grouping(answer: str, gold: str) -> None:
    assert math(f"So the total is $\\boxed{{{answer}}}$.", gold).correct is True


# --- a concluding sentence (rule M2f) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "content", "gold"),
    [
        (
            "What is the difference?",
            "Therefore, the difference between the square root of 64 and the cube root of 64 is 4.",
            "4",
        ),
        (
            "How many red roses does she pick?",
            "She picks 40 an hour.\n\nTherefore, she picks 160 red roses by 5 pm.",
            "160",
        ),
        ("How much does he need to pay for them?", "So Kylar needs to pay $64 for the 16 glasses.", "64"),
        (
            "How many pages are left?",
            "In total the number of pages left after 3 days of 20 pages a day is 140.",
            "140",
        ),
    ],
)
def test_a_concluding_sentence_states_the_value_it_concludes_with(question: str, content: str, gold: str) -> None:
    d = math(content, gold, question)
    assert d.correct is True, d.reason


@pytest.mark.parametrize(
    ("question", "content"),
    [
        ("How many red roses does she pick?", "Therefore, she picks 160 red roses and 40 red roses more by 5 pm."),
        ("How many red roses does she pick?", "Therefore, she picks either 160 red roses or 150 by 5 pm."),
        ("What is x?", "Therefore x is 3 or 4."),
        ("How many cats are there?", "So the number of cats is 8, while the number of dogs is 5."),  # two clauses
        (
            "Mary sells 12 cupcakes. How many cupcakes are left?",
            "Therefore, after selling 12 cupcakes, she has 18 left.",
        ),
        ("How many more apples than oranges?", "So she has 12 apples and 7 oranges, which is 5 oranges fewer."),
        ("How much does she pay?", "So she pays $64 for 16 glasses and $12 for the frame."),
        ("How many apples?", "She had 12 apples and gave away 4."),  # no conclusion: the sentence says which nowhere
    ],
)
def test_a_concluding_sentence_that_does_not_say_which_number_states_none(question: str, content: str) -> None:
    d = math(content, "160", question)
    assert d.correct is not True and d.extracted_final_answer is None, d.reason


# --- boxes of a list ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "content"),
    [
        ("Find all real x with x^2 - 3x + 2 = 0.", "Factor: (x-1)(x-2) = 0, so x = \\boxed{1} and x = \\boxed{2}."),
        ("Find all real x with x^2 - 3x + 2 = 0.", "So x = \\boxed{1} or x = \\boxed{2}."),
        (
            "Enter all the solutions, separated by commas.",
            "The solutions are:\n\\[ x = \\boxed{1} \\]\n\\[ x = \\boxed{2} \\]",
        ),
        ("What are all possible values of x?", "- $\\boxed{1}$\n- $\\boxed{2}$"),
    ],
)
def test_boxes_of_the_list_a_question_asks_for_are_one_answer(question: str, content: str) -> None:
    d = math(content, "1, 2", question)
    assert d.correct is True, d.reason


@pytest.mark.parametrize(
    "content",
    [
        "x = \\boxed{1} or x = \\boxed{2}",  # two answers offered for one value
        "My first guess was \\boxed{1}.\n\nChecking again, the answer is \\boxed{2}.",  # a correction: policy last
    ],
)
def test_two_boxes_for_one_value_are_not_a_list(content: str) -> None:
    d = math(content, "1, 2", "What is x?")
    assert d.correct is not True


# --- MCQ: several letters declared right, many different answers --------------------------------------------------

TEN = [f"option {c}" for c in "ABCDEFGHIJ"]


@pytest.mark.parametrize(
    "content",
    [
        "Option (G) is correct: it fits.\nOption (I) is correct: it fits too.\n"
        "Therefore, the correct answers are (G) and (I).",
        "The correct options are G and I.",
        "Both (G) and (I) are correct.",
        "Options G and I are both correct, since each satisfies the condition.",
        "The right answers: G, I",
    ],
)
def test_several_letters_declared_right_at_once_are_never_credited(content: str) -> None:
    d = mcq(content, options=TEN, answer="I")
    assert (d.correct, d.extracted_final_answer, d.ambiguity) == (False, None, "ambiguous_final_answer"), d.reason


@pytest.mark.parametrize(
    ("content", "letter"),
    [
        ("Both (G) and (I) look correct at first, but only one can be: the answer is (I).", "I"),
        ("Options A and B are incorrect, so the answer is (I).", "I"),
        ("A and B are correct statements, so the answer is (I).", "I"),  # no "both", no "options": no claim
        ("The correct answer is (I), and (G) is incorrect.", "I"),
    ],
)
def test_one_answer_after_naming_others_keeps_its_reading(content: str, letter: str) -> None:
    d = mcq(content, options=TEN, answer=letter)
    assert d.extracted_final_answer == letter, d.reason


def test_an_answer_per_exemplar_is_none_a_change_of_mind_follows_the_policy() -> None:
    # A few-shot model solving the exemplars again: a block each, a letter each, four statements naming three letters.
    demos = (
        "(0) Alice has the ball. So the answer is (A).\n(0) Bob has the hat. So the answer is (B).\n"
        "(0) Claire has the cup. So the answer is (B).\n(0) Dave has the pen. So the answer is (C)."
    )
    looping = mcq(demos, options=TEN, answer="C")
    assert (looping.rule, looping.correct, looping.extracted_final_answer) == ("conflict_many", False, None)
    # A model correcting itself names its letters fewer times: policy last takes its last word, strict none.
    for changed_mind in (
        "So the answer is (A).\nWait, that misreads the table. So the answer is (C).",
        "The answer is (A).\n\nWait, let me reconsider. The answer is (B).\n\nHmm, no: the nucleus. The answer is (C).",
    ):
        last = mcq(changed_mind, options=TEN, answer="C")
        assert (last.rule, last.correct) == ("conflict_last", True)
        assert mcq(changed_mind, options=TEN, answer="C", conflict_policy="strict").correct is False


# --- MCQ: where the letter stands ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{\n    "reasoning": "Narcolepsy fits; perhaps B, but no.",\n    "answer": "D"\n}\n```',
        '{"reasoning": "r", "answer": "D. option D"}',
        "【解析】由题意可得……\n【答案】 D <eoa>",
        "【答案】：D",
        "Answer: D </s>",
        "The answer is (D)<|im_end|>",
    ],
)
def test_the_letter_in_a_json_field_a_chinese_label_or_before_a_special_token_is_read(content: str) -> None:
    d = mcq(content, options=["a", "b", "c", "option D"], answer="D")
    assert (d.extracted_final_answer, d.hedged) == ("D", False), d.reason


@pytest.mark.parametrize("content", ["Answer: A < B holds, so none.", 'The word "answer": a reply.'])
def test_a_less_than_and_a_quoted_word_are_no_letters(content: str) -> None:
    assert mcq(content, options=["a", "b", "c", "d"], answer="A").extracted_final_answer is None


def test_the_default_policy_is_what_these_tests_assume() -> None:
    assert Policy().conflict_policy == "last"


# --- the review's probes (tests/data/review_40_probes.jsonl): 226 outputs written to break these rules ------------

PROBES = [json.loads(line) for line in (Path(__file__).parent / "data" / "review_40_probes.jsonl").open()]


def _probe_decision(probe: dict[str, Any]) -> bool:
    sample = Sample(task_id="p", content=probe["content"], finish_reason="stop")
    task: MathTask | McqTask
    if probe["kind"] == "math":
        task = MathTask(id="p", question=probe["question"] or "q", answer=probe["gold"])
    else:
        task = McqTask(id="p", question=probe["question"] or "q", options=probe["options"], answer=probe["gold"])
    return decide(task, sample).correct is True


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p["id"])
def test_each_review_probe_is_read_as_the_reviewer_reads_it_or_is_a_known_miss(probe: dict[str, Any]) -> None:
    """The reviewer wrote each probe to break a 1.10.0 rule and read it first. 1.10.0 reads every probe the way the
    reviewer does, except those marked `still_misread` (docs/scoring/math.md and mcq.md name their shapes); a miss
    that is fixed fails here too, so that its mark comes off."""
    agrees = _probe_decision(probe) == probe["expected_correct"]
    assert agrees != probe["still_misread"], probe["note"]

"""Scorer 1.9 (issue 28, section 1): the shapes real reasoning models give their final math answer in prose. Each
rule is pinned by examples written here in the issue's shapes, by variants, and by near-misses that must keep
their reading (no false credit). Every text was written for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.math.arithmetic import evaluate, rounds_to
from ocllm.scoring.math.decide import decide_math
from ocllm.scoring.math.decision import MathDecision
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.normalise import assignment_value, normalise


def decide(content: str, gold: str, *, question: str = "q", finish_reason: str = "stop") -> MathDecision:
    task = MathTask(id="p1", question=question, answer=gold)
    sample = Sample(task_id="p1", content=content, finish_reason=finish_reason)
    decision = decide_math(task, sample, Policy())
    for c in decision.candidates:
        assert content[c.start : c.end] == c.text
    return decision


# ---- 1. a result in bold, or at the end of working, on the last line (M2e) ------------------------------------


@pytest.mark.parametrize(
    ("content", "gold", "reading"),
    [
        ("Counting the three shelves: 14 + 23 + 31 = **68** books.", "68", "chain_result"),
        ("She spends $4 + $16 + $9 = **$29** in all.", "29", "chain_result"),
        ("So the pool holds **350 litres** (roughly 92 gallons) once it is full.", "350", "bold_result"),
        ("\\(36 + 148 = 184\\) stickers.", "184", "chain_result"),
        ("Work:\n7 × 12 = 84\nSo together they pick 84 + 16 = 100 apples.", "100", "chain_result"),
        ("Total = 20 + 15 = 35 minutes", "35", "chain_result"),
        ("Each costs 100/3 = 33.33 dollars.", "33.33", "chain_result"),
        ("The farmer keeps **12** cows and sells **12** of the calves' worth.", "12", "bold_result"),
        ("She now has 9 * $2 = $<<9*2=18>>18 left for the week.", "18", "chain_result"),  # GSM8K's calculator
        ("The answer follows.\n\\[\nr = \\frac{12}{35}\\,.\n\\]", "\\frac{12}{35}", "chain_result"),
        ("So \\(\\frac{5}{8}=0.625\\).", "\\frac{5}{8}", "chain_result"),
    ],
)
def test_a_result_on_the_last_line_is_a_weak_named_statement(content: str, gold: str, reading: str) -> None:
    d = decide(content, gold)
    assert (d.correct, d.extraction_method, d.rule) == (True, "result_line", "final_statement"), d.reason
    assert reading in d.candidates[d.decided_by or 0].reading


@pytest.mark.parametrize(
    "content",
    [
        "Counting the shelves: 14 + 23 + 31 = 69 books.",  # the working does not add up: no answer
        "He has **5** red and **7** blue marbles.",  # two bold values: which one is the answer is not said
        "**Step 3:** multiply the 4 rows by 17 seats.",  # a bold label is no value
        "Is it 14 + 23 + 31 = **68**?",  # a question states nothing
        "It cannot be 2 + 3 = **5**.",  # a denial states nothing
        "So 2x = 10 and the rest follows.",  # an equation, not working
        "Then \\(x + 1 = 68\\).",  # an equation in math
        "The roots are $x = 2$ or $x = 68$.",  # two assignments: which is the result is not said
        "The total is 30 + 38 = 68 dollars, and she keeps 8.",  # a second value after the result
        "\\(30 + 38 = 68\\) tiles, 12 of them broken.",
    ],
)
def test_a_last_line_that_states_no_result_gives_none(content: str) -> None:
    d = decide(content, "68")
    assert d.extraction_method != "result_line" and d.correct is not True, d.reason


def test_a_stronger_statement_decides_before_the_result_line() -> None:
    d = decide("The answer is 60.\nIn all 20 + 20 = **40** were left over.", "40")
    assert (d.extraction_method, d.extracted_final_answer, d.correct) == ("answer_is", "60", False)


def test_a_result_line_cut_at_the_length_limit_is_not_read() -> None:
    d = decide("So far 14 + 23 + 31 = 68", "68", finish_reason="length")
    assert d.correct is False and "cut_off" in d.candidates[0].reading


# ---- 2. unit phrases against changes of value (M4) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("**Answer:** Every van carries **36 children** on each trip", "36"),
        ("\\boxed{12\\text{ cups of flour}}", "12"),
        ("The answer is 45 square feet.", "45"),
        ("The answer is 8 cubic metres.", "8"),
        ("The answer is 6 jars of jam in the second week.", "6"),
        ("The answer is $120 each week.", "120"),
        ("The answer is 14 marbles left.", "14"),
        ("Final answer: 75\u202f% of the pupils enrolled in hip\u2011hop", "75"),
        ("The answer is 9 apples, not 11 apples.", "9"),
    ],
)
def test_a_unit_phrase_after_the_number_is_the_unit(content: str, gold: str) -> None:
    d = decide(content, gold)
    assert d.correct is True, d.reason


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{5 million}", "5"),
        ("The answer is half of 10.", "10"),
        ("The answer is 3 squared.", "3"),
        ("The answer is 5 square.", "5"),
        ("The answer is 5 square roots of two.", "5"),
        ("The answer is 5 or more apples.", "5"),
        ("The answer is 4 times as many.", "4"),
        ("The answer is 7 dozens.", "7"),  # the question does not count dozens: 7 dozens may be 84
        ("The answer is not 5.", "5"),
        ("The answer is 5 apples at most.", "5"),
    ],
)
def test_a_change_of_value_is_never_a_unit(content: str, gold: str) -> None:
    assert decide(content, gold).correct is False


def test_dozens_are_a_unit_when_the_question_counts_dozens() -> None:
    question = "How many dozen eggs does she buy?"
    assert decide("The answer is 7 dozens.", "7", question=question).correct is True
    assert decide("The answer is 7 dozen.", "84", question=question).correct is False
    assert decide("The answer is 5 dozen eggs.", "5", question=question).correct is False  # may count the eggs


# ---- 3. left-hand sides (M3) -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("\\boxed{(p,q,r)=(3,-1,8)}", "(3,-1,8)"),
        ("\\boxed{\\mathbf{v}=\\begin{pmatrix}2\\\\-5\\end{pmatrix}}", "\\begin{pmatrix}2\\\\-5\\end{pmatrix}"),
        ("\\boxed{AB\\cdot AC = st = 96}", "96"),
        ("\\boxed{y=1,\\;3,\\;9}", "1, 3, 9"),
        ("So, the answer is 12 * 12 = 144.", "144"),
        ("The answer is 7 + 8 = 15.", "15"),
        ("\\boxed{3\\;(\\text{all-red or all-blue})\\;+\\;500 = 503}", "503"),
        ("\\boxed{AB = 13}", "13"),
    ],
)
def test_left_sides_that_name_something_else_than_one_symbol(content: str, gold: str) -> None:
    d = decide(content, gold)
    assert d.correct is True, d.reason


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("So, the answer is 12 * 12 = 145.", "145"),  # working whose sides disagree states no answer
        ("\\boxed{2x = 5}", "5"),
        ("\\boxed{x + 1 = 5}", "5"),
        ("\\boxed{x = 5, y = 3}", "5"),
        ("\\boxed{(a,b)=(2,7,-4)}", "(2,7,-4)"),  # two names, three values
        ("\\boxed{y = 2x + 3}", "3"),
        ("\\boxed{x = 2 \\text{ or } x = 3}", "3"),  # two solutions, not a chain
    ],
)
def test_equations_and_disagreeing_working_are_no_answer(content: str, gold: str) -> None:
    assert decide(content, gold).correct is False


def test_assignment_values_by_hand() -> None:
    assert assignment_value("10 * 10 = 100") == "100"
    assert assignment_value("10 * 10 = 110") is None
    assert assignment_value("x = 2, 4, 6") == "2, 4, 6"
    assert assignment_value("x = 2, y = 4") is None
    assert assignment_value("(a,b,c)=(2,7,-4)") == "(2,7,-4)"
    assert assignment_value("x \\le 5") is None
    assert assignment_value("PQ\\cdot PR = mn = 312") == "312"
    assert assignment_value("PQ\\cdot PR = 13 \\cdot 24 = 311") is None  # a side of numbers disagrees


def test_arithmetic_is_read_exactly_or_not_at_all() -> None:
    assert evaluate("$12 + $30 + $8") == 50
    assert evaluate("2 bolts of wool + 1 bolt of silk") == 3
    assert evaluate("\\frac{3}{8}") == evaluate("0.375")
    assert evaluate("2 x + 1") is None and evaluate("2 million + 3") is None and evaluate("9^{9^{9}}") is None
    assert rounds_to(evaluate("100/3"), "33.33") and not rounds_to(evaluate("100/3"), "33.4")


# ---- 4. typography ----------------------------------------------------------------------------------------------


def test_typography_in_the_words_around_the_answer_is_read_plainly() -> None:
    assert normalise("12\u00a0apples")[0] == "12"
    d = decide("Final\u00a0answer: 40\u202f% of the well\u2011known ones", "40")
    assert d.correct is True, d.reason
    assert normalise("9\u202f901")[0] == "9901"  # a narrow space between digits still groups thousands


# ---- markers as real outputs write them ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "gold"),
    [
        ("Thus she earns $26 a day. #### 26", "26"),
        ("= 260.#### 260", "260"),
        ("### Final Answer:\n#### 44", "44"),
        ("### Final Answer:\n\n#### <48>", "48"),
        ('```json\n{"reasoning": "2 + 3 = 5", "answer": "5"}\n```', "5"),
        ('{"reasoning": "…", "answer": "\\\\frac{1}{2}"}', "\\frac{1}{2}"),
        ('… so the answer is k = -5.",\n "answer": "-5"', "-5"),
    ],
)
def test_markers_where_real_outputs_put_them(content: str, gold: str) -> None:
    d = decide(content, gold)
    assert d.correct is True, d.reason


def test_a_format_template_is_no_answer() -> None:
    d = decide('Reply as {"reasoning": "...", "answer": "___"}', "7")
    assert d.extracted_final_answer is None


# ---- the review's probes (tests/data/review_28_probes.jsonl): 182 outputs written to break these rules ------------

PROBES = [json.loads(line) for line in (Path(__file__).parent / "data" / "review_28_probes.jsonl").open()]
# Wrong answers the scorer still credits, each a documented limit (docs/scoring/math.md, "What is still missed"): the
# name on the left is never compared with what was asked; a paragraph opening "Wait, I need to …" with no phrase
# that takes the answer back; a phrase that takes it back more than 80 characters after it.
KNOWN_FALSE_CREDITS = {"eq_x_not_asked", "hashes_then_wait_correction", "taken_back_that_is_wrong_far"}


@pytest.mark.parametrize("probe", [p for p in PROBES if not p["human_correct"]], ids=lambda p: p["id"])
def test_no_probe_a_careful_reader_fails_is_credited(probe: dict[str, object]) -> None:
    d = decide(str(probe["content"]), str(probe["gold"]), question=str(probe["question"] or "q"),
               finish_reason=str(probe["finish_reason"] or "stop"))  # fmt: skip
    if probe["id"] in KNOWN_FALSE_CREDITS:
        assert d.correct is True, "a known false credit is fixed: take it off the list and out of the docs"
    else:
        assert d.correct is False, (probe["note"], d.extracted_final_answer, d.reason)


def test_every_probe_is_decided_without_an_error() -> None:
    # "25 m²": a superscript digit is a digit to str.isdigit, and once crashed the screen.
    for probe in PROBES:
        d = decide(str(probe["content"]), str(probe["gold"]), finish_reason=str(probe["finish_reason"] or "stop"))
        assert d.rule, probe["id"]
    assert decide("The answer is 25 cm².", "25").correct is True

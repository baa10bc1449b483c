"""Properties of the scorer that must hold for any text, checked with hypothesis."""

from __future__ import annotations

import pytest
from conftest import mcq
from hypothesis import given, settings
from hypothesis import strategies as st

from ocllm.models import Policy, Sample
from ocllm.scoring import decide
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.statements import MARKERS, marker_matches

PIECES = st.sampled_from(
    [
        "FINAL: ",
        "Final answer: ",
        "The answer is ",
        "answer: ",
        "\\boxed{",
        "}",
        "<think>",
        "</think>",
        "A",
        "B",
        "C",
        "D",
        "E",
        "b",
        " or ",
        ", ",
        " and ",
        "**",
        "(",
        ")",
        "\n",
        " because ",
        "I don't",
        "The correct answer is option ",
        "most likely answer is ",
        "the most accurate option is ",
        "closest match: ",
        "false statement is ",
        "best",
        "most ",
        "Right",
        "untrue ",
        "~",
        "\\ ",
        "the answer would be ",
        "x = 5",
        "İ",
        "\\(",
        "\\)",
        "$",
        ".",
        " ",
    ]
)
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=25).map("".join)
TASK = McqTask(id="p", options=["1", "2", "3", "4"], answer="B")


@pytest.mark.slow  # many generated examples
@given(TEXT)
@settings(max_examples=400)
def test_keyword_scan_finds_exactly_what_the_regex_scan_finds(text: str) -> None:
    fast = [(m.start(), m.end(), m.lastgroup) for m in marker_matches(text)]
    slow = [(m.start(), m.end(), m.lastgroup) for m in MARKERS.finditer(text)]
    assert fast == slow


@given(TEXT, st.one_of(st.none(), TEXT), st.booleans(), st.booleans())
@settings(max_examples=400)
def test_decide_is_total_and_spans_point_into_raw_text(
    content: str, reasoning: str | None, fb: bool, pre: bool
) -> None:
    policy = Policy(allow_reasoning_fallback=fb, think_prefilled=pre)
    d = decide(TASK, Sample(task_id="p", content=content, reasoning=reasoning), policy)
    assert d.correct in (True, False)
    assert (d.extracted_final_answer is None) or d.extracted_final_answer in "ABCD"
    if d.correct:
        assert d.extracted_final_answer == "B"
    for c in d.candidates:
        raw = content if c.field == "content" else reasoning
        assert raw is not None and raw[c.start : c.end] == c.text


@given(TEXT, TEXT)
@settings(max_examples=400)
def test_reasoning_never_changes_a_visible_decision(content: str, reasoning: str) -> None:
    without = decide(TASK, Sample(task_id="p", content=content), Policy(allow_reasoning_fallback=True))
    with_reasoning = decide(
        TASK, Sample(task_id="p", content=content, reasoning=reasoning), Policy(allow_reasoning_fallback=True)
    )
    if without.extraction_source == "content":
        keys = ("extracted_final_answer", "ambiguity", "correct", "extraction_method", "rule")
        assert [getattr(without, k) for k in keys] == [getattr(with_reasoning, k) for k in keys]


@given(TEXT)
def test_deterministic(content: str) -> None:
    sample = Sample(task_id="p", content=content)
    assert decide(TASK, sample) == decide(TASK, sample)


# Every word a marker can begin with, in a statement that begins with it. The scorer finds markers by
# looking for these words first: a word missing from its list would make the statement start later (or
# vanish), which these examples catch, in every language and hedge form (issue 10, item 7).
MARKER_STARTS = [
    "FINAL: C", "Final answer: C", "Answer: C", "\\boxed{C}", "Correct option: C", "Best answer: C",
    "Right answer: C", "True answer: C", "Likely answer: C", "Probable answer: C", "Most likely answer: C",
    "Most accurate option: C", "Closest option: C", "False statement: C", "Incorrect statement: C",
    "Untrue statement: C", "答案是 C", "Respuesta: C", "Réponse: C", "Antwort: C", "Resposta: C", "Risposta: C",
]  # fmt: skip


@pytest.mark.parametrize("statement", MARKER_STARTS)
def test_every_marker_word_starts_its_statement(statement: str) -> None:
    d = mcq(f"{statement}\n", answer="C")
    assert d.candidates, statement
    first = d.candidates[0]
    assert (first.start, first.letter) == (0, "C"), (statement, first)

"""An MCQ decision is a named chain of reading steps (issue 42, item 7; docs/scoring/mcq.md, "Reading steps"): each
decision lists the steps that marked its statements, in the order they ran, and a step never adds or removes a
statement. The verdicts are those of before (tests/test_seam_identity.py, the pinned corpus)."""

from __future__ import annotations

from conftest import mcq

from ocllm.scoring.mcq.decide import STEPS
from ocllm.scoring.mcq.decision import McqDecision


def _steps(content: str, **kw: object) -> list[str]:
    decision = mcq(content, **kw)
    assert isinstance(decision, McqDecision)
    return decision.reading_steps


def test_a_clean_answer_takes_no_step() -> None:
    assert _steps("FINAL: D") == []


def test_a_statement_taken_back_is_marked_by_the_withdrawn_step() -> None:
    decision = mcq("The answer is (A), but that is not the correct answer. FINAL: D")
    assert isinstance(decision, McqDecision) and decision.extracted_final_answer == "D"
    assert decision.reading_steps == ["withdrawn"]
    assert any("withdrawn" in c.reading for c in decision.candidates)


def test_a_value_then_its_letter_is_marked_by_the_values_before_letters_step() -> None:
    options = ["490", "491", "492", "493"]
    decision = mcq("The answer is 492.5, which corresponds to option C.", options=options, answer="C")
    assert isinstance(decision, McqDecision) and decision.extracted_final_answer == "C"
    assert "values_before_letters" in decision.reading_steps


def test_the_steps_are_listed_in_the_order_they_run() -> None:
    names = [step.name for step in STEPS]
    assert len(set(names)) == len(names)
    content = "The answer is (A), but that is not the correct answer. The answer is 492.5, so option C. FINAL: C"
    found = _steps(content, options=["490", "491", "492", "493"], answer="C")
    assert found == sorted(found, key=names.index) and "withdrawn" in found

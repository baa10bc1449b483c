"""The regression tests the original bug report asked for, on the project's own data."""

from conftest import mcq


def test_final_d_is_correct_despite_format_examples_in_reasoning() -> None:
    d = mcq("FINAL: D", "The answer must be like FINAL: A or FINAL: B. The correct answer is D.", answer="D")
    assert d.correct is True
    assert d.extracted_final_answer == "D"
    assert d.extraction_source == "content"
    assert d.extraction_method == "final_colon_letter"
    assert d.ambiguity == "none"
    assert d.reasoning_statements == 3


def test_final_b_is_correct_despite_other_finals_in_reasoning() -> None:
    d = mcq("FINAL: B", "Maybe FINAL: A? No. Could be FINAL: C. Let me check again.", answer="B")
    assert d.correct is True
    assert d.ambiguity == "none"


def test_conflicting_visible_finals_under_policy_last() -> None:
    d = mcq("FINAL: B\n\nWait, let me redo this.\n\nFINAL: C", answer="B")
    assert d.ambiguity == "conflicting_final_answers"
    assert d.extracted_final_answer == "C"
    assert d.correct is False
    assert d.rule == "conflict_last"


def test_conflicting_visible_finals_under_policy_last_can_be_correct() -> None:
    d = mcq("FINAL: C\n\nOn reflection:\n\nFINAL: B", answer="B")
    assert (d.extracted_final_answer, d.correct, d.ambiguity) == ("B", True, "conflicting_final_answers")


def test_conflicting_visible_finals_under_policy_strict() -> None:
    for content in ("FINAL: B\nFINAL: C", "FINAL: C\nFINAL: B"):
        d = mcq(content, answer="B", conflict_policy="strict")
        assert d.ambiguity == "conflicting_final_answers"
        assert d.correct is False
        assert d.extracted_final_answer is None
        assert d.rule == "conflict_strict"

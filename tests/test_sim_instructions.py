"""The simulator's answers to instructions tasks (issue 22): an answer drawn as right follows its instruction and
one drawn as wrong breaks it, for every one of IFEval's 25 kinds, as this project's checks read them."""

from __future__ import annotations

import random

import pytest

from ocllm.models import Sample
from ocllm.scoring import decide
from ocllm.scoring.instructions.checks import CHECKS
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.scoring.instructions.simulated import instructions_answer

# One instruction of each kind, with arguments as IFEval's input_data.jsonl gives them.
KINDS: dict[str, dict[str, object]] = {
    "keywords:existence": {"keywords": ["lantern", "harbor"]},
    "keywords:frequency": {"keyword": "harbor", "frequency": 3, "relation": "at least"},
    "keywords:forbidden_words": {"forbidden_words": ["very", "really"]},
    "keywords:letter_frequency": {"letter": "q", "let_frequency": 4, "let_relation": "at least"},
    "language:response_language": {"language": "de"},
    "length_constraints:number_sentences": {"num_sentences": 5, "relation": "less than"},
    "length_constraints:number_paragraphs": {"num_paragraphs": 3},
    "length_constraints:number_words": {"num_words": 120, "relation": "at least"},
    "length_constraints:nth_paragraph_first_word": {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "harbor"},
    "detectable_content:number_placeholders": {"num_placeholders": 2},
    "detectable_content:postscript": {"postscript_marker": "P.S."},
    "detectable_format:number_bullet_lists": {"num_bullets": 3},
    "detectable_format:constrained_response": {},
    "detectable_format:number_highlighted_sections": {"num_highlights": 2},
    "detectable_format:multiple_sections": {"section_spliter": "Section", "num_sections": 3},
    "detectable_format:json_format": {},
    "detectable_format:title": {},
    "combination:two_responses": {},
    "combination:repeat_prompt": {"prompt_to_repeat": "Write a short note about a harbor."},
    "startend:end_checker": {"end_phrase": "Is there anything else I can help with?"},
    "startend:quotation": {},
    "change_case:capital_word_frequency": {"capital_frequency": 3, "capital_relation": "at least"},
    "change_case:english_capital": {},
    "change_case:english_lowercase": {},
    "punctuation:no_comma": {},
}


def test_every_kind_of_ifeval_is_here() -> None:
    assert set(KINDS) == set(CHECKS) and len(KINDS) == 25


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("correct", [True, False])
def test_a_drawn_answer_follows_or_breaks_its_instruction(kind: str, correct: bool) -> None:
    if kind not in CHECKS:
        pytest.fail(f"{kind} has no check registered")
    task = InstructionsTask(
        id="t", question="Write a short note about a harbor.", category="c",
        instructions=[{"id": kind, "kwargs": KINDS[kind]}],
    )  # fmt: skip
    for seed in range(5):
        content, reasoning = instructions_answer(random.Random(seed), task, correct=correct, reasoning=True)
        d = decide(task, Sample(task_id="t", content=content, reasoning=reasoning))
        assert d.correct is correct, (kind, seed, content, d.verdicts[0].measured)


def test_every_demo_formats_task_is_answered_right_when_drawn_right_and_wrong_when_not() -> None:
    # The shipped demo-formats suite (instructions, several at once, and json tasks with schemas): what `make demo`
    # shows must be what the scorer finds.
    from ocllm.scoring.json_answer.simulated import json_answer
    from ocllm.suites import load_suite

    for task in load_suite("demo-formats").tasks:
        draw = json_answer if task.type == "json" else instructions_answer
        for seed in range(6):
            for correct in (True, False):
                content, reasoning = draw(random.Random(seed), task, correct=correct, reasoning=seed % 2 == 0)
                d = decide(task, Sample(task_id=task.id, content=content, reasoning=reasoning))
                assert d.correct is correct, (task.id, seed, correct, content, d.reason)

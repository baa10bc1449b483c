"""The hand-labelled corpus of realistic model outputs (tests/data/mcq_corpus.jsonl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring import decide
from ocllm.scoring.mcq.fields import McqTask

CORPUS = [json.loads(line) for line in (Path(__file__).parent / "data" / "mcq_corpus.jsonl").open()]


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_corpus_case(case: dict) -> None:
    letters = [chr(ord("A") + i) for i in range(len(case["options"]))]
    gold = case["expected_letter"] or letters[0]
    task = McqTask(id=case["id"], options=case["options"], answer=gold, prompt=case["prompt"])
    sample = Sample(
        task_id=case["id"], content=case["content"], reasoning=case["reasoning"], finish_reason=case["finish_reason"]
    )
    d = decide(task, sample, Policy(think_prefilled=case["think_prefilled"]))
    got = (d.extracted_final_answer, d.ambiguity)
    assert got == (case["expected_letter"], case["expected_ambiguity"]), f"{d.rule}: {d.reason}"
    if case.get("expected_method"):
        assert d.extraction_method == case["expected_method"]
    if "expected_truncated" in case:
        assert d.truncated == case["expected_truncated"]

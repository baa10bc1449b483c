"""Instructions tasks (issue 22): the room's rules I1-I5 (visible answer only, empty answers, IFEval's loose
variants, truncation, unknown ids refused), on answers written here. Each instruction kind's own checks are
tested in tests/test_instruction_checks.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import assert_instructions_refused

from ocllm.cli import main
from ocllm.models import Sample, Task
from ocllm.scoring import decide
from ocllm.scoring.instructions.decide import loose_variants
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.suites import load_suite

NO_COMMA = {"id": "punctuation:no_comma", "kwargs": {}}


def task(*instructions: dict) -> Task:
    return InstructionsTask(id="t", question="Write.", instructions=list(instructions), category="c")


def test_only_the_visible_answer_is_checked() -> None:
    # I1: a comma inside <think> or in the reasoning field is not the answer's.
    d = decide(task(NO_COMMA), Sample(task_id="t", content="<think>first, second</think>Leaves fall", reasoning="a, b"))
    assert d.correct is True and d.correct_loose is True and d.instructions_followed == [True]
    assert d.verdicts[0].measured == "no comma" and d.answer_characters == len("Leaves fall")


def test_an_empty_answer_follows_nothing_and_says_so() -> None:
    # I2: all reasoning, no visible text: every instruction is not followed, with its own ambiguity class.
    d = decide(task(NO_COMMA, NO_COMMA), Sample(task_id="t", content="<think>thinking</think>  ", reasoning="x"))
    assert d.correct is False and d.correct_loose is False and d.rule == "empty_answer"
    assert d.ambiguity == "empty_answer" and d.instructions_followed == [False, False]
    assert all(v.measured == "empty answer: nothing to check" for v in d.verdicts)
    assert "the visible answer is empty" in d.reason and "reasoning is not checked" in d.reason


def test_the_loose_variants_are_ifeval_s_eight_in_its_order() -> None:
    variants = dict(loose_variants("Sure!\n**Body**, text\nEnd."))
    assert list(variants) == [
        "as_is", "as_is_no_asterisks", "no_first_line", "no_last_line", "no_first_and_last_line",
        "no_first_line_no_asterisks", "no_last_line_no_asterisks", "no_first_and_last_line_no_asterisks",
    ]  # fmt: skip
    assert variants["no_first_line"] == "**Body**, text\nEnd."
    assert variants["no_last_line"] == "Sure!\n**Body**, text"
    assert variants["no_first_and_last_line"] == "**Body**, text"
    assert variants["no_first_and_last_line_no_asterisks"] == "Body, text"


def test_a_loose_pass_names_the_variant_and_what_it_measured() -> None:
    d = decide(task(NO_COMMA), Sample(task_id="t", content="Here it is, then:\nLeaves fall softly"))
    assert d.correct is False and d.correct_loose is True
    verdict = d.verdicts[0]
    assert verdict.followed is False and verdict.measured == "1 comma(s), the first at 10"
    assert verdict.loose_variant == "no_first_line" and verdict.loose_measured == "no comma"


def test_a_truncated_answer_is_checked_as_it_stands_and_flagged() -> None:
    d = decide(task(NO_COMMA), Sample(task_id="t", content="Leaves fall", finish_reason="length"))
    assert d.correct is True and d.truncated is True and "checked as it stands" in d.reason


def suite_line(tmp_path: Path, instructions: object) -> Path:
    path = tmp_path / "suite.jsonl"
    line = {"id": "t", "type": "instructions", "question": "Write.", "category": "c", "instructions": instructions}
    path.write_text(json.dumps(line) + "\n")
    return path


@pytest.mark.parametrize(
    ("instructions", "said"),
    [
        ([{"id": "detectable_format:made_up", "kwargs": {}}], "unknown instruction id 'detectable_format:made_up'"),
        ([], "needs a non-empty list"),
        ([{"kwargs": {}}], "is not an object with an \"id\""),
        ([{"id": "punctuation:no_comma", "kwargs": {"num_words": 3}}], "takes no argument 'num_words'"),
        ([{"id": "punctuation:no_comma", "kwargs": []}], "kwargs is not an object"),
    ],
)
def test_a_suite_with_an_instruction_that_cannot_be_checked_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], instructions: object, said: str
) -> None:
    # I5: refused when the suite is read, never passed.
    assert_instructions_refused(tmp_path, capsys, instructions, said)


def test_null_arguments_are_absent_as_in_hugging_face_s_copy_of_ifeval(tmp_path: Path) -> None:
    path = suite_line(tmp_path, [{"id": "punctuation:no_comma", "kwargs": {"num_words": None, "relation": None}}])
    assert load_suite(str(path)).tasks[0].instructions == [{"id": "punctuation:no_comma", "kwargs": {}}]


def test_the_summary_has_ifeval_s_four_figures_and_the_report_draws_them(tmp_path: Path) -> None:
    rows = [("i1", "Leaves fall softly"), ("i2", "Sure, here:\nLeaves fall softly"), ("i3", "<think>hm</think>")]
    records = [
        {"task_id": tid, "task_type": "instructions", "category": "ifeval", "instructions": [NO_COMMA],
         "raw_content": content, "finish_reason": "stop"}
        for tid, content in rows
    ]  # fmt: skip
    source = tmp_path / "m.json"
    source.write_text(json.dumps({"lane": "L", "tasks": records}))
    out = tmp_path / "out.json"
    assert main(["rescore", str(source), "-o", str(out)]) == 0
    details = json.loads(out.read_text())["summary"]["by_type"]["instructions"]["details"]
    # i1 follows strictly; i2 only once its first line is dropped; i3 is empty and follows nothing.
    assert details["prompt_level_strict"] == pytest.approx(1 / 3)
    assert details["prompt_level_loose"] == pytest.approx(2 / 3)
    assert details["instruction_level_strict"] == pytest.approx(1 / 3) and details["empty_answers"] == 1
    assert details["by_instruction"]["punctuation:no_comma"]["given"] == 3
    assert main(["report", str(source), "-o", str(tmp_path / "r")]) == 0
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert "prompt level: strict 33.3%, loose 66.7%" in markdown and "### Instructions by kind" in markdown
    assert "| punctuation:no_comma | 3 | 1 (33.3%) | 2 (66.7%) |" in markdown
    assert "not followed: 1 comma(s), the first at 4; loose: followed with no first line (no comma)" in markdown
    assert "Instructions by kind" in (tmp_path / "r" / "report.html").read_text()


# --- review of issue 22: hostile and degenerate answers, other copies of IFEval's data ---------------------------


def test_degenerate_answers_are_counted_right_in_one_pass() -> None:
    # A small model's runs of dots, a megabyte of one-line prose, numbers on one line: each read once (these took
    # minutes to hours when a run of marks was tried from each of its dots). The counts are the rules'.
    from ocllm.scoring.instructions.text import count_sentences

    assert count_sentences("Thinking" + "." * 200_000 + "done") == 1
    assert count_sentences("Word one. " * 100_000) == 100_000
    assert count_sentences("My answer is no. Cats are not dogs.") == 2  # IFEval's own fixed answer ends one
    assert count_sentences("See No. 5 for details. Then stop.") == 2  # "No." before a number does not
    sentences = {"id": "length_constraints:number_sentences", "kwargs": {"num_sentences": 2, "relation": "less than"}}
    d = decide(task(sentences), Sample(task_id="t", content="My answer is no. Cats are not dogs."))
    assert d.correct is False and d.verdicts[0].measured.startswith("sentences: 2")


def test_a_run_of_blank_lines_does_not_stall_the_bullet_count() -> None:
    bullets = {"id": "detectable_format:number_bullet_lists", "kwargs": {"num_bullets": 1}}
    d = decide(task(bullets), Sample(task_id="t", content="intro\n" + "\n" * 200_000 + "* x"))
    assert d.correct is True and d.verdicts[0].measured == "bullets: 1, needed exactly 1"


def test_arguments_as_other_copies_of_ifeval_write_them(tmp_path: Path) -> None:
    # lm-eval and IFEval drop empty arguments; a copy written through pandas has 3.0 for 3.
    highlights = {"id": "detectable_format:number_highlighted_sections", "kwargs": {"num_highlights": 3.0,
                                                                                  "keywords": [], "end_phrase": ""}}
    path = suite_line(tmp_path, [highlights])
    assert load_suite(str(path)).tasks[0].instructions == [
        {"id": "detectable_format:number_highlighted_sections", "kwargs": {"num_highlights": 3}}
    ]


def test_an_empty_answer_cut_at_max_tokens_says_so() -> None:
    cut = Sample(task_id="t", content="<think>long reasoning, never closed", finish_reason="length")
    d = decide(task(NO_COMMA), cut)
    assert d.rule == "empty_answer" and d.truncated is True and "cut at max_tokens" in d.reason


def test_placeholders_are_found_as_ifeval_s_pattern_finds_them_in_one_pass() -> None:
    import re

    from ocllm.scoring.instructions.checks.content import placeholders

    pattern = re.compile(r"\[.*?\]")  # IFEval's
    for text in ["[a] and [b]", "[[a]] [", "x [a\n] [b] [c", "[]", "[ [ [ ] ]", "no brackets"]:
        assert placeholders(text) == pattern.findall(text), text
    assert placeholders("[" * 200_000) == []  # quadratic for the pattern: read once here

"""The MCQ room's datasets for `ocllm import` (MMLU, MMLU-Pro, GPQA, ARC): a row as its publisher distributes it ->
an MCQ Task. The importers read the files (scoring/dataset_rows.py says the split).

A row that cannot be a task raises BadRow with what is wrong; the importers name the file and the row. Ids name
their source (`mmlu-pro/70`, `gpqa/recXXXX`, `arc/Mercury_1000`, `mmlu/anatomy/3`), so that suites imported from
different datasets can be concatenated and keep unique ids.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow, Dataset, Row, field, text
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_letters import MAX_OPTIONS, MIN_OPTIONS, option_letter


def _options(values: Any, name: str) -> list[str]:
    if not isinstance(values, list | tuple) or not values:
        raise BadRow(f"{name!r} is not a list of options" if not isinstance(values, list | tuple) else "no options")
    options = [str(v).strip() if v is not None else "" for v in values]
    if any(not o for o in options):
        raise BadRow(f"an empty option in {name!r}")
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise BadRow(f"{len(options)} options; an MCQ task has {MIN_OPTIONS} to {MAX_OPTIONS}")
    return options


def _gold(options: list[str], letter: str) -> str:
    letter = letter.strip().strip("()").upper()
    if len(letter) != 1 or not "A" <= letter <= option_letter(len(options) - 1):
        raise BadRow(f"gold answer {letter!r} is not among the {len(options)} options")
    return letter


def _index_letter(options: list[str], index: Any, name: str) -> str:
    if isinstance(index, bool) or not isinstance(index, int):
        if isinstance(index, str) and index.strip().isdigit():
            index = int(index)
        else:
            raise BadRow(f"{name!r} is not an option index")
    if not 0 <= index < len(options):
        raise BadRow(f"{name!r} {index} is not among the {len(options)} options")
    return option_letter(index)


# MMLU: the original per-subject CSVs (`<subject>_test.csv`, no header; the public copies' with one) or the
# Parquet of cais/mmlu. The CSVs' columns, which name a headerless file's fields (the importers' "mmlu_files"
# reader also adds each row's `subject` and `__split__`, from the file's name).
MMLU_COLUMNS = ("question", "A", "B", "C", "D", "answer")


def _mmlu_answer(row: Row, options: list[str]) -> str:
    """The gold letter of an MMLU CSV row: a letter A-D, or an index 0-3 as cais/mmlu writes it. A larger
    digit means the file counts its answers from 1, and "1" would then be read as B: the file is refused
    as a whole (an InputError, which --skip-bad does not skip), never read one letter off."""
    answer = text(row, "answer")
    if not answer.isdigit():
        return _gold(options, answer)
    if int(answer) < len(options):
        return option_letter(int(answer))
    raise InputError(
        f"{row.where()}: answer {answer!r} is neither a letter A-D nor an index 0-3; a file whose answers count "
        "from 1 would have every answer read one letter off, so it is not read (not even with --skip-bad)"
    )


def _mmlu_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    subject = text(row, "subject")
    split = row.fields.get("__split__", "test")
    # A row's place in its subject counts every row, a bad one too: fixing or skipping one row elsewhere
    # changes no other task's id.
    key = subject if split == "test" else f"{subject}/{split}"
    number = seen[key]
    seen[key] += 1
    question = text(row, "question")
    if "choices" in row.fields:  # the Parquet layout: choices and an index
        options = _options(row.fields["choices"], "choices")
        gold = _index_letter(options, field(row, "answer"), "answer")
    else:
        if "__extra__" in row.fields or any(c not in row.fields for c in MMLU_COLUMNS):
            raise BadRow(f"expected {len(MMLU_COLUMNS)} columns: question, four options, answer letter")
        options = _options([row.fields[c] for c in "ABCD"], "options")
        gold = _mmlu_answer(row, options)
    return McqTask(id=f"mmlu/{key}/{number}", question=question, options=options, answer=gold,
                category=subject)  # fmt: skip


# MMLU-Pro: the Parquet or JSONL of TIGER-Lab/MMLU-Pro.
def _mmlu_pro_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    qid = text(row, "question_id")
    options = _options(field(row, "options"), "options")
    gold = _gold(options, text(row, "answer"))
    if "answer_index" in row.fields and row.fields["answer_index"] is not None:
        by_index = _index_letter(options, row.fields["answer_index"], "answer_index")
        if by_index != gold:
            raise BadRow(f"answer {gold} and answer_index {row.fields['answer_index']} disagree")
    src = row.fields.get("src")
    return McqTask(id=f"mmlu-pro/{qid}", question=text(row, "question"), options=options, answer=gold,
                category=text(row, "category"), subset=str(src) if src else None)  # fmt: skip


# GPQA: the CSVs (gpqa_diamond.csv, gpqa_main.csv, ...); the answers have no order of their own.
def _gpqa_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    record = text(row, "Record ID")
    correct = text(row, "Correct Answer")
    answers = [correct, *(text(row, f"Incorrect Answer {i}") for i in (1, 2, 3))]
    # Shuffled per record by the seed and the record's id: the same seed gives the same order whatever
    # else is imported, and the gold letter falls on A-D alike.
    order = list(range(4))
    random.Random(_stable_int(f"gpqa:{seed}:{record}")).shuffle(order)
    options = [answers[i] for i in order]
    domain = text(row, "High-level domain")
    sub = row.fields.get("Subdomain")
    return McqTask(id=f"gpqa/{record}", question=text(row, "Question"), options=options,
                answer=option_letter(order.index(0)), category=domain,
                subset=str(sub).strip() or None if sub else None)  # fmt: skip


# ARC: the Parquet of allenai/ai2_arc, or the original ARC JSONL.
def _arc_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    question = field(row, "question")
    choices: Any = row.fields.get("choices")
    if isinstance(question, dict):  # the original JSONL: {"stem", "choices": [{"text", "label"}]}
        choices = question.get("choices")
        question = question.get("stem")
    if not isinstance(question, str) or not question.strip():
        raise BadRow("no question text")
    if isinstance(choices, dict):  # the Parquet layout: {"text": [...], "label": [...]}
        texts, labels = choices.get("text"), choices.get("label")
    elif isinstance(choices, list) and all(isinstance(c, dict) for c in choices):
        texts, labels = [c.get("text") for c in choices], [c.get("label") for c in choices]
    else:
        raise BadRow("no choices")
    options = _options(texts, "choices")
    if not isinstance(labels, list) or len(labels) != len(options):
        raise BadRow("choices have no label for every text")
    key = text(row, "answerKey")
    labels = [str(label).strip() for label in labels]
    # Numeric labels 1-5 mean A-E, whichever of the two the key is written in.
    if key not in labels and key.isdigit() and labels == [option_letter(i) for i in range(len(labels))]:
        key = option_letter(int(key) - 1)
    elif key not in labels and len(key) == 1 and key.isalpha() and labels == [str(i + 1) for i in range(len(labels))]:
        key = str(ord(key.upper()) - ord("A") + 1)
    if key not in labels:
        raise BadRow(f"answerKey {key!r} is not among the labels {', '.join(labels)}")
    return McqTask(id=f"arc/{text(row, 'id')}", question=question.strip(), options=options,
                answer=option_letter(labels.index(key)), category="arc")  # fmt: skip


def _stable_int(text: str) -> int:
    """A number from a text, the same on every machine and Python (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


DATASETS = (
    Dataset(name="mmlu", label="MMLU", files=("csv", "parquet"), rows="mmlu_files", task=_mmlu_task,
            csv_columns=MMLU_COLUMNS),
    Dataset(name="mmlu-pro", label="MMLU-Pro", files=("parquet", "jsonl"), task=_mmlu_pro_task),
    Dataset(name="gpqa", label="GPQA", files=("csv",), task=_gpqa_task),
    Dataset(name="arc", label="ARC", files=("parquet", "jsonl"), task=_arc_task),
)  # fmt: skip

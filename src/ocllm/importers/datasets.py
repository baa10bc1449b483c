"""One function per dataset layout: a row as its publisher distributes it -> a Task of this project.

A row that cannot be a task raises BadRow with what is wrong; the caller names the file and the row.
Ids name their source (`mmlu-pro/70`, `gpqa/recXXXX`, `arc/Mercury_1000`, `mmlu/anatomy/3`), so that
suites imported from different datasets can be concatenated and keep unique ids. The math datasets' layouts
(gsm8k, math, aime) are in math_datasets.py, IFEval's in ifeval_dataset.py, BFCL's in bfcl_dataset.py, registered
here with the rest.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ocllm.errors import InputError
from ocllm.importers.bfcl_dataset import BFCL_DATASETS
from ocllm.importers.bounds import Budget
from ocllm.importers.ifeval_dataset import IFEVAL_DATASETS
from ocllm.importers.layout import BadRow, Dataset
from ocllm.importers.layout import field as _field
from ocllm.importers.layout import text as _text
from ocllm.importers.math_datasets import MATH_DATASETS
from ocllm.importers.rows import CSV, JSONL, PARQUET, Row, read_rows
from ocllm.models import Task
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
# Parquet of cais/mmlu.
_MMLU_COLUMNS = ("question", "A", "B", "C", "D", "answer")
_MMLU_HEADER = ("question", "a", "b", "c", "d")  # then `answer` or `target`, compared case-folded
_MMLU_ANSWER_NAMES = ("answer", "target")
_SPLIT_SUFFIX = re.compile(r"_(test|dev|val|validation|train|auxiliary_train)$")
_PARQUET_SPLIT = re.compile(r"^(test|dev|val|validation|train|auxiliary_train)\b")


def _mmlu_rows(path: Path, budget: Budget) -> Iterator[Row]:
    # The split, from the file name (`anatomy_dev.csv`, `validation-00000-of-00001.parquet`): the test split's
    # ids are `mmlu/<subject>/<n>`, another split's name it (`mmlu/anatomy/dev/3`), so that importing the
    # whole tarball leaves a test question its id.
    if path.suffix.lower() in CSV:
        split = _SPLIT_SUFFIX.search(path.stem)
        subject = _SPLIT_SUFFIX.sub("", path.stem)
        extra = {"subject": subject, "__split__": split.group(1) if split else "test"}
        for row in read_rows(path, budget, header=False, columns=_MMLU_COLUMNS, header_row=_mmlu_header):
            yield Row(row.file, row.number, {**row.fields, **extra})
    else:
        split = _PARQUET_SPLIT.match(path.stem)
        for row in read_rows(path, budget):
            yield Row(row.file, row.number, {**row.fields, "__split__": split.group(1) if split else "test"})


def _mmlu_header(cells: list[str]) -> list[str] | None:
    """The field names, when a CSV's first row is the header the public copies of MMLU write: its last six
    cells `question, A, B, C, D, answer` (or `target`), in any case; cells before them are columns of their
    own (pandas writes its index first). Recognised by these words alone, never guessed from the data: a
    question whose answer cell is a letter is a question, whatever its text."""
    words = [cell.strip().casefold() for cell in cells]
    if len(words) < 6 or tuple(words[-6:-1]) != _MMLU_HEADER or words[-1] not in _MMLU_ANSWER_NAMES:
        return None
    leading = [cell.strip() or f"column {i + 1}" for i, cell in enumerate(cells[:-6])]
    return [*leading, *_MMLU_COLUMNS]


def _mmlu_answer(row: Row, options: list[str]) -> str:
    """The gold letter of an MMLU CSV row: a letter A-D, or an index 0-3 as cais/mmlu writes it. A larger
    digit means the file counts its answers from 1, and "1" would then be read as B: the file is refused
    as a whole (an InputError, which --skip-bad does not skip), never read one letter off."""
    answer = _text(row, "answer")
    if not answer.isdigit():
        return _gold(options, answer)
    if int(answer) < len(options):
        return option_letter(int(answer))
    raise InputError(
        f"{row.where()}: answer {answer!r} is neither a letter A-D nor an index 0-3; a file whose answers count "
        "from 1 would have every answer read one letter off, so it is not read (not even with --skip-bad)"
    )


def _mmlu_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    subject = _text(row, "subject")
    split = row.fields.get("__split__", "test")
    # A row's place in its subject counts every row, a bad one too: fixing or skipping one row elsewhere
    # changes no other task's id.
    key = subject if split == "test" else f"{subject}/{split}"
    number = seen[key]
    seen[key] += 1
    question = _text(row, "question")
    if "choices" in row.fields:  # the Parquet layout: choices and an index
        options = _options(row.fields["choices"], "choices")
        gold = _index_letter(options, _field(row, "answer"), "answer")
    else:
        if "__extra__" in row.fields or any(c not in row.fields for c in _MMLU_COLUMNS):
            raise BadRow(f"expected {len(_MMLU_COLUMNS)} columns: question, four options, answer letter")
        options = _options([row.fields[c] for c in "ABCD"], "options")
        gold = _mmlu_answer(row, options)
    return McqTask(id=f"mmlu/{key}/{number}", question=question, options=options, answer=gold,
                category=subject)  # fmt: skip


# MMLU-Pro: the Parquet or JSONL of TIGER-Lab/MMLU-Pro.
def _mmlu_pro_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    qid = _text(row, "question_id")
    options = _options(_field(row, "options"), "options")
    gold = _gold(options, _text(row, "answer"))
    if "answer_index" in row.fields and row.fields["answer_index"] is not None:
        by_index = _index_letter(options, row.fields["answer_index"], "answer_index")
        if by_index != gold:
            raise BadRow(f"answer {gold} and answer_index {row.fields['answer_index']} disagree")
    src = row.fields.get("src")
    return McqTask(id=f"mmlu-pro/{qid}", question=_text(row, "question"), options=options, answer=gold,
                category=_text(row, "category"), subset=str(src) if src else None)  # fmt: skip


# GPQA: the CSVs (gpqa_diamond.csv, gpqa_main.csv, ...); the answers have no order of their own.
def _gpqa_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    record = _text(row, "Record ID")
    correct = _text(row, "Correct Answer")
    answers = [correct, *(_text(row, f"Incorrect Answer {i}") for i in (1, 2, 3))]
    # Shuffled per record by the seed and the record's id: the same seed gives the same order whatever
    # else is imported, and the gold letter falls on A-D alike.
    order = list(range(4))
    random.Random(_stable_int(f"gpqa:{seed}:{record}")).shuffle(order)
    options = [answers[i] for i in order]
    domain = _text(row, "High-level domain")
    sub = row.fields.get("Subdomain")
    return McqTask(id=f"gpqa/{record}", question=_text(row, "Question"), options=options,
                answer=option_letter(order.index(0)), category=domain,
                subset=str(sub).strip() or None if sub else None)  # fmt: skip


# ARC: the Parquet of allenai/ai2_arc, or the original ARC JSONL.
def _arc_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    question = _field(row, "question")
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
    key = _text(row, "answerKey")
    labels = [str(label).strip() for label in labels]
    # Numeric labels 1-5 mean A-E, whichever of the two the key is written in.
    if key not in labels and key.isdigit() and labels == [option_letter(i) for i in range(len(labels))]:
        key = option_letter(int(key) - 1)
    elif key not in labels and len(key) == 1 and key.isalpha() and labels == [str(i + 1) for i in range(len(labels))]:
        key = str(ord(key.upper()) - ord("A") + 1)
    if key not in labels:
        raise BadRow(f"answerKey {key!r} is not among the labels {', '.join(labels)}")
    return McqTask(id=f"arc/{_text(row, 'id')}", question=question.strip(), options=options,
                answer=option_letter(labels.index(key)), category="arc")  # fmt: skip


def _stable_int(text: str) -> int:
    """A number from a text, the same on every machine and Python (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


DATASETS: dict[str, Dataset] = {
    "mmlu": Dataset(CSV + PARQUET, _mmlu_rows, _mmlu_task),
    "mmlu-pro": Dataset(PARQUET + JSONL, read_rows, _mmlu_pro_task),
    "gpqa": Dataset(CSV, read_rows, _gpqa_task),
    "arc": Dataset(PARQUET + JSONL, read_rows, _arc_task),
    **MATH_DATASETS,  # gsm8k, math, aime: importers/math_datasets.py
    **IFEVAL_DATASETS,  # ifeval: importers/ifeval_dataset.py
    **BFCL_DATASETS,  # bfcl: importers/bfcl_dataset.py
}

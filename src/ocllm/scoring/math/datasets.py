"""The math room's datasets for `ocllm import`: a row as GSM8K, MATH (hendrycks, MATH-500) or an AIME set
distributes it -> a math Task, whose `answer` is the gold (plain or LaTeX) and which keeps no worked solution.

Ids name their source and, where the dataset has none of its own, the row's place: `gsm8k/12` (the 13th test
question, which is also lm-eval's doc_id 12), `math/test/precalculus/807.json` (MATH-500's unique_id),
`math/test/algebra/3` (the 4th algebra row of a hendrycks file), `aime/2024-I-3`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow, Dataset, Row, text
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.golds import aime_integer, gsm8k_gold, last_boxed, level_name


def _counted(seen: Counter[str], key: str) -> int:
    """The row's place among the rows of its key read so far (bad ones too, so that fixing or skipping one row
    changes no other task's id)."""
    number = seen[key]
    seen[key] += 1
    return number


# GSM8K: openai/gsm8k's Parquet (`main/test-00000-of-00001.parquet`) or the original JSONL (`test.jsonl`):
# `question`, and `answer` = the worked solution, then `#### <gold>`.
def _gsm8k_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    split = row.fields.get("__split__", "test")
    number = _counted(seen, f"gsm8k/{split}")
    question = text(row, "question")
    gold = gsm8k_gold(text(row, "answer"))
    if gold is None:
        raise BadRow("'answer' has no gold answer after '####'")
    task_id = f"gsm8k/{number}" if split == "test" else f"gsm8k/{split}/{number}"
    return MathTask(id=task_id, question=question, answer=gold, category="gsm8k")


# MATH: hendrycks' (`problem`, `level` "Level 5", `type` "Algebra", `solution`) and MATH-500's (`problem`,
# `solution`, `answer`, `subject`, `level` 5, `unique_id`), in JSONL or Parquet.
def _math_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    subject_field = "subject" if row.fields.get("subject") not in (None, "") else "type"
    subject = text(row, subject_field)
    unique_id = row.fields.get("unique_id")
    key = f"{row.fields.get('__split__', 'test')}/{_slug(subject)}"
    number = _counted(seen, key)
    problem = text(row, "problem")
    answer = row.fields.get("answer")
    if isinstance(answer, str | int | float) and not isinstance(answer, bool) and str(answer).strip():
        gold: str | None = str(answer).strip()
    else:
        gold = last_boxed(text(row, "solution"))
        if gold is None:
            raise BadRow("no 'answer', and 'solution' has no complete \\boxed{...} to take the gold from")
    if isinstance(unique_id, str) and unique_id.strip():
        task_id = f"math/{unique_id.strip()}"
    else:
        task_id = f"math/{key}/{number}"
    return MathTask(id=task_id, question=problem, answer=gold, category=subject,
                subset=level_name(row.fields.get("level")))  # fmt: skip


def _slug(subject: str) -> str:
    """A subject as hendrycks names its folders: "Counting & Probability" -> "counting_and_probability"."""
    return re.sub(r"[^a-z0-9]+", "_", subject.casefold().replace("&", " and ")).strip("_")


# AIME: AI-MO/aimo-validation-aime and HuggingFaceH4/aime_2024 (`id`, `problem`, `solution`, `answer`, `url`,
# `year`), Maxwell-Jia/AIME_2024 (`ID` "2024-I-1", `Problem`, `Solution`, `Answer`), gneubig/aime-1983-2024's CSV
# (`ID`, `Year`, `Problem Number`, `Question`, `Answer`, `Part`), opencompass/AIME2025 (`question`, `answer`),
# MathArena's (`problem_idx`, `problem`, `answer`). The field names are those, in the cases they are written in.
_QUESTION_FIELDS = ("problem", "Problem", "question", "Question")
_ANSWER_FIELDS = ("answer", "Answer")
_ID_FIELDS = ("ID", "id")
_YEAR_FIELDS = ("year", "Year")
_NUMBER_FIELDS = ("Problem Number", "problem_number", "problem_idx")
_PART_FIELDS = ("Part", "part")
_YEAR_ID = re.compile(r"((?:19|20)\d\d)(?:-[A-Za-z0-9]+)+")  # "2024-I-1", "1983-1"
_AOPS_URL = re.compile(r"((?:19|20)\d\d)_AIME_(I{1,2})_Problems/Problem_(\d+)")


def _present(row: Row, names: tuple[str, ...]) -> tuple[str, Any] | None:
    """The first of the field names the row fills (not null, not blank), with its value."""
    for name in names:
        value = row.fields.get(name)
        if value is not None and not (isinstance(value, str) and not value.strip()):
            return name, value
    return None


def _aime_task(row: Row, seed: int, seen: Counter[str]) -> Task:
    question = _present(row, _QUESTION_FIELDS)
    if question is None:
        raise BadRow("no 'problem' or 'question'")
    answer = _present(row, _ANSWER_FIELDS)
    if answer is None:
        raise BadRow("no 'answer'")
    # Every AIME answer is an integer 000-999 (the contest's rules), so anything else is a damaged row.
    gold = aime_integer(answer[1])
    if gold is None:
        raise BadRow(f"{answer[0]!r} {answer[1]!r} is not an integer 0-999, as every AIME answer is")
    name, year = _aime_id(row)
    return MathTask(id=f"aime/{name}", question=text(row, question[0]), answer=gold,
                category=year or "aime")  # fmt: skip


def _aime_id(row: Row) -> tuple[str, str | None]:
    """The id after `aime/`, and the year when the row tells it. In order: an id that starts with its year
    ("2024-I-1"); the AoPS wiki address (".../2022_AIME_I_Problems/Problem_1" -> "2022-I-1"); the year, part
    and problem number fields ("2024-II-4", or "1983-1" without a part); else the file and the row's id or
    problem number or, lacking both, its row number ("aime2025-I/3")."""
    year_field = _present(row, _YEAR_FIELDS)
    year = _whole(year_field[1]) if year_field else None
    own = _present(row, _ID_FIELDS)
    own_id = str(own[1]).strip() if own else None
    if own_id and (match := _YEAR_ID.fullmatch(own_id)):
        return own_id, year or match.group(1)
    url = row.fields.get("url")
    if isinstance(url, str) and (found := _AOPS_URL.search(url)):
        return f"{found.group(1)}-{found.group(2)}-{found.group(3)}", year or found.group(1)
    number_field = _present(row, _NUMBER_FIELDS)
    number = _whole(number_field[1]) if number_field else None
    part_field = _present(row, _PART_FIELDS)
    part = str(part_field[1]).strip() if part_field else None
    if year and number:
        return "-".join(p for p in (year, part, number) if p), year
    return f"{row.file.stem}/{own_id or number or row.number}", year


def _whole(value: Any) -> str | None:
    """A year or problem number as its digits (written 2024, "2024" or, by pandas, 2024.0)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text_value = str(value).strip()
    return text_value if text_value.isdigit() else None


# GSM8K's and MATH's ids name a split other than test, which their files' names tell (the "split_from_name" rows).
DATASETS = (
    Dataset(name="gsm8k", label="GSM8K", files=("parquet", "jsonl"), rows="split_from_name", task=_gsm8k_task),
    Dataset(name="math", label="MATH", files=("parquet", "jsonl"), rows="split_from_name", task=_math_task),
    Dataset(name="aime", label="AIME", files=("parquet", "jsonl", "csv"), task=_aime_task),
)

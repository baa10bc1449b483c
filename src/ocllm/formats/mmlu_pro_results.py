"""Reader of the result files of the MMLU-Pro evaluation scripts (TIGER-AI-Lab's `evaluate_from_*.py` and
their forks): one JSON list per category (`<category>_result.json`), each record a question with the
model's response and the letter the script extracted.

    {"question_id": 7687, "question": ..., "options": [...], "answer": "H", "answer_index": 7,
     "category": "math", "src": "ori_mmlu-abstract_algebra", "pred": "E", "response": "..."}

Some versions and forks call the response `model_outputs`. The script counts a task correct when `pred`
equals `answer`; that is the tool's verdict kept under `previous`. (Some versions count a random guess for a
null `pred`: that guess is not in the file, so a null `pred` is counted here as incorrect.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ocllm.errors import InputError
from ocllm.formats.records import SavedRecord
from ocllm.formats.tool_records import lone_letter, mcq_task, not_expected
from ocllm.jsonfile import json_events, json_items
from ocllm.models import Sample

TOOL = "mmlu-pro"
EXPECTED = "an MMLU-Pro result file (a JSON list of questions with options, answer, pred and response)"
RESPONSE_FIELDS = ("response", "model_outputs")


def files_in(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*_result.json"))


def read(path: Path) -> Iterator[SavedRecord]:
    """The file's records, one at a time. The file is first read through once as JSON events (nothing
    built), so that a file that is not JSON, or not a list, is refused before its first record is used."""
    try:
        events = json_events(path)
        first = next(events, (None, None))[0]
        if first != "start_array":
            raise InputError(f"{path}: not {EXPECTED}")
        empty = next(events, (None, None))[0] == "end_array"
        for _ in events:
            pass
    except InputError as exc:  # not JSON, not UTF-8 text (a zip, say), unreadable
        raise not_expected(path, EXPECTED, exc) from None
    if empty:
        raise InputError(f"{path}: an empty list: no results to re-score")
    for index, row in enumerate(json_items(path, "item"), start=1):
        yield _record(path, index, row)


def _record(path: Path, index: int, row: Any) -> SavedRecord:
    where = f"{path}: record #{index}"
    if not isinstance(row, dict) or "question_id" not in row or "options" not in row:
        raise InputError(f"{where} has no question_id and options: not {EXPECTED}")
    question_id = row["question_id"]
    if isinstance(question_id, bool) or not isinstance(question_id, int | str) or question_id == "":
        raise InputError(f"{where} has a question_id that is neither a number nor text")
    task_id = str(question_id)
    where = f"{path}: question {task_id}"
    answer = row.get("answer")
    if answer is None and isinstance(row.get("answer_index"), int):
        answer = chr(ord("A") + row["answer_index"])
    field = next((f for f in RESPONSE_FIELDS if f in row), None)
    if field is None:
        raise InputError(f"{where} has neither {' nor '.join(RESPONSE_FIELDS)}")
    response = row[field]
    if response is not None and not isinstance(response, str):
        raise InputError(f"{where} has a {field} that is not text")
    task = mcq_task(
        where,
        task_id,
        row.get("options"),
        answer,
        question=str(row.get("question") or ""),
        category=str(row.get("category") or "uncategorized"),
        subset=row["src"] if isinstance(row.get("src"), str) else None,
    )
    pred = row.get("pred")
    letter = lone_letter(pred)
    previous = {
        "tool": TOOL,
        "extraction_method": "mmlu-pro pred",
        "extracted_final_answer": letter,
        "tool_answer": pred,
        "correct": pred == row.get("answer"),  # the script's own test, as it stands: "(B)" is not "B" to it
    }
    # An empty response is what the scripts write when the request failed; it is scored as it stands (no
    # statement: no answer), since the file does not say whether the model or the transport gave nothing.
    sample = Sample(task_id=task_id, content=response or "")
    return SavedRecord(task, sample, previous, {})

"""Reader of the result files of the MMLU-Pro evaluation scripts (TIGER-AI-Lab's `evaluate_from_*.py` and
their forks): one JSON list per category (`<category>_result.json`), each record a question with the
model's response and the letter the script extracted.

    {"question_id": 7687, "question": ..., "options": [...], "answer": "H", "answer_index": 7,
     "category": "math", "src": "ori_mmlu-abstract_algebra", "pred": "E", "response": "..."}

Some versions and forks call the response `model_outputs`. The script counts a task correct when `pred`
equals `answer`; that is the tool's verdict kept under `previous`. (Some versions count a random guess for a
null `pred`: that guess is not in the file, so a null `pred` is counted here as incorrect.)

A record this scorer cannot score (TIGER-AI-Lab's own results hold questions left with a single option) is
reported as unscorable, with why, and the rest of the file is read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.files.reading import json_events, json_items
from ocllm.formats.harness_records import not_expected, tool_mapping, unscorable
from ocllm.formats.records import SavedRecord
from ocllm.models import Sample
from ocllm.scoring.other_harnesses import HarnessRecord, NotScorable

TOOL = "mmlu-pro"
EXPECTED = "an MMLU-Pro result file (a JSON list of questions with options, answer, pred and response)"
RESPONSE_FIELDS = ("response", "model_outputs")


def record_fields() -> tuple[str, ...]:
    """What every record of a result list has: its `question_id`, and the fields that make it a task of the room
    that reads MMLU-Pro's results (`options`)."""
    return ("question_id", *tool_mapping(TOOL).marks)


# What a folder given instead of files is searched for: the scripts name their files `<category>_result.json`,
# forks `<subject>.json` and the like, so the content decides, not the name.
LOOKED_FOR = "*.json files holding a JSON list of records with question_id and options"  # record_fields()


def files_in(folder: Path) -> tuple[list[Path], list[str]]:
    """The result lists in a folder (and below it): every `*.json` whose first record has the fields of one,
    and every other JSON file skipped, with why (the scripts' `*_summary.json` are objects)."""
    found: list[Path] = []
    skipped: list[str] = []
    for path in sorted(p for p in folder.rglob("*.json") if p.is_file()):
        why = not_a_result_list(path)
        if why is None:
            found.append(path)
        else:
            skipped.append(f"{path.relative_to(folder)} ({why})")
    return found, skipped


def not_a_result_list(path: Path) -> str | None:
    """Why a file is not a result list, judged by its opening (as far as its first record), or None when it
    is one. Cheap: the parser reads the first piece of the file, not all of it."""
    events = json_events(path)
    try:
        first = next(events, (None, None))[0]
        if first != "start_array":
            return "an object, not a list" if first == "start_map" else "not a JSON list"
        opening = next(events, (None, None))[0]
        if opening == "end_array":
            return "an empty list"
        if opening != "start_map":
            return "a list of something other than records"
        keys: set[str] = set()
        depth = 1
        for event, value in events:
            if depth == 1 and event == "map_key":
                keys.add(value)
            elif event in ("start_map", "start_array"):
                depth += 1
            elif event in ("end_map", "end_array"):
                depth -= 1
                if not depth:
                    break
        missing = [key for key in record_fields() if key not in keys]
        return f"its first record has no {' and no '.join(missing)}" if missing else None
    except InputError as exc:  # not JSON, not UTF-8 text, unreadable
        return str(exc).removeprefix(f"{path}: ")
    finally:
        events.close()


def read(path: Path) -> Iterator[SavedRecord | UnscorableRecord]:
    """The file's records, one at a time (those this scorer cannot score as UnscorableRecord). The file is
    first read through once as JSON events (nothing built), so that a file that is not JSON, or not a list, is
    refused before its first record is used."""
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
        try:
            yield _record(path, index, row)
        except NotScorable as exc:
            yield unscorable(exc, path)


def _record(path: Path, index: int, row: Any) -> SavedRecord:
    where = f"{path}: record #{index}"
    needed = record_fields()
    if not isinstance(row, dict) or any(name not in row for name in needed):
        if index == 1:  # the first record says what the file is
            raise InputError(f"{where} has no {' and '.join(needed)}: not {EXPECTED}")
        raise NotScorable(f"record #{index}", where, f"no {' and '.join(needed)}")
    question_id = row["question_id"]
    if isinstance(question_id, bool) or not isinstance(question_id, int | str) or question_id == "":
        raise NotScorable(f"record #{index}", where, "a question_id that is neither a number nor text")
    task_id = str(question_id)
    where = f"{path}: question {task_id}"
    field = next((f for f in RESPONSE_FIELDS if f in row), None)
    if field is None:
        raise NotScorable(task_id, where, f"neither {' nor '.join(RESPONSE_FIELDS)}")
    response = row[field]
    if response is not None and not isinstance(response, str):
        raise NotScorable(task_id, where, f"a {field} that is not text")
    mapping = tool_mapping(TOOL)
    task = mapping.task(
        HarnessRecord(
            where,
            task_id,
            row,
            question=str(row.get("question") or ""),
            category=str(row.get("category") or "uncategorized"),
            subset=row["src"] if isinstance(row.get("src"), str) else None,
        )
    )
    pred = row.get("pred")
    previous = {
        "tool": TOOL,
        "extraction_method": "mmlu-pro pred",
        "extracted_final_answer": mapping.extracted(pred),
        "tool_answer": pred,
        "correct": pred == row.get("answer"),  # the script's own test, as it stands: "(B)" is not "B" to it
    }
    # An empty response is what the scripts write when the request failed; it is scored as it stands (no
    # statement: no answer), since the file does not say whether the model or the transport gave nothing.
    sample = Sample(task_id=task_id, content=response or "")
    return SavedRecord(task, sample, previous, {})

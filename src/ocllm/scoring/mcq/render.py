"""How the run report draws an MCQ record's own evidence: the options with the expected one and a wrong pick
marked, and each statement found with the letters it names and how it was read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.mcq.option_letters import option_letter
from ocllm.scoring.task_view import MarkedOption, Statement, Tag, TaskView, candidates_of, statement


def _options(record: Mapping[str, Any]) -> list[MarkedOption]:
    expected = record.get("expected_answer")
    picked = record.get("extracted_final_answer")
    out = []
    for i, text in enumerate(record.get("options") or []):
        # Past 26 options a record read from another tool's file has no letter: its options are numbered.
        letter = option_letter(i) if i < 26 else str(i + 1)
        out.append(MarkedOption(letter, str(text), letter == expected, letter == picked and picked != expected))
    return out


def _statement(candidate: Mapping[str, Any], deciding: bool) -> Statement:
    tags = []
    if candidate.get("hedged"):
        tags.append(Tag("hedged", warn=True))
    if candidate.get("out_of_range"):
        tags.append(Tag("out of range", warn=True))
    if candidate.get("placeholder"):
        tags.append(Tag("placeholder echo", warn=True))
    # A record without letters states a value (a statement of another room's, read as MCQ's): drawn as such.
    stated = None
    if "letters" not in candidate and candidate.get("value") is not None:
        normal = candidate.get("normalised")
        value = candidate["value"]
        stated = str(value) + (f" → {normal}" if normal is not None and normal != value else "")
    elif candidate.get("value") is not None:
        tags.append(Tag(f"value {candidate['value']}"))
    letters = candidate.get("letters") or ([candidate["letter"]] if candidate.get("letter") else [])
    return statement(candidate, deciding, letters=[str(x) for x in letters], stated=stated, own_tags=tags)


def task_view(record: Mapping[str, Any]) -> TaskView:
    return TaskView(
        options=_options(record),
        statements=[_statement(c, deciding) for c, deciding in candidates_of(record)],
    )

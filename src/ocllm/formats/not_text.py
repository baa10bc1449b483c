"""Saved records that are not text: a lone UTF-16 surrogate (`"\\udc00"`, valid JSON that Python's reader keeps as
a code point no UTF-8 file can hold) anywhere in a record a reader made. One rule, applied to every record `rescore`,
`compare`, `report` and `plan --from` read (`screen`, called by `formats.stream_saved_run`, `formats.load_saved_run`
and `formats.harnesses.read_harness_files`), so that no string reaches a writer that cannot encode it
(docs/lanes.md, "Inputs that are not text"):

- in the response (content, reasoning, tool calls): the sample is a failed one of kind `malformed`, naming where,
  as a live server's answer with the same escape is (the client's JSON reader refuses it);
- in the task (question, options, answer, instructions, schema, tools, id, category...): the record is unscorable,
  left out and counted apart with why. The task is what was asked and what the answer is held to: a repaired
  option or gold would be scored as something the file does not say;
- anywhere else (`previous`, the fields carried through, the sample's other fields): each lone surrogate becomes
  U+FFFD, the mark of a character that could not be read, where the output shows the field. These are kept to be
  shown beside this scorer's verdict, never scored.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ocllm.documents import UnscorableRecord
from ocllm.files.surrogates import first_lone_surrogate, lone_surrogate, repaired
from ocllm.formats.records import SavedRecord

__all__ = ["lone_surrogate", "screen"]

_WORDS = "holds a lone UTF-16 surrogate ({where}), which is not text"


def screen(record: SavedRecord, path: Path) -> SavedRecord | UnscorableRecord:
    """`record` as it is when all of it is text; else as the rule above says (`path` the file it was read from)."""
    try:
        return _screen(record, path)
    except RecursionError:  # a value nested deeper than the walk of a repair can go (no reader reads one)
        return _unscorable(record, path, "its fields are nested too deeply to read as text")


def _screen(record: SavedRecord, path: Path) -> SavedRecord | UnscorableRecord:
    found = first_lone_surrogate(record.task)
    if found is not None:
        field, where = found
        reason = f"its {field} {_WORDS.format(where=where)}: the task cannot be scored as it was asked"
        return _unscorable(record, path, reason)
    sample = record.sample
    answer = (("content", sample.content), ("reasoning", sample.reasoning), ("tool calls", sample.tool_calls))
    for field, value in answer:
        found = first_lone_surrogate(value)
        if found is not None:
            error = f"malformed response body: its {field} {_WORDS.format(where=found[1])}"
            sample = msgspec.structs.replace(
                sample, content=None, reasoning=None, tool_calls=None, error=error, error_kind="malformed"
            )
            break
    if first_lone_surrogate(sample) is not None:  # the sample's other fields: its error, usage, request...
        sample = msgspec.convert(repaired(msgspec.to_builtins(sample)), type(sample))
    previous, carried = repaired(record.previous), repaired(record.carried)
    if sample is record.sample and previous is record.previous and carried is record.carried:
        return record  # all of it text: the record itself, nothing copied
    return record._replace(sample=sample, previous=previous, carried=carried)


def _unscorable(record: SavedRecord, path: Path, reason: str) -> UnscorableRecord:
    # The id itself may be what is not text: written with the surrogate escaped, as JSON would spell it.
    task_id = record.task.id.encode("utf-8", "backslashreplace").decode("utf-8")
    sample = f", sample {record.sample.sample}" if record.sample.sample else ""
    return UnscorableRecord(task_id=task_id, file=str(path), where=f"task {task_id!r}{sample}", reason=reason)

"""Reader of inspect_ai evaluation logs: `.eval` (a zip holding `header.json` and one
`samples/<id>_epoch_<n>.json` per sample and epoch) and `.json` (one object: the same header fields and a
`samples` list).

A sample holds the option texts (`choices`), the gold letter (`target`), the rendered prompt (the first
user message), the model's output (`output.choices[0].message.content`: a string, or a list of blocks,
`text` ones for the content and `reasoning` ones for the reasoning), and what each scorer decided
(`scores.<scorer>.answer` and `value`, "C" correct and "I" incorrect). A sample inspect_ai recorded as
failed (an `error`, no output choices) is an error here too, never a wrong answer. A sample this scorer
cannot score (several targets, one choice) is reported as unscorable, with why, and the others are read.

A task run for several epochs is one task with a sample per epoch: its id is the sample's id, and
`Sample.sample` is the epoch less one (inspect_ai counts epochs from 1), each with that epoch's own verdict.
inspect_ai writes the epochs apart (a `.eval` member per sample as it finishes, a `.json` log's samples sorted by
epoch, then id); they are read grouped by task, its epochs in order. A `.eval` is read member by member in that
order; a `.json` log of several epochs holds its records (not the transcripts) until the last is read, since
a task's last epoch comes near the end (inspect_ai itself reads such a log whole).

A `.eval` member is read to a bound, checked as it inflates (zip_members): header.json and the journal's
start, the eval's spec and results (kilobytes in practice), to HEADER_LIMIT; a sample, which also holds its
whole transcript (`events`, often most of it, megabytes for a long agent run), to SAMPLE_LIMIT, streamed into
the JSON parser so that the fields read here are built and the rest passed over. A member inflating past its
bound is a zip bomb, or no inspect_ai log: the file is refused in one line."""

from __future__ import annotations

import functools
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ijson

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.files.reading import (
    MAX_DEPTH,
    InvalidJSON,
    has_non_standard_numbers,
    json_items,
    load_json_whole,
    outline,
    too_deep,
)
from ocllm.formats.harness_records import failed_sample, not_expected, tool_mapping, unscorable
from ocllm.formats.records import SavedRecord
from ocllm.formats.zip_members import MB, Readable, open_member, read_member
from ocllm.models import Sample
from ocllm.scoring.other_harnesses import HarnessRecord, NotScorable, verdict_of

TOOL = "inspect"
EXPECTED = "an inspect_ai log (.eval: a zip holding header.json and samples/; .json: an object with a samples list)"
PREFERRED_SCORER = "choice"  # inspect_ai's multiple-choice scorer, when a sample has several
_SAMPLE_MEMBER = re.compile(r"samples/(.+)_epoch_(\d+)\.json")
HEADER_LIMIT = 32 * MB  # header.json, _journal/start.json: what a member of the run's facts may inflate to
SAMPLE_LIMIT = 128 * MB  # one sample member, its transcript included
# A sample's fields this reader uses: only these are built from a sample member; the others are passed over.
_SAMPLE_FIELDS = frozenset(("id", "epoch", "input", "target", "choices", "metadata", "messages", "output", "scores",
                            "error"))  # fmt: skip
# Bytes inflated and handed to the parser at a time: the C parser re-reads a string token not yet complete with
# every piece, so a long string in 64 KB pieces costs seconds where 1 MB pieces cost a fraction of one.
_PIECE = 1 << 20
# inspect_ai's CORRECT, INCORRECT and NOAN (no answer: it counts as 0), and the other words it reads as 1 or 0;
# PARTIAL ("P") is no verdict on one answer.
_VALUES = {"C": True, "I": False, "N": False, "yes": True, "true": True, "no": False, "false": False}
# inspect_ai's stop reasons, as the OpenAI finish_reason this project counts truncation by.
_FINISH = {"max_tokens": "length", "model_length": "length", "stop": "stop", "tool_calls": "tool_calls"}


def files_in(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.eval")) or sorted(p for p in folder.rglob("*.json") if p.name != "logs.json")


@functools.lru_cache(maxsize=64)
def header(path: Path) -> dict[str, Any]:
    """The log's header fields (eval spec, results, status): what the run is. Kept once read: a .json log is
    read through to find them, and several callers ask (the run's facts, the task's name). Not to be
    changed by callers."""
    if zipfile.is_zipfile(path):
        with _open_zip(path) as archive:
            return _header_of_zip(archive, path)
    top, fields, _, _ = _outline(path)
    if top != "start_map" or not isinstance(fields.get("eval"), dict):
        raise InputError(f"{path}: not {EXPECTED}")
    return fields


def task_of(path: Path) -> str:
    return _task_name(header(path), path)


def planned_samples(fields: dict[str, Any]) -> int | None:
    """How many samples (epochs included) the eval set out to run, as its results say."""
    results = fields.get("results")
    total = results.get("total_samples") if isinstance(results, dict) else None
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def _outline(path: Path) -> tuple[str | None, dict[str, Any], list[str], list[Any] | None]:
    """`outline` of a .json log, and its samples when the file had to be read whole: NaN or Infinity, which
    pydantic writes for a metric it could not compute, are not JSON, but Python's json module reads them."""
    if path.suffix.lower() == ".eval":
        raise InputError(f"{path}: not {EXPECTED} (a damaged or truncated zip)")
    try:
        top, fields, lists = outline(path, "samples")
        return top, fields, lists, None
    except InvalidJSON as exc:
        if not has_non_standard_numbers(path):
            raise not_expected(path, EXPECTED, exc) from None
    except InputError as exc:  # not UTF-8 text, unreadable
        raise not_expected(path, EXPECTED, exc) from None
    data = load_json_whole(path)
    if not isinstance(data, dict):
        return None, {}, [], None
    samples = data.get("samples")
    fields = {k: v for k, v in data.items() if k != "samples"}
    return "start_map", fields, ["start_array"] if isinstance(samples, list) else [], samples


def read(
    path: Path, filter_name: str | None = None, qualify_ids: bool = False
) -> Iterator[SavedRecord | UnscorableRecord]:
    """The log's samples, a task's epochs together and in order (those this scorer cannot score as
    UnscorableRecord); with `qualify_ids` their ids carry the task's name (`<task>/<id>`), for logs of several
    tasks read as one run."""
    if zipfile.is_zipfile(path):
        yield from _read_eval(path, qualify_ids)
    else:
        yield from _read_json(path, qualify_ids)


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{path}: not {EXPECTED} ({exc})") from None


def _header_of_zip(archive: zipfile.ZipFile, path: Path) -> dict[str, Any]:
    # header.json is written when the eval ends; a log still running, or cut short, has only its journal.
    for name in ("header.json", "_journal/start.json"):
        try:
            info = archive.getinfo(name)
        except KeyError:
            continue
        fields = _json(read_member(archive, info, path, HEADER_LIMIT), f"{path}: {name}")
        if isinstance(fields, dict) and isinstance(fields.get("eval"), dict):
            return fields
    raise InputError(f"{path}: not {EXPECTED} (no header.json)")


def _read_eval(path: Path, qualify_ids: bool) -> Iterator[SavedRecord | UnscorableRecord]:
    with _open_zip(path) as archive:
        fields = _header_of_zip(archive, path)
        members = [(info, _SAMPLE_MEMBER.fullmatch(info.filename)) for info in archive.infolist()]
        samples = [(info, match) for info, match in members if match]
        if not samples:
            raise InputError(f"{path}: holds no samples (was the eval run with --no-log-samples?)")
        several = epochs_of(fields) > 1 or any(int(match.group(2)) > 1 for _, match in samples)
        task = _task_name(fields, path)
        for info in _by_task(samples):
            where = f"{path}: {info.filename}"
            with open_member(archive, info, path, SAMPLE_LIMIT) as stream:
                sample = _sample_fields(stream, where)
            yield _record_or_unscorable(path, where, sample, several, task, qualify_ids)


def _by_task(samples: list[tuple[zipfile.ZipInfo, re.Match[str]]]) -> list[zipfile.ZipInfo]:
    """The sample members grouped by the id their name gives, in the order each id first appears, its epochs in
    order: inspect_ai writes them as they finish, epoch by epoch."""
    grouped: dict[str, list[tuple[int, zipfile.ZipInfo]]] = {}
    for info, match in samples:
        grouped.setdefault(match.group(1), []).append((int(match.group(2)), info))
    return [info for members in grouped.values() for _, info in sorted(members, key=lambda m: m[0])]


def _read_json(path: Path, qualify_ids: bool) -> Iterator[SavedRecord | UnscorableRecord]:
    top, fields, lists, whole = _outline(path)
    if top != "start_map" or not isinstance(fields.get("eval"), dict) or lists not in ([], ["start_array"]):
        raise InputError(f"{path}: not {EXPECTED}")
    if not lists:
        raise InputError(f"{path}: holds no samples (was the eval run with --no-log-samples?)")
    several = epochs_of(fields) > 1
    task = _task_name(fields, path)
    rows = json_items(path, "samples.item") if whole is None else iter(whole)
    if not several:
        for index, sample in enumerate(rows, start=1):
            yield _record_or_unscorable(path, f"{path}: sample #{index}", sample, several, task, qualify_ids)
        return
    # Sorted by epoch in the file: a task's epochs are brought together, so all of them are held.
    held: list[tuple[str, int, SavedRecord | UnscorableRecord]] = []
    for index, sample in enumerate(rows, start=1):
        where = f"{path}: sample #{index}"
        record = _record_or_unscorable(path, where, sample, several, task, qualify_ids)
        task_id = record.task.id if isinstance(record, SavedRecord) else record.task_id
        held.append((task_id, _epoch(sample, where), record))  # (_record has refused a bad epoch already)
    first: dict[str, int] = {}
    for task_id, _, _ in held:
        first.setdefault(task_id, len(first))
    held.sort(key=lambda item: (first[item[0]], item[1]))  # stable: an epoch given twice stays as it came
    for _, _, record in held:
        yield record


def _json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{where}: not JSON ({reason})") from None


def _sample_fields(stream: Readable, where: str) -> Any:
    """The fields of a sample member this reader uses, built as the member is inflated and parsed; the rest
    (the transcript, attachments, the store) parsed and passed over, never built. The member is read to its
    end, so that its CRC is checked and a member that is not JSON is refused."""
    built: dict[str, Any] = {}
    builder: Any = None  # the builder of the field being read, when it is one of those used
    top: str | None = None
    depth = 0
    try:
        for event, value in ijson.basic_parse(stream, buf_size=_PIECE, use_float=True):
            if top is None:
                top = event
            if event == "map_key" and depth == 1:  # a key of the sample itself
                builder = built[value] = ijson.ObjectBuilder() if value in _SAMPLE_FIELDS else None
                continue
            if event in ("start_map", "start_array"):
                depth += 1
                if depth > MAX_DEPTH:
                    raise InputError(too_deep(where))
            elif event in ("end_map", "end_array"):
                depth -= 1
            if builder is not None and depth >= 1 and top == "start_map":
                builder.event(event, value)
    except ijson.JSONError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{where}: not JSON ({reason})") from None
    if top != "start_map":
        return None  # not an object: not a sample, as the caller says
    # A key given twice: the last value, as json.loads has it.
    return {name: b.value for name, b in built.items() if b is not None}


def epochs_of(fields: dict[str, Any]) -> int:
    config = fields["eval"].get("config")
    epochs = config.get("epochs") if isinstance(config, dict) else None
    return epochs if isinstance(epochs, int) and not isinstance(epochs, bool) else 1


def _task_name(fields: dict[str, Any], path: Path) -> str:
    task = fields["eval"].get("task")
    return task if isinstance(task, str) and task else path.stem


def _record_or_unscorable(
    path: Path, where: str, sample: Any, several_epochs: bool, task: str, qualify_ids: bool
) -> SavedRecord | UnscorableRecord:
    try:
        return _record(where, sample, several_epochs, task, qualify_ids)
    except NotScorable as exc:
        return unscorable(exc, path)


def _record(where: str, sample: Any, several_epochs: bool, task: str, qualify_ids: bool) -> SavedRecord:
    if not isinstance(sample, dict) or "id" not in sample:
        raise InputError(f"{where}: not an inspect_ai sample (no id)")
    sample_id, epoch = sample["id"], _epoch(sample, where)
    task_id = f"{task}/{sample_id}" if qualify_ids else str(sample_id)
    where = f"{where} (sample {task_id}, epoch {epoch})" if several_epochs else f"{where} (sample {task_id})"
    target = sample.get("target")
    if isinstance(target, list):
        if len(target) != 1:
            raise NotScorable(task_id, where, f"{len(target)} targets; only single-answer questions can be scored")
        target = target[0]
    metadata = sample.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    category = metadata.get("category", metadata.get("subject"))
    mapping = tool_mapping(TOOL)
    built = mapping.task(
        HarnessRecord(
            where,
            task_id,
            sample,
            question=sample["input"] if isinstance(sample.get("input"), str) else "",
            category=category if isinstance(category, str) and category else task,
            prompt=_first_user_text(sample.get("messages")),
            gold=target,
        )
    )
    previous = _previous(sample.get("scores"), mapping.extracted)
    return SavedRecord(built, _sample(task_id, epoch - 1, sample), previous, {})


def _epoch(sample: dict[str, Any], where: str) -> int:
    """The sample's epoch: inspect_ai counts them from 1 (a sample without one is of epoch 1)."""
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise InputError(f"{where}: epoch {epoch!r} is not an inspect_ai epoch (a whole number from 1)")
    return epoch


def _sample(task_id: str, index: int, sample: dict[str, Any]) -> Sample:
    """The epoch's output as sample `index` of the task (the epoch less one)."""
    output = sample.get("output")
    output = output if isinstance(output, dict) else {}
    error = sample.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        first = str(message).strip().splitlines()[0] if str(message).strip() else "no message"
        return failed_sample(task_id, f"inspect_ai recorded an error: {first}", index)
    choices = output.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return failed_sample(task_id, "inspect_ai recorded no output", index)
    message = choices[0].get("message")
    message = message if isinstance(message, dict) else {}
    content, reasoning = _split_blocks(message.get("content"))
    stop = choices[0].get("stop_reason")
    time = output.get("time")
    return Sample(
        task_id=task_id,
        sample=index,
        content=content,
        reasoning=reasoning,
        reasoning_field="reasoning" if reasoning is not None else None,
        finish_reason=_FINISH.get(stop, stop) if isinstance(stop, str) else None,
        usage=_usage(output.get("usage")),
        model=output["model"] if isinstance(output.get("model"), str) else None,
        latency_s=float(time) if isinstance(time, int | float) and not isinstance(time, bool) else None,
    )


def _split_blocks(content: Any) -> tuple[str, str | None]:
    """The visible text and the reasoning of a message: a string is all content; of a list of blocks, the
    `text` blocks are the content and the `reasoning` blocks (unless redacted: then it is not text) the
    reasoning."""
    if isinstance(content, str):
        return content, None
    texts: list[str] = []
    thoughts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "reasoning" and not block.get("redacted") and isinstance(block.get("reasoning"), str):
            thoughts.append(block["reasoning"])
    return "\n".join(texts), "\n".join(thoughts) if thoughts else None


def _first_user_text(messages: Any) -> str | None:
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            text, _ = _split_blocks(message.get("content"))
            return text
    return None


def _usage(usage: Any) -> dict[str, Any] | None:
    """inspect_ai's usage under the OpenAI names this project's token counts read, its own fields kept."""
    if not isinstance(usage, dict):
        return None
    named = {"prompt_tokens": usage.get("input_tokens"), "completion_tokens": usage.get("output_tokens"),
             "total_tokens": usage.get("total_tokens")}  # fmt: skip
    if isinstance(usage.get("reasoning_tokens"), int):
        named["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning_tokens"]}
    return {**usage, **{k: v for k, v in named.items() if v is not None}}


def _verdict(value: Any) -> bool | None:
    if not isinstance(value, str):
        return verdict_of(value)
    word = value.strip()
    if word in _VALUES or word.lower() in _VALUES:
        return _VALUES.get(word, _VALUES.get(word.lower()))
    try:
        return verdict_of(float(word))
    except ValueError:
        return None


def _previous(scores: Any, extracted: Callable[[Any], str | None]) -> dict[str, Any]:
    """The scorer's decision: `choice` when the sample has it, else the first scorer."""
    if not isinstance(scores, dict) or not scores:
        return {"tool": TOOL}
    name = PREFERRED_SCORER if PREFERRED_SCORER in scores else next(iter(scores))
    score = scores[name] if isinstance(scores[name], dict) else {}
    value, answer = score.get("value"), score.get("answer")
    correct = _verdict(value)
    return {
        "tool": TOOL,
        "scorer": name,
        "extraction_method": f"inspect {name}",
        "extracted_final_answer": extracted(answer),
        "tool_answer": answer,
        "value": value,
        "correct": correct,
    }

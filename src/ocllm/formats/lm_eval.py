"""Reader of lm-evaluation-harness sample logs: `samples_<task>_<timestamp>.jsonl`, written by `--log_samples`.

Each line is one (doc, filter): the doc as the task saw it, the prompt (`arguments`), the model's response
(`resps`), the filter's extraction (`filtered_resps`) and its per-sample metric (`exact_match`, `acc`).
A task with several filters (GPQA's `strict-match` and `flexible-extract`) writes one line per filter, all
of one filter's docs before the next filter's, so a doc's lines are far apart in the file. A first pass
notes where each doc's lines are; the second reads them doc by doc. Memory holds positions, never responses.

lm-eval keeps only the text after its think-end token (all of it when that token never came), and no
reasoning field: what is scored is that text, split by rule 1 where it still holds `<think>` tags.

A task run with lm-eval's `repeats: k` asks each doc's request k times, and the line's `resps` holds the k
responses ([[r1, ..., rk]]): each is a sample of the doc's one task (sample i is the i-th response). The filters
reduce the k responses (`take_first`, `majority_vote`, `take_first_k`) before the metric scores the doc once, so
the tool's verdict is the task's, not any one sample's: it is kept under `previous` of every sample, marked
`verdict_of: "task"` with `repeats: k`. A doc of one response reads as it always did.

A doc this scorer cannot score (one option, no options to be found, no response text) is reported as
unscorable, with why, and the other docs are read; a line that is not an lm-eval line refuses the file.

Which room's task a doc is, and how its fields become that task and `previous`, is the rooms'
(`TaskType.lm_eval`, scoring/other_harnesses.py): multiple-choice docs the MCQ room's, the math tasks (gsm8k,
minerva_math, aime and their variants) the math room's, ifeval (and docs that are IFEval's rows) the instructions
room's. This reader reads the lines, the filters and the responses."""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.formats.harness_records import lm_eval_mappings, unscorable
from ocllm.formats.records import SavedRecord
from ocllm.models import Sample, Task
from ocllm.scoring.other_harnesses import LmEvalDoc, LmEvalMapping, NotScorable, first_item

TOOL = "lm-eval"
EXPECTED = "an lm-eval samples file (samples_<task>_<timestamp>.jsonl, written by --log_samples)"
DEFAULT_FILTER = "flexible-extract"
NO_FILTER = "none"  # lm-eval's name for a task without filters; also used here for a line that names none
NOTICE = (
    "lm-eval's sample files hold no reasoning field: what is scored is the response lm-eval kept (the text "
    "after its think-end token, or all of it when that never came); <think> tags still in it are split by rule 1"
)
REPEATS_NOTICE = (
    "lm-eval repeats: each of a doc's responses is a sample of its task; lm-eval's filter reduced them (take_first, "
    "majority_vote) and its metric scored the doc once, so that verdict is the task's, kept under previous of every "
    "sample (verdict_of: task), and changed decisions set each sample against it"
)
_TIMESTAMP = re.compile(r"_\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?$")


class _Line(NamedTuple):
    number: int
    offset: int
    filter: str


class _Index:
    """Where each doc's lines are: per line its offset, number and filter in arrays (a few dozen bytes a line,
    not an object each), chained doc by doc, newest first; a doc's first line is found by its id."""

    def __init__(self) -> None:
        self.head: dict[Any, int] = {}  # doc_id -> its latest line's slot, in first-seen order of doc_id
        self.offsets = array("q")
        self.numbers = array("q")
        self.filters = array("I")  # index into self.names
        self.earlier = array("q")  # the slot of the doc's line before this one, or -1
        self.names: list[str] = []
        self._name_index: dict[str, int] = {}

    def add(self, doc_id: Any, number: int, offset: int, name: str) -> bool:
        """Note a line; False when the doc already has a line of this filter."""
        if any(line.filter == name for line in self.lines(doc_id)):
            return False
        if name not in self._name_index:
            self._name_index[name] = len(self.names)
            self.names.append(name)
        self.offsets.append(offset)
        self.numbers.append(number)
        self.filters.append(self._name_index[name])
        self.earlier.append(self.head.get(doc_id, -1))
        self.head[doc_id] = len(self.offsets) - 1
        return True

    def lines(self, doc_id: Any) -> list[_Line]:
        """The doc's lines, in file order."""
        found = []
        slot = self.head.get(doc_id, -1)
        while slot >= 0:
            found.append(_Line(self.numbers[slot], self.offsets[slot], self.names[self.filters[slot]]))
            slot = self.earlier[slot]
        return found[::-1]


def files_in(folder: Path) -> list[Path]:
    return sorted(folder.rglob("samples_*.jsonl"))


def repeats_of(results: dict[str, Any], task: str) -> int:
    """The `repeats` the task's config in an lm-eval results file names (1 where it names none)."""
    configs = results.get("configs")
    config = configs.get(task) if isinstance(configs, dict) else None
    repeats = config.get("repeats") if isinstance(config, dict) else None
    return repeats if isinstance(repeats, int) and not isinstance(repeats, bool) else 1


def task_name(path: Path) -> str:
    """The lm-eval task a samples file belongs to: its name between `samples_` and the timestamp."""
    stem = path.name.removesuffix(".jsonl")
    return _TIMESTAMP.sub("", stem.removeprefix("samples_")) or stem


def task_of(task_id: str) -> str | None:
    """The lm-eval task a task id of this reader is of: ids are `<task>/<doc_id>`, the task named by its file."""
    task, slash, _ = task_id.partition("/")
    return task if slash and task else None


def read(
    path: Path, filter_name: str | None = None, qualify_ids: bool = False
) -> Iterator[SavedRecord | UnscorableRecord]:
    """The file's docs as tasks, in the order they first appear, each with the filter chosen for `previous`:
    `filter_name`, else `flexible-extract` when the file has it, else the file's first filter."""
    index = _index(path)
    if filter_name is not None and filter_name not in index.names:
        raise InputError(f"{path}: no line has filter {filter_name!r} (its filters: {', '.join(index.names)})")
    # One filter for the whole file, so that the tool's accuracy here is one lm-eval reported.
    filter_name = filter_name or (DEFAULT_FILTER if DEFAULT_FILTER in index.names else index.names[0])
    task = task_name(path)
    with open(path, "rb") as fh:
        for doc_id in index.head:
            parsed = {line.filter: (line.number, _parse_at(fh, path, line)) for line in index.lines(doc_id)}
            yield from _records(path, task, doc_id, parsed, filter_name)


def _index(path: Path) -> _Index:
    """Where each doc's lines are. Every line is parsed once here, so that a bad line is refused, with its
    number, before the first task is scored."""
    index = _Index()
    try:
        with open(path, "rb") as fh:
            offset = 0
            for number, raw in enumerate(fh, start=1):
                if raw.strip():
                    row = _parse(path, number, raw)
                    doc_id, name = row["doc_id"], _filter(row)
                    if not index.add(doc_id, number, offset, name):
                        raise InputError(f"{path}: line {number}: doc_id {doc_id!r} with filter {name!r} again")
                offset += len(raw)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not index.head:
        raise InputError(f"{path}: empty: not {EXPECTED}")
    return index


def _parse(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    try:
        row = _decoded(raw)
    except UnicodeDecodeError:
        raise InputError(f"{path}: line {number}: not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        what = f"not {EXPECTED}" if number == 1 else "not a JSON line"
        raise InputError(f"{path}: line {number}: {what} ({reason})") from None
    if isinstance(row, list) and number == 1:
        raise InputError(
            f"{path}: line 1: a JSON array, as lm-eval before 0.4.2 wrote its samples; only the JSON Lines files "
            "of later versions are read (samples_<task>_<timestamp>.jsonl)"
        )
    if not isinstance(row, dict) or "doc_id" not in row or "resps" not in row:
        # The first line says whether this is such a file at all; a later one is a damaged line.
        what = f"not {EXPECTED}" if number == 1 else "not an lm-eval sample line"
        raise InputError(f"{path}: line {number}: {what} (no doc_id and resps)")
    if not _generated(row):
        raise InputError(
            f"{path}: line {number}: a log-likelihood task (lm-eval scored the options by their probabilities, "
            "so there is no generated text to re-score); only generative tasks can be audited"
        )
    doc_id = row["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, int | str):
        raise InputError(f"{path}: line {number}: doc_id {doc_id!r} is neither a number nor text")
    return row


def _decoded(raw: bytes) -> Any:
    """The line's JSON: msgspec reads a plain UTF-8 line in a third of json's time (issue 45: each line is read
    twice); a line it refuses (a lone surrogate's escape, NaN, a UTF-8 BOM, bytes not UTF-8) is json's to read,
    or to refuse with json's words, as it always was."""
    try:
        return _DECODER.decode(raw)
    except msgspec.DecodeError:
        return json.loads(raw)


_DECODER = msgspec.json.Decoder()


def _generated(row: dict[str, Any]) -> bool:
    """A generate_until line: one request (`resps` is [[text]]). A log-likelihood line holds one request per
    option, each answered by a [log-likelihood, is-greedy] pair (written as strings)."""
    resps = row.get("resps")
    arguments = row.get("arguments")
    if isinstance(arguments, dict) and "gen_args_1" in arguments:
        return False
    return (
        isinstance(resps, list)
        and len(resps) == 1
        and isinstance(resps[0], list)
        and (not resps[0] or isinstance(resps[0][0], str))
    )


def _parse_at(fh: Any, path: Path, line: _Line) -> dict[str, Any]:
    fh.seek(line.offset)
    return _parse(path, line.number, fh.readline())


def _filter(row: dict[str, Any]) -> str:
    name = row.get("filter")
    return name if isinstance(name, str) and name else NO_FILTER


def _records(
    path: Path, task: str, doc_id: Any, lines: dict[str, tuple[int, dict[str, Any]]], chosen: str
) -> Iterator[SavedRecord | UnscorableRecord]:
    """A doc's samples: one per response its request was answered with (several with `repeats`), each an
    UnscorableRecord where this scorer cannot score it, naming the response."""
    task_id = f"{task}/{doc_id}"
    if chosen not in lines:
        raise InputError(
            f"{path}: doc {doc_id!r} has no line of filter {chosen!r} (it has: {', '.join(lines)}); choose one "
            "every doc has with --filter"
        )
    number, row = lines[chosen]
    responses = row["resps"][0]  # the doc's one request's responses (a generate_until line: _generated)
    if len(responses) <= 1:  # one response (repeats: 1), or none
        places = [f"{path}: line {number} (doc {doc_id!r})"]
    else:
        places = [f"{path}: line {number} (doc {doc_id!r}, resps[0][{i}])" for i in range(len(responses))]
    for index, where in enumerate(places):
        try:
            yield _record(where, task, task_id, lines, chosen, responses, index)
        except NotScorable as exc:
            yield unscorable(exc, path)


def _record(
    where: str,
    task: str,
    task_id: str,
    lines: dict[str, tuple[int, dict[str, Any]]],
    chosen: str,
    responses: list[Any],
    index: int,
) -> SavedRecord:
    """Sample `index` of the doc: its `index`-th response, with the chosen filter's verdict on the doc."""
    _, row = lines[chosen]
    response = responses[index] if responses else None
    if not isinstance(response, str):
        what = "resps[0][0]" if len(responses) <= 1 else "it"
        raise NotScorable(task_id, where, f"{what} is not the text of a response")
    doc = LmEvalDoc(where, task_id, task, lines, chosen, responses, index, _prompt(row.get("arguments")))
    built, previous = _read(doc)
    sample = Sample(task_id=built.id, sample=index, content=response)
    return _of_the_task(SavedRecord(built, sample, previous, {}), len(responses))


def _read(doc: LmEvalDoc) -> tuple[Task, dict[str, Any]]:
    """The doc read by the room it is of, asked in the rounds scoring/other_harnesses.py says: a room claiming the doc
    by its fields, then the task by its name, then the room that reads any doc it finds its fields in, and only
    when that one found nothing, a room taking the doc by its fields after all."""
    mappings = lm_eval_mappings()
    fields = doc.doc
    rounds: tuple[Callable[[LmEvalMapping], bool], ...] = (
        lambda m: m.claims_doc(fields),
        lambda m: m.claims_task(doc.task),
    )
    for claims in rounds:
        claimed = next((m for m in mappings if claims(m)), None)
        if claimed is not None:
            return claimed.read(doc)
    found_nothing: NotScorable | None = None
    for mapping in mappings:
        if mapping.reads_any:
            try:
                return mapping.read(doc)
            except NotScorable as exc:
                found_nothing = exc
            break
    after_all = next((m for m in mappings if m.may_claim_doc(fields)), None)
    if after_all is not None:
        return after_all.read(doc)
    raise found_nothing or NotScorable(doc.task_id, doc.where, "no task type reads this doc")


def _of_the_task(record: SavedRecord, repeats: int) -> SavedRecord:
    """With several responses, the tool's verdict is on the doc (its filter reduced them first), not on this
    sample: `previous` says so. One response: `previous` as it always was."""
    if repeats > 1:
        record.previous.update(verdict_of="task", repeats=repeats)
    return record


def _prompt(arguments: Any) -> str | None:
    """The prompt sent: `arguments.gen_args_0.arg_0` (older versions: `arguments[0][0]`), a string or a
    JSON-encoded chat (with --apply_chat_template), of which the last user message is the prompt."""
    if isinstance(arguments, dict):
        first = arguments.get("gen_args_0")
        value = first.get("arg_0") if isinstance(first, dict) else None
    else:
        value = first_item(arguments)
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, str):
        return None
    if value.lstrip().startswith("["):
        try:
            chat = json.loads(value)
        except ValueError:
            return value
        users = [m.get("content") for m in chat if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1]
    return value

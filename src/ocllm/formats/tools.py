"""Other tools' result files, read for `ocllm rescore --from FORMAT FILE...`: lm-evaluation-harness sample
logs, the MMLU-Pro scripts' result lists, inspect_ai logs. Each format is one module; this one names them,
finds their files in folders, and reads several files as one run, refusing a task id seen twice."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ocllm.errors import InputError
from ocllm.formats import inspect_log, lm_eval, mmlu_pro_results
from ocllm.formats.records import RunMeta, SavedRecord


class ToolFormat(NamedTuple):
    name: str  # as given to --from
    tool: str  # what the tool is called in the console and the audit
    files_in: Callable[[Path], list[Path]]  # the format's files in a folder given instead of a file
    read: Callable[[Path, str | None], Iterator[SavedRecord]]  # a file's records (the filter: lm-eval only)
    describe: Callable[[list[Path]], dict[str, Any]]  # run-level facts (model, task) from the files
    notices: tuple[str, ...] = ()  # what a reader must know about every file of this format


class ToolRun(NamedTuple):
    format: ToolFormat
    files: list[Path]
    meta: RunMeta
    records: Iterator[SavedRecord]
    notices: list[str]


def _lm_eval_facts(files: list[Path]) -> dict[str, Any]:
    """The model, from the results file lm-eval writes beside its sample files with the same timestamp."""
    for path in files:
        stamp = path.name.removesuffix(".jsonl").removeprefix(f"samples_{lm_eval.task_name(path)}")
        results = path.with_name(f"results{stamp}.json")
        try:
            data = json.loads(results.read_text(encoding="utf-8")) if stamp and results.is_file() else None
        except (OSError, ValueError):
            continue  # only a label: the samples are read whatever this file holds
        if isinstance(data, dict):
            config = data.get("config") if isinstance(data.get("config"), dict) else {}
            model = data.get("model_name") or config.get("model_args") or config.get("model")
            if isinstance(model, str) and model:
                return {"model": model}
    return {}


def _inspect_facts(files: list[Path]) -> dict[str, Any]:
    fields = inspect_log.header(files[0])
    spec = fields["eval"]
    facts = {"model": spec.get("model"), "suite": spec.get("task")}
    return {key: value for key, value in facts.items() if isinstance(value, str) and value}


def _no_facts(files: list[Path]) -> dict[str, Any]:
    return {}


FORMATS: dict[str, ToolFormat] = {
    "lm-eval": ToolFormat("lm-eval", "lm-eval", lm_eval.files_in, lm_eval.read, _lm_eval_facts, (lm_eval.NOTICE,)),
    "mmlu-pro": ToolFormat(
        "mmlu-pro",
        "MMLU-Pro script",
        mmlu_pro_results.files_in,
        lambda path, _filter: mmlu_pro_results.read(path),
        _no_facts,
    ),
    "inspect": ToolFormat(
        "inspect", "inspect_ai", inspect_log.files_in, lambda path, _filter: inspect_log.read(path), _inspect_facts
    ),
}


def read_tool_files(name: str, paths: list[Path], filter_name: str | None = None) -> ToolRun:
    """Every file (a folder stands for the format's files in it) as one run, its records one at a time."""
    fmt = FORMATS[name]
    if filter_name is not None and name != "lm-eval":
        raise InputError(f"--filter chooses among lm-eval's filters; {name} files have none")
    files = _expand(fmt, paths)
    meta = RunMeta.from_fields({"run_format": f"{fmt.name} ({fmt.tool})", **fmt.describe(files)})

    def records() -> Iterator[SavedRecord]:
        first_seen: dict[str, Path] = {}
        for path in files:
            for record in fmt.read(path, filter_name):
                earlier = first_seen.get(record.task.id)
                if earlier is not None:
                    where = "twice in it" if earlier == path else f"in {earlier} too"
                    raise InputError(f"{path}: task {record.task.id!r} appears {where}")
                first_seen[record.task.id] = path
                yield record

    return ToolRun(fmt, files, meta, records(), list(fmt.notices))


def _expand(fmt: ToolFormat, paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = fmt.files_in(path)
            if not found:
                raise InputError(f"{path}: a folder with no {fmt.name} files in it")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"{path}: no such file")
    if len({p.resolve() for p in files}) != len(files):
        raise InputError("the same file is given twice")
    return files

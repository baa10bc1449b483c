"""Which files `ocllm import bfcl-multi-turn PATH` reads: BFCL's data folder as published (`bfcl_eval/data`, the
package's root, or question files in it), and what lies beside the question files. The layout:

    BFCL_v4_multi_turn_{base,miss_func,miss_param,long_context}.json   (or the v3 names, BFCL_v3_multi_turn_*)
    possible_answer/<the same name>                                     each question's ground truth, by id
    multi_turn_func_doc/<class's file>.json                             each class's function docs
    ../eval_checker/multi_turn_eval/func_source_code/*.py               the backends (older checkouts: ../bfcl/...)

The question files' rows become tasks (bfcl_tasks.py); the rest is read as the rows need it, once per folder.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow, Folder, ReadRows, Row, RowTask
from ocllm.scoring.tool_use.bfcl_tasks import Context, task_of
from ocllm.scoring.tool_use.environments import bfcl_code

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")  # BFCL's multi-turn group, in its order
PREFIXES = ("BFCL_v4", "BFCL_v3")  # the file names' version, newest first: a folder is read in the newest it holds
QUESTION = re.compile(r"^BFCL_v[34]_multi_turn_[a-z_]+\.json$")
ANSWERS = "possible_answer"
DOCS = "multi_turn_func_doc"
DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json", "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json", "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
}  # fmt: skip
# Where the backends sit from the data folder: the package's (and a checkout since June 2025), then older checkouts'.
_BACKENDS = (Path("..") / bfcl_code.INSIDE_PACKAGE, Path("..", "bfcl") / bfcl_code.INSIDE_PACKAGE)


def layout(paths: list[Path]) -> Folder:
    """The question files the PATHs mean, with everything read beside them; InputError when they are not BFCL's."""
    questions: list[Path] = []
    for path in paths:
        questions.extend(_questions(path))
    besides: list[Path] = []
    for folder in dict.fromkeys(q.parent for q in questions):
        besides.extend(_answers(q) for q in questions if q.parent == folder)
        besides.extend(folder / DOCS / name for name in DOC_FILES.values() if (folder / DOCS / name).is_file())
        besides.extend(backends_of(folder) / f"{name}.py" for name in bfcl_code.FILES)
    return Folder(rows=questions, besides=besides, task=_task_reading)


def _questions(path: Path) -> list[Path]:
    if path.is_file():
        if not QUESTION.match(path.name):
            raise InputError(f"{path}: not a BFCL multi-turn question file (BFCL_v4_multi_turn_<category>.json)")
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: no such file or folder")
    folder = path / "data" if (path / "data" / DOCS).is_dir() else path  # the package's root: its data folder
    for prefix in PREFIXES:
        found = [folder / f"{prefix}_multi_turn_{c}.json" for c in CATEGORIES]
        if any(file.is_file() for file in found):
            return [file for file in found if file.is_file()]
    raise InputError(
        f"{path}: no BFCL multi-turn question files (BFCL_v4_multi_turn_<category>.json, or BFCL_v3_...); "
        "PATH is BFCL's data folder (bfcl_eval/data)"
    )


def _answers(question: Path) -> Path:
    answers = question.parent / ANSWERS / question.name
    if not answers.is_file():
        raise InputError(f"{question}: its possible answers are not beside it ({answers} is missing)")
    return answers


def backends_of(folder: Path) -> Path:
    """The backends' folder beside a data folder; InputError when none holds them (a suite records which code its
    tasks run, so the import needs it)."""
    for relative in _BACKENDS:
        candidate = (folder / relative).resolve()
        if bfcl_code.read_sources(candidate) is not None:
            return candidate
    raise InputError(
        f"{folder}: BFCL's backends (eval_checker/multi_turn_eval/func_source_code/) are not beside this data folder; "
        "import from bfcl_eval/data of an installed bfcl-eval or of a gorilla checkout"
    )


def origin_of(backends: Path) -> str:
    """Where the suite's backends come from, in words: the bfcl-eval release when they are an installed package's."""
    package = backends.parents[len(bfcl_code.INSIDE_PACKAGE.parts) - 1]
    releases = sorted(package.parent.glob(f"{package.name}-*.dist-info"))
    if package.name == "bfcl_eval" and len(releases) == 1:
        return "bfcl-eval " + releases[0].name.removeprefix("bfcl_eval-").removesuffix(".dist-info")
    return "a copy of BFCL's code"


def _task_reading(read: ReadRows) -> RowTask:
    contexts: dict[Path, Context] = {}

    def task(row: Row, seed: int, seen: Counter[str]) -> Task:
        if row.file not in contexts:
            contexts[row.file] = _context(row.file, read)
        return task_of(row, contexts[row.file])

    return task


def _context(question: Path, read: ReadRows) -> Context:
    folder = question.parent
    backends = backends_of(folder)
    sources = bfcl_code.read_sources(backends)
    assert sources is not None  # backends_of found them
    docs: dict[str, list[dict[str, Any]]] = {}
    for name, file in DOC_FILES.items():
        if (folder / DOCS / file).is_file():
            docs[name] = [row.fields for row in read(folder / DOCS / file)]
    return Context(
        answers=_answers_by_id(read(_answers(question))),
        docs=docs,
        parameters={name: signatures(sources[module], name) for name, module in bfcl_code.CLASS_MODULES.items()},
        backends={"sha256": bfcl_code.digest_of(sources), "from": origin_of(backends)},
    )


def _answers_by_id(rows: Iterable[Row]) -> dict[str, tuple[str, Any]]:
    answers: dict[str, tuple[str, Any]] = {}
    for row in rows:
        bfcl_id = row.fields.get("id")
        if not isinstance(bfcl_id, str) or not isinstance(row.fields.get("ground_truth"), list):
            raise InputError(f"{row.where()}: not a BFCL possible answer (an 'id' and a 'ground_truth' list)")
        if bfcl_id in answers:
            raise InputError(f"{row.where()}: id {bfcl_id!r} answered twice (first at {answers[bfcl_id][0]})")
        answers[bfcl_id] = (row.where(), row.fields["ground_truth"])
    return answers


def signatures(source: bytes, class_name: str) -> dict[str, list[str]]:
    """Each public method of the class, with its parameters in the order its signature gives them: what names a
    ground truth's positional arguments (the docs' order differs: TravelAPI.purchase_insurance). Read from the
    source, never run."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {
                item.name: [argument.arg for argument in item.args.args[1:]]
                for item in node.body
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
            }
    raise BadRow(f"BFCL's backends define no class {class_name}")

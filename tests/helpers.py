"""Helpers several test files share: files written and read back, `ocllm run` through its entry point, progress
that prints nothing, and the one error line a refused command prints. Tests import them as `from helpers import
...` (pytest puts tests/ on the path, as for conftest and faultserver)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ocllm.cli import main
from ocllm.run.progress import RunProgress


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """One JSON object a line, each line ended (the folder made if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every non-blank line of a JSON Lines file, as written (samples.jsonl, suite.jsonl, ...)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# The time stamp lm-eval writes in its files' names (samples_<task>_<stamp>.jsonl, results_<stamp>.json).
LM_EVAL_STAMP = "2026-12-01T10-00-00.000000"


def lm_eval_samples(folder: Path, task: str, lines: Iterable[Mapping[str, Any]]) -> Path:
    """An lm-eval samples file of `task` in `folder`, named as lm-eval names it."""
    return write_jsonl(folder / f"samples_{task}_{LM_EVAL_STAMP}.jsonl", lines)


def samples_of(run: Path) -> list[dict[str, Any]]:
    """The lines of a run folder's samples.jsonl."""
    return read_jsonl(run / "samples.jsonl")


def write_suite(path: Path, tasks: Iterable[Mapping[str, Any]], **common: Any) -> Path:
    """A suite file: one task a line, `common`'s fields first (a task's own field of the same name wins)."""
    return write_jsonl(path, ({**common, **task} for task in tasks))


def sums(count: int) -> list[dict[str, Any]]:
    """`count` MCQ tasks of two options, "i + 1?" (gold B), category "sums": a suite whose answers never matter."""
    return [
        {"category": "sums", "id": f"q{i}", "type": "mcq", "question": f"{i} + 1?", "options": [str(i), str(i + 1)],
         "answer": "B"}
        for i in range(count)
    ]  # fmt: skip


def run_cli(
    base_url: str,
    out: Path,
    *extra: str,
    suite: str | Path = "smoke",
    model: str = "m",
    concurrency: int | None = None,
) -> int:
    """`ocllm run` through the real entry point, its exit code; `extra` are more flags."""
    args = ["run", "--suite", str(suite), "--base-url", base_url, "--model", model, "--out", str(out)]
    if concurrency is not None:
        args += ["--concurrency", str(concurrency)]
    return main([*args, *extra])


def quiet(label: str, total: int, done: int) -> RunProgress:
    """A run's progress, drawn to nowhere: for run_lane where the lines do not matter."""
    return RunProgress(label, total, done, stream=open(os.devnull, "w"))


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a refused command printed on stderr (anything more fails the test)."""
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith("ocllm: error: "), err
    return said[0]

"""Helpers several test files share: waiting for an event, files written and read back, `ocllm run` through its
entry point, progress that prints nothing, and the one error line a refused command prints. Tests import them as
`from helpers import ...` (pytest puts tests/ on the path, as for conftest and faultserver)."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ocllm.cli import main
from ocllm.run.progress import RunProgress

# How long a test waits for an event that takes well under a second on a quiet machine (a process under way, a
# line written, a child gone): a bound that turns a hang into a failure that says what did not happen, never a
# measure. Generous, because the suite also runs at a load of 50 on 2 cores, beside CPU hogs; within
# pytest-timeout's 300 s, so the test's own message is the one shown.
BACKSTOP_S = 120.0

# A client timeout a test means to fire on a request the server holds (a Hang, a Pause), and never on one it
# answers: an answer from a server on 127.0.0.1 comes well within it at a load of 50, and each request held costs
# the test this long. The held request must be held longer (FaultServer ends a Hang when it closes).
FIRES_ON_A_HELD_REQUEST_S = 5.0


# Tests that load the machine on purpose (CPU hogs, programs and checks run to their CPU-time limits, stress such as
# decompression bombs): one pytest-xdist group, which `--dist loadgroup` (pyproject's addopts) runs on one worker,
# one after another. Each burns a core or more and would slow, and be slowed by, another beside it; side by side
# they stretched a loaded run past its timeouts. Each still runs beside the other worker's lighter tests.
CPU_HEAVY = pytest.mark.xdist_group("cpu_heavy")


def wait_until(condition: Callable[[], object], seconds: float = BACKSTOP_S) -> bool:
    """Poll until the condition holds or the seconds are over (a bound on waiting, never a measured figure)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def interruptible() -> None:
    """A child's preexec_fn: Ctrl-C's default disposition, as a terminal gives it. A shell script's background job
    (`make test &`) starts with SIGINT ignored, and every process inherits that; a test that interrupts a child it
    started (one that is not the ocllm command, which restores it itself) must give it back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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

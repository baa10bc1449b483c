"""The task-type seam changed where MCQ and required-substring decisions are made, not what they are (issue 20).

Each digest below is of the task records (`json.dumps` of the `tasks` list, keys in written order) of a rescore
made by the code before the seam: commit 6443ce3, scorer 1.7.0, via `python -m ocllm rescore` on the same input
and flags. The decisions now must be the same bytes. A later change that alters any of these decisions on purpose
bumps the scorer version and records new digests here, with the reason in its commit.

Since issue 21 each record also says which of its task's samples it is (`sample`, 0 where a task was asked once):
a field added beside the decision, not a change of it. And inspect_ai's epochs are samples of one task (id `q1`,
sample `e - 1`, a task's epochs together) where they were tasks `q1#e` in the order inspect wrote them, epoch by
epoch. `as_before_samples` undoes exactly these two, checking every record has its `sample` (0 where the input
has no repeats), so that the digests stay those of 6443ce3.

Since issue 42 an MCQ record lists the reading steps that marked its statements (`reading_steps`, written where one
did): a field added beside the decision too, which `as_before_samples` takes off as well.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import NO_SHARED_AUDIT

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "fixtures" / "audit"
FIXTURES = ROOT / "tests" / "fixtures"

CASES = {
    "lane_a": ([SHARED / "lane_a_baseline_metrics.json"], [],
               "36c5d946b86996ec25b6689fe38191b229dd598c622653f13c1f927b34c1f8d4"),
    "lane_b": ([SHARED / "lane_b_native_reasoning_metrics.json"], [],
               "3ddc564a54ef85b848ad36d2f4279aada0f4e730c64cb4d96b3509bedcddc085"),
    "lane_b_fallback_strict": ([SHARED / "lane_b_native_reasoning_metrics.json"],
                               ["--allow-reasoning-fallback", "--conflict-policy", "strict"],
                               "c017ae24b8f209419b5645eb325ed8cb39f5de83db4abfc4263974a52d749f61"),
    "lm_eval": (["--from", "lm-eval", FIXTURES / "lm_eval" / "0.4.13" / "sim-baseline"], [],
                "9e31e9e30ed31d76c84b3898e10da5d3ce26065c8bfae0ea184f502c14efb71c"),
    "mmlu_pro": (["--from", "mmlu-pro", FIXTURES / "mmlu_pro" / "evaluate_from_api-2a7ec7e"], [],
                 "4e495b5c86898491a5a8167da4a1993d719108b66fdaeb945a47d02c7d4957ca"),
    "inspect": (["--from", "inspect", *sorted((FIXTURES / "inspect" / "0.3.285").glob("*.eval"))], [],
                "dd580579bca3721a62a546c658d194329bcabf2416293a6341c635f6cefdadd0"),
}  # fmt: skip


@pytest.mark.slow  # ocllm in processes
@pytest.mark.parametrize("name", list(CASES))
def test_decisions_are_the_bytes_they_were_before_the_seam(name: str, tmp_path: Path) -> None:
    inputs, flags, digest = CASES[name]
    paths = [p for p in inputs if isinstance(p, Path)]
    if any(not p.exists() for p in paths):
        if any(SHARED in p.parents for p in paths):
            pytest.skip(NO_SHARED_AUDIT)
        raise AssertionError(f"fixture missing: {paths}")
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, "-m", "ocllm", "rescore", *map(str, inputs), "-o", str(out), *flags],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    tasks = as_before_samples(json.loads(out.read_text(encoding="utf-8"))["tasks"], epochs=name == "inspect")
    assert hashlib.sha256(json.dumps(tasks, ensure_ascii=False).encode()).hexdigest() == digest


LATER_FIELDS = ("reading_steps",)  # written beside the decisions since 6443ce3, as `sample` is


def as_before_samples(tasks: list[dict[str, Any]], *, epochs: bool) -> list[dict[str, Any]]:
    """The records as they were before issue 21: no `sample` field (nor a later one: LATER_FIELDS); with
    `epochs` (an inspect_ai log of several), one task per sample, `<id>#<epoch>`, epoch by epoch; without, every
    record is sample 0."""
    assert all(isinstance(t.get("sample"), int) for t in tasks)
    tasks = [{k: v for k, v in t.items() if k not in LATER_FIELDS} for t in tasks]
    if not epochs:
        assert all(t["sample"] == 0 for t in tasks)
        return [{k: v for k, v in t.items() if k != "sample"} for t in tasks]
    first = {task_id: n for n, task_id in enumerate(dict.fromkeys(t["task_id"] for t in tasks))}
    assert len(first) < len(tasks)  # several samples of a task: the epochs
    before = []
    for task in sorted(tasks, key=lambda t: (t["sample"], first[t["task_id"]])):
        old = {k: v for k, v in task.items() if k != "sample"}
        old["task_id"] = f"{task['task_id']}#{task['sample'] + 1}"
        before.append(old)
    return before

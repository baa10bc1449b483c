"""Without bubblewrap and without a container engine, every code task is sandbox_refused and nothing runs (docs/
scoring/code.md, "The sandbox"): no mode runs a program outside a sandbox. The refusal is the harness's side: kept
out of accuracy, and said in one line with how to fix it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def _record(task_id: str, content: str, canary: Path) -> dict[str, Any]:
    return {
        "task_id": task_id, "category": "code", "task_type": "code", "prompt": "Write f.", "raw_content": content,
        "raw_reasoning": None, "finish_reason": "stop", "correct": True, "extracted_final_answer": None,
        "entry_point": "f", "test": "def check(candidate):\n    assert candidate(1) == 2\n",
    }  # fmt: skip


def test_no_sandbox_means_every_code_task_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    canary = tmp_path / "ran"
    # Each program would leave a file on the host if it ran anywhere but in a sandbox (a sandbox has no tmp_path).
    write = f"open({str(canary)!r}, 'a').write('x')\n"
    tasks = [
        _record("at_import", f"```python\n{write}def f(x):\n    return x + 1\n```", canary),
        _record("in_f", f"```python\ndef f(x):\n    {write}    return x + 1\n```", canary),
        _record("bare", f"{write}def f(x):\n    return x + 1\n", canary),
        _record("prose", "I would rather not.", canary),
    ]
    src = tmp_path / "old.json"
    src.write_text(json.dumps({"run_id": "r", "lane": "A", "summary": {}, "tasks": tasks}))
    out = tmp_path / "out.json"
    env = {**os.environ, "PATH": str(tmp_path / "empty-bin")}  # no bwrap, no podman, no docker
    env.pop("OCLLM_SANDBOX", None)
    done = subprocess.run([sys.executable, "-m", "ocllm", "rescore", str(src), "-o", str(out)], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not canary.exists()
    records = json.loads(out.read_text())["tasks"]
    assert [r["outcome"] for r in records] == ["sandbox_refused"] * 4
    assert all(r["correct"] is None and r["rule"] == "sandbox_refused" for r in records)
    reason = records[0]["sandbox"]["refused"]
    assert "bubblewrap (bwrap) is not installed" in reason and "docker is not installed" in reason
    assert "apt-get install bubblewrap" in reason
    # One line on the console says why and how to fix it.
    said = [line for line in (done.stdout + done.stderr).splitlines() if "bubblewrap" in line]
    assert len(said) == 1 and "apt-get install bubblewrap" in said[0], said

"""The README's examples cannot rot: each task type's suite line runs through `ocllm run` against the simulator,
the README stays short, and every relative link in it leads to a file of the repository (issue 32)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ocllm.scoring import task_types
from ocllm.sim import SimConfig, SimServer

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
# The types that ship: the rooms in ocllm's own scoring package (a test's toy room may be registered beside them).
SHIPPED = [t.name for t in task_types.TASK_TYPES.values() if t.decide.__module__.startswith("ocllm.scoring.")]


def readme_suite_lines() -> list[dict]:
    """The lines of every ```jsonl block of the README, each a task."""
    blocks = re.findall(r"^```jsonl\n(.*?)^```$", README.read_text(encoding="utf-8"), re.M | re.S)
    return [json.loads(line) for block in blocks for line in block.splitlines() if line.strip()]


def test_the_readme_has_one_suite_line_per_task_type() -> None:
    lines = readme_suite_lines()
    assert sorted(line["type"] for line in lines) == sorted(SHIPPED)


def test_every_suite_line_of_the_readme_runs_and_is_decided(tmp_path: Path) -> None:
    lines = readme_suite_lines()
    suite = tmp_path / "readme.jsonl"
    suite.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    with SimServer(SimConfig(suites=(suite,))) as sim:
        proc = subprocess.run(
            [sys.executable, "-m", "ocllm", "run", "--suite", str(suite), "--base-url", sim.base_url,
             "--model", "sim-reasoning", "--out", str(out)],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    decided = {record["task_id"]: record for record in metrics["tasks"]}
    assert sorted(decided) == sorted(line["id"] for line in lines)
    for line in lines:
        record = decided[line["id"]]
        assert record["task_type"] == line["type"], record
        assert record["correct"] in (True, False), record  # decided: not a failed request
        assert not record.get("error"), record


def test_the_readme_is_under_200_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 200


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [t for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert relative, "the README links to its docs"
    missing = [t for t in relative if not (REPO / t.split("#", 1)[0]).is_file()]
    assert not missing, missing


def test_the_readme_command_lines_run_as_printed(tmp_path: Path) -> None:
    # `plan RUN_A RUN_B`, as the commands table showed it, failed for a missing --difference (issue 41): every
    # command line of the table runs as printed, its RUN_A and RUN_B two pilot runs.
    from test_plan import old_harness_run

    from ocllm.cli import main

    a = old_harness_run(tmp_path / "a.json", {f"t{i}": i < 12 for i in range(20)})
    b = old_harness_run(tmp_path / "b.json", {f"t{i}": 2 <= i < 16 for i in range(20)})
    lines = re.findall(r"^\| `(\w[\w-]*)` \| .*?\(`(\1 [^`]*)`", README.read_text(encoding="utf-8"), re.M)
    assert [name for name, _ in lines] == ["plan"]  # the table's one command line with its arguments
    for _, line in lines:
        argv = [{"RUN_A": str(a), "RUN_B": str(b)}.get(word, word) for word in line.split()]
        assert main(argv) == 0, line

"""A toy type added from this folder alone (issue 31, "Done when"): registered, run end to end against the
simulator through the CLI, rescored, compared and reported, with no file of ocllm knowing it."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ocllm import demo
from ocllm.run.lanes import load_lanes
from ocllm.scoring import task_types
from ocllm.scoring.task_type import TaskType
from ocllm.sim import SimConfig, SimServer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORDS = ["apple", "river", "stone", "cloud", "tiger", "lemon"]


@pytest.fixture(scope="module")
def room() -> Iterator[TaskType]:
    """The room, registered by importing it (as OCLLM_TASK_TYPES does in the CLI) for this module's tests only: the
    other tests see the shipped types alone."""
    shout = importlib.import_module("shout")
    yield shout.TASK_TYPE
    task_types.unregister(shout.TASK_TYPE.name)
    for name in [name for name in sys.modules if name == "shout" or name.startswith("shout.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def suite(room: TaskType) -> Path:
    """The room's demo suite, a file of this folder."""
    return Path(room.demo_suite or "")


def ocllm(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, which knows the room only through OCLLM_TASK_TYPES."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(HERE)]),
        "OCLLM_TASK_TYPES": "shout",
    }
    done = subprocess.run([sys.executable, "-m", "ocllm", *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow  # ocllm in processes against the simulator
def test_the_toy_room_runs_rescores_compares_and_reports(suite: Path, tmp_path: Path) -> None:
    config = SimConfig(models={"loud": 1.0, "mumble": 0.0}, suites=(suite,), truncation_rate=0.0)
    with SimServer(config) as server:
        for model in ("loud", "mumble"):
            ocllm("run", "--suite", str(suite), "--base-url", server.base_url, "--model", model,
                  "--out", str(tmp_path / model))  # fmt: skip
    for model, right in (("loud", True), ("mumble", False)):
        metrics = json.loads((tmp_path / model / "metrics.json").read_text(encoding="utf-8"))
        records = metrics["tasks"]
        assert len(records) == len(WORDS)
        assert {r["task_type"] for r in records} == {"shout"}
        assert all(r["correct"] is right for r in records), records
        # The room's own fields and evidence in every record: the task's word, the decision's rule and what it heard.
        assert [r["word"] for r in records] == WORDS
        assert {r["rule"] for r in records} == {"shouted" if right else "not_shouted"}
        assert [r["heard"] for r in records] == [w.upper() if right else w for w in WORDS]
        samples = [json.loads(line) for line in (tmp_path / model / "samples.jsonl").read_text().splitlines()]
        assert all("in capital letters" in s["request"]["messages"][-1]["content"] for s in samples)

    rescored = tmp_path / "rescored.json"
    ocllm("rescore", str(tmp_path / "loud"), "-o", str(rescored))
    again = json.loads(rescored.read_text(encoding="utf-8"))["tasks"]
    assert [(r["task_id"], r["correct"], r["heard"]) for r in again] == [
        (f"shout-{i}", True, w.upper()) for i, w in enumerate(WORDS)
    ]

    ocllm("compare", str(tmp_path / "loud"), str(tmp_path / "mumble"), "-o", str(tmp_path / "cmp"))
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert comparison and (tmp_path / "cmp" / "comparison.html").exists()

    ocllm("report", str(tmp_path / "loud"), "-o", str(tmp_path / "report"))
    page = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "- `shout-0` (✓ correct): heard: APPLE" in page  # the room's evidence, drawn by the report
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "heard" in html and "APPLE" in html


def test_make_demo_would_show_the_room_with_its_own_lanes(suite: Path, tmp_path: Path) -> None:
    """A registered demo suite that no lane group of the demo runs gets two lanes of its own."""
    assert demo.room_suites().count(str(suite)) == 1  # beside the shipped rooms' own (code's demo-code)
    lanes_file = tmp_path / "shout_lanes.toml"
    lanes_file.write_text(demo.ROOM_LANES.format(base_url="http://127.0.0.1:1/v1", suite=suite, name="shout"))
    lanes = load_lanes(lanes_file)
    assert sorted(lanes) == ["shout_baseline", "shout_reasoning"]
    assert {lane.suite for lane in lanes.values()} == {str(suite)}


def test_nothing_outside_this_folder_knows_the_toy_type() -> None:
    """The point of the room: ocllm's sources never name it."""
    named = [p for p in (REPO / "src").rglob("*.py") if "shout" in p.read_text(encoding="utf-8").lower()]
    assert named == []

"""A toy type added from this folder alone (issue 31, "Done when"): registered, run end to end against the
simulator through the CLI, rescored, compared and reported, with no file of ocllm knowing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toy_room
from ocllm.sim import SimConfig, SimServer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORDS = ["apple", "river", "stone", "cloud", "tiger", "lemon"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shout") / "shout.jsonl"
    lines = [
        {"id": f"shout-{i}", "type": "shout", "question": f"Task {i}.", "category": "words", "word": word}
        for i, word in enumerate(WORDS)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def ocllm(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, which knows the room only through OCLLM_TASK_TYPES."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(HERE.parent)]),
        "OCLLM_TASK_TYPES": "toy_room",
    }
    done = subprocess.run([sys.executable, "-m", "ocllm", *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_the_toy_room_runs_rescores_compares_and_reports(suite: Path, tmp_path: Path) -> None:
    assert toy_room.TASK_TYPE.name == "shout"
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


def test_nothing_outside_this_folder_knows_the_toy_type() -> None:
    """The point of the room: ocllm's sources never name it."""
    named = [p for p in (REPO / "src").rglob("*.py") if "shout" in p.read_text(encoding="utf-8").lower()]
    assert named == []

"""A room's prompt is a list of chat messages (issue 31, item 4): a few-shot room defined in the tests
(tests/fewshot_room.py) runs end to end against the simulator over HTTP, its four messages sent as it built them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from fewshot_room import EXAMPLE_ANSWER, FEWSHOT, SYSTEM, decide_registered, registered

from ocllm.analysis.rescore import score_run_dir
from ocllm.models import Sample, as_sent
from ocllm.run.decision_pool import DecisionPool
from ocllm.run.lanes import lane_from_mapping, public_settings, room_settings
from ocllm.run.runner import run_lane
from ocllm.scoring import decide, task_types
from ocllm.scoring.task_type import LaneSetting
from ocllm.sim import SimConfig, SimServer

TASKS = [
    {"id": f"q{n}", "type": "fewshot_mcq", "question": f"Few-shot question {n}: which colour is colour number {n}?",
     "options": [f"colour {n}-{i}" for i in range(4)], "answer": "ABCD"[n % 4], "category": "fewshot"}
    for n in range(6)
]  # fmt: skip


def test_a_few_shot_room_runs_end_to_end_against_the_simulator(tmp_path: Path) -> None:
    suite = tmp_path / "fewshot.jsonl"
    suite.write_text("".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8")
    with registered(), SimServer(SimConfig(suites=[suite])) as sim, DecisionPool(decider=decide_registered) as pool:
        lane = lane_from_mapping(
            "F", {"base_url": sim.base_url, "model": "sim-baseline", "suite": str(suite),
                  "templates": {"fewshot_mcq": "Q: {question}\n{options}\nEnd with FINAL: <letter>."}},
            "test",
        )  # fmt: skip
        result = run_lane(lane, tmp_path / "run", decisions=pool, score=score_run_dir)
        samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
        assert len(samples) == len(TASKS) and all(s.get("error") is None for s in samples)
        for raw in samples:
            task = task_types.task_from(next(t for t in TASKS if t["id"] == raw["task_id"]))
            messages = raw["request"]["messages"]
            # The room's messages, as it built them: its own system message (the lane sets none), the example's
            # two turns, the question through the lane's template for the type.
            assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
            assert messages[0]["content"] == SYSTEM and messages[2]["content"] == EXAMPLE_ANSWER
            assert messages[3]["content"].startswith(f"Q: {task.question}\nA. colour")
            sample = Sample(task_id=task.id, content=raw["content"], request=raw["request"])
            # The prompt a scorer reads is the last user message, not the example's.
            assert as_sent(task, sample).prompt == messages[3]["content"]
            # The simulator found the task by the question of the last user turn and answered it with a letter.
            decision = decide(as_sent(task, sample), sample, lane.policy())
            assert decision.extracted_final_answer in "ABCD" and decision.correct is not None
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    by_type = metrics["summary"]["by_type"]
    assert list(by_type) == ["fewshot_mcq"] and by_type["fewshot_mcq"]["total"] == len(TASKS)
    assert result.summary.total == len(TASKS) and result.summary.errors == 0


def test_every_type_is_recorded_under_templates_and_read_back() -> None:
    with registered():
        lane = lane_from_mapping("F", {"base_url": "http://x/v1", "model": "m"}, "test")
        record = public_settings(lane)
        # Every type under `templates`, each with its default in force, a later one as the six of before (issue 41:
        # a manifest writes only the keys a lanes file uses now).
        in_force = {name: kind.default_template for name, kind in task_types.TASK_TYPES.items()}
        assert record["templates"] == in_force and in_force["fewshot_mcq"] == FEWSHOT.default_template
        assert "prompt_template" not in record
        back = lane_from_mapping("F", {k: v for k, v in record.items() if k != "name"}, "manifest.json")
        assert back.templates["fewshot_mcq"] == FEWSHOT.default_template and public_settings(back) == record


def test_a_room_setting_that_clashes_with_a_lane_key_is_refused() -> None:
    for taken in ("temperature", "math_template", "tool_choice"):  # the lane's own, a key of before, another room's
        clashing = dataclasses.replace(FEWSHOT, lane_settings={taken: LaneSetting(default=0, problem=lambda _: None)})
        with pytest.raises(AssertionError, match=f"declares lane setting '{taken}', which is taken"):
            room_settings([*task_types.TASK_TYPES.values(), clashing])

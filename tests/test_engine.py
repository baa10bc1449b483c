"""The engine seam (run/engine.py): a lane run end to end through a second engine, defined here, that answers from
a dict in this process (no HTTP, no server), with the runner as it is. What it proves: the run directory, the
decisions and the metrics come out of the runner whatever engine made the samples."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import quiet, read_jsonl, write_suite

from ocllm.analysis.rescore import score_run_dir
from ocllm.errors import OcllmError
from ocllm.models import Sample
from ocllm.run.engine import AttemptWatch, Engine, EngineStart, Send
from ocllm.run.engines import engine_for
from ocllm.run.http_engine import HttpEngine
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane

# Question -> what the model answers; a question missing here fails as a request would.
ANSWERS = {
    "What is 2 + 2?": "Four. FINAL: B",
    "Which planet is closest to the Sun?": "FINAL: A",
    "What is the chemical symbol of sodium?": "It is Sd. FINAL: C",  # wrong: Na is D
}
TASKS = [
    ("add", "What is 2 + 2?", ["3", "4", "5", "6"], "B"),
    ("planet", "Which planet is closest to the Sun?", ["Mercury", "Venus", "Earth", "Mars"], "A"),
    ("sodium", "What is the chemical symbol of sodium?", ["So", "Sn", "Sd", "Na"], "D"),
    ("unknown", "What is the airspeed of an unladen swallow?", ["10", "11", "24", "42"], "C"),
]
SUITE = [
    {"id": id_, "type": "mcq", "question": question, "options": options, "answer": gold, "category": "c"}
    for id_, question, options, gold in TASKS
]


class DictEngine:
    """An engine that answers from a dict: the whole of what another engine has to write."""

    def __init__(self, answers: dict[str, str], *, refuse: str | None = None) -> None:
        self.answers = answers
        self.refuse = refuse
        self.events: list[str] = []
        self.bodies: list[dict[str, Any]] = []

    async def check(self) -> EngineStart:
        self.events.append("check")
        if self.refuse is not None:
            raise OcllmError(self.refuse)
        return EngineStart(
            models={"data": [{"id": "dict-model"}]},
            served_model="dict-model",
            servers=[],
            request_settings={"engine_seed": 7},
            notices=["answers come from a dict"],
        )

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Send]:
        self.events.append("open")

        async def send(task_id: str, body: dict[str, Any], watch: Callable[[], AttemptWatch]) -> Sample:
            attempts = watch()
            attempts.sent(1)
            try:
                self.bodies.append(body)
                question = body["messages"][-1]["content"]
                answer = next((text for asked, text in self.answers.items() if asked in question), None)
                if answer is None:
                    return Sample(
                        task_id=task_id, attempts=1, request=body, error="no answer in the dict", error_kind="refused"
                    )
                return Sample(task_id=task_id, content=answer, finish_reason="stop", attempts=1, request=body)
            finally:
                attempts.ended()

        try:
            yield send
        finally:
            self.events.append("closed")

    def figures(self) -> list[dict[str, Any]] | None:
        return None


def lane(suite: Path) -> Lane:
    # The base URL is never asked: the engine given to run_lane is the only thing that answers.
    return Lane(name="dict", base_url="http://127.0.0.1:9/v1", model="dict-model", suite=str(suite), concurrency=2)


def test_a_lane_runs_end_to_end_through_another_engine(tmp_path: Path) -> None:
    engine = DictEngine(ANSWERS)
    assert isinstance(engine, Engine)  # the protocol's methods, checked at run time too
    out = tmp_path / "run"
    said: list[str] = []
    result = run_lane(
        lane(write_suite(tmp_path / "s.jsonl", SUITE)),
        out,
        progress=quiet,
        announce=said.append,
        engine=engine,
        score=score_run_dir,
    )

    assert engine.events == ["check", "open", "closed"]
    assert said == ["answers come from a dict"]
    # Every request carried the lane's prompt and the engine's own request settings, as the HTTP client's would.
    assert len(engine.bodies) == 4
    assert all(body["model"] == "dict-model" and body["engine_seed"] == 7 for body in engine.bodies)

    samples = {s["task_id"]: s for s in read_jsonl(out / "samples.jsonl")}
    assert set(samples) == {"add", "planet", "sodium", "unknown"}
    assert samples["add"]["content"] == "Four. FINAL: B"
    assert "What is 2 + 2?" in samples["add"]["request"]["messages"][-1]["content"]
    assert (samples["unknown"]["error"], samples["unknown"]["error_kind"]) == ("no answer in the dict", "refused")

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "finished_with_errors"  # the failed request, counted apart
    assert manifest["served_model"] == "dict-model"
    assert manifest["server_models"] == {"data": [{"id": "dict-model"}]}
    assert manifest["request_settings"] == {"engine_seed": 7}
    assert manifest["requests"] == 4  # told through the watch, one per request

    # Decided by the runner's scorer and read back from metrics.json: right, right, wrong, and an error apart.
    metrics = json.loads((out / "metrics.json").read_text())
    summary = metrics["summary"]
    assert (summary["total"], summary["correct"], summary["errors"], summary["scored"]) == (4, 2, 1, 3)
    correct = {record["task_id"]: record["correct"] for record in metrics["tasks"]}
    assert correct == {"add": True, "planet": True, "sodium": False, "unknown": None}
    assert (result.summary.correct, result.requests, result.servers, result.model) == (2, 4, [], "dict-model")


def test_retrying_errors_sends_only_the_failed_task_again_through_the_engine(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s.jsonl", SUITE)
    out = tmp_path / "run"
    run_lane(lane(suite), out, progress=quiet, engine=DictEngine(ANSWERS), score=score_run_dir)
    second = DictEngine({**ANSWERS, "airspeed": "FINAL: C"})
    result = run_lane(lane(suite), out, progress=quiet, retry_errors=True, engine=second, score=score_run_dir)
    assert len(second.bodies) == 1 and "airspeed" in second.bodies[0]["messages"][-1]["content"]
    assert (result.ran, result.summary.correct, result.summary.errors) == (1, 3, 0)


def test_an_engine_that_refuses_the_lane_stops_it_before_anything_is_written(tmp_path: Path) -> None:
    engine = DictEngine(ANSWERS, refuse="lane 'dict': the model is not loaded")
    out = tmp_path / "run"
    with pytest.raises(OcllmError, match="the model is not loaded"):
        suite = write_suite(tmp_path / "s.jsonl", SUITE)
        run_lane(lane(suite), out, progress=quiet, engine=engine, score=score_run_dir)
    assert engine.events == ["check"]  # never opened
    assert not (out / "samples.jsonl").exists() and not (out / "manifest.json").exists()


def test_a_lane_gets_the_http_engine_by_default(tmp_path: Path) -> None:
    assert isinstance(engine_for(lane(tmp_path / "s.jsonl")), HttpEngine)

"""The run loop's one shape (issue 10, item 3): tasks in, samples out, through a dispatcher. Another
dispatcher (several endpoints, a managed server) is a different callable, not a different runner."""

from __future__ import annotations

import asyncio
import io

from ocllm.models import Sample
from ocllm.run.execute import Job, execute
from ocllm.run.progress import RunProgress
from ocllm.scoring.mcq.fields import McqTask


def test_every_task_goes_through_the_dispatcher_once_within_the_concurrency() -> None:
    tasks = [McqTask(id=f"t{i}", options=["a", "b"], answer="A") for i in range(25)]
    in_flight, most, finished = 0, 0, []

    async def dispatch(job: Job) -> Sample:
        task = job.task
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001 * (int(task.id[1:]) % 4))  # finish out of order
        in_flight -= 1
        return Sample(task_id=task.id, content=f"FINAL: A ({task.id})")

    def done(job: Job, sample: Sample) -> None:
        assert sample.task_id == job.task.id
        finished.append(job.task.id)

    bar = RunProgress("L", len(tasks), stream=io.StringIO())
    asyncio.run(execute([Job(t) for t in tasks], dispatch, concurrency=4, done=done, progress=bar))
    assert sorted(finished) == sorted(t.id for t in tasks) and len(finished) == 25
    assert most == 4


def test_every_sample_comes_back_marked_with_its_job_s_index() -> None:
    # A dispatcher knows nothing of samples (it sends a request and returns what came back): the loop marks each
    # sample with its job's index, so that k samples of one task are told apart whoever dispatched them.
    task = McqTask(id="t", options=["a", "b"], answer="A")
    marked: list[tuple[int, int]] = []

    async def dispatch(job: Job) -> Sample:
        return Sample(task_id=job.task.id, content="FINAL: A")

    def done(job: Job, sample: Sample) -> None:
        marked.append((job.sample, sample.sample))

    bar = RunProgress("L", 3, stream=io.StringIO())
    asyncio.run(execute([Job(task, i) for i in range(3)], dispatch, concurrency=2, done=done, progress=bar))
    assert sorted(marked) == [(0, 0), (1, 1), (2, 2)]

"""The run loop's one shape (issue 10, item 3): tasks in, samples out, through a dispatcher. Another
dispatcher (several endpoints, a managed server) is a different callable, not a different runner."""

from __future__ import annotations

import asyncio
import io

from ocllm.models import Sample, Task
from ocllm.run.execute import execute
from ocllm.run.progress import RunProgress


def test_every_task_goes_through_the_dispatcher_once_within_the_concurrency() -> None:
    tasks = [Task(id=f"t{i}", type="mcq", options=["a", "b"], answer="A") for i in range(25)]
    in_flight, most, finished = 0, 0, []

    async def dispatch(task: Task) -> Sample:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001 * (int(task.id[1:]) % 4))  # finish out of order
        in_flight -= 1
        return Sample(task_id=task.id, content=f"FINAL: A ({task.id})")

    def done(task: Task, sample: Sample) -> None:
        assert sample.task_id == task.id
        finished.append(task.id)

    bar = RunProgress("L", len(tasks), stream=io.StringIO())
    asyncio.run(execute(tasks, dispatch, concurrency=4, done=done, progress=bar))
    assert sorted(finished) == sorted(t.id for t in tasks) and len(finished) == 25
    assert most == 4

"""The run loop, with one shape: jobs in, samples out, through `dispatch`.

A job is one sample of one task (a lane that asks each task k times has k jobs per task). `dispatch(job) ->
Sample` is the only thing that knows how a job reaches a model (one HTTP endpoint; several endpoints, or a
server the run manages, are other dispatchers, not other loops).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import NamedTuple

import msgspec

from ocllm.models import Sample, Task
from ocllm.run.progress import RunProgress


class Job(NamedTuple):
    """Sample `sample` (0 to samples_per_task - 1) of `task`."""

    task: Task
    sample: int = 0


Dispatch = Callable[[Job], Awaitable[Sample]]
# How often the progress is refreshed while no task finishes.
TICK_S = 1.0


async def execute(
    jobs: Iterable[Job],
    dispatch: Dispatch,
    *,
    concurrency: int,
    done: Callable[[Job, Sample], Awaitable[None] | None],
    progress: RunProgress,
) -> None:
    """Send every job through `dispatch`, at most `concurrency` at a time; `done` is called with each
    finished job and its sample (marked with the job's sample index, whatever dispatched it), in the order they
    finish. When `done` is a coroutine function, the worker awaits it before taking its next job (how the
    runner holds requests back while its scorer catches up)."""
    queue: asyncio.Queue[Job] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)

    async def worker() -> None:
        # A fixed pool of workers rather than one coroutine per task: memory stays flat on suites of
        # any size, and the connection pool is never oversubscribed.
        while not queue.empty():
            job = queue.get_nowait()
            progress.start()
            sample = await dispatch(job)
            if sample.sample != job.sample:
                sample = msgspec.structs.replace(sample, sample=job.sample)
            handled = done(job, sample)
            if inspect.isawaitable(handled):
                await handled

    async def ticker() -> None:
        # Refreshes the progress while nothing finishes: a stalled server shows as time since the last
        # finish and requests in flight, not as silence.
        while True:
            await asyncio.sleep(TICK_S)
            progress.tick()

    ticking = asyncio.create_task(ticker())
    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, queue.qsize()) or 1)))
    finally:
        ticking.cancel()

"""The run loop, with one shape: tasks in, samples out, through `dispatch`.

`dispatch(task) -> Sample` is the only thing that knows how a task reaches a model (one HTTP endpoint
today; several endpoints, or a server the run manages, are other dispatchers, not other loops).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable

from ocllm.models import Sample, Task
from ocllm.run.progress import RunProgress

Dispatch = Callable[[Task], Awaitable[Sample]]
# How often the progress is refreshed while no task finishes.
TICK_S = 1.0


async def execute(
    tasks: Iterable[Task],
    dispatch: Dispatch,
    *,
    concurrency: int,
    done: Callable[[Task, Sample], Awaitable[None] | None],
    progress: RunProgress,
) -> None:
    """Send every task through `dispatch`, at most `concurrency` at a time; `done` is called with each
    finished task and its sample, in the order they finish. When `done` is a coroutine function, the worker
    awaits it before taking its next task (how the runner holds requests back while its scorer catches up)."""
    queue: asyncio.Queue[Task] = asyncio.Queue()
    for task in tasks:
        queue.put_nowait(task)

    async def worker() -> None:
        # A fixed pool of workers rather than one coroutine per task: memory stays flat on suites of
        # any size, and the connection pool is never oversubscribed.
        while not queue.empty():
            task = queue.get_nowait()
            progress.start()
            handled = done(task, await dispatch(task))
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
